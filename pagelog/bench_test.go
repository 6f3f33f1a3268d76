package pagelog_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
)

// benchData is the payload size of the benchmark stores: 64 Ki pages of 4
// KiB, 16 Ki pages of 16 KiB, larger than the last-level cache.
const benchData = 256 << 20

// benchVariant is one propagation method of BenchmarkPageWrite.
type benchVariant struct {
	name    string
	opts    pagelog.Options
	dirty   int  // > 0: WriteLines with this many dirty lines
	raw     bool // not pagelog: a plain in-place copy, the upper bound
	store64 bool // Packed header word written with Store64+Persist, not a streaming store
	seq     bool // sequential page ids (as PMDK's blk benchmark), not random
}

var benchVariants = []benchVariant{
	// The naive in-place write (persist.Copy of the page to its home, one
	// fence) is not failure-atomic: the upper bound (as in the authors'
	// pmembench code, WriteToNvmComplete), measured in the same run for
	// the ratios.
	{name: "inplace-unsafe", raw: true},
	{name: "cow", opts: pagelog.Options{Layout: pagelog.Packed}},
	{name: "cow-seqpid", opts: pagelog.Options{Layout: pagelog.Packed}, seq: true},
	{name: "cow-crc", opts: pagelog.Options{Layout: pagelog.Packed, PayloadCRC: true}},
	{name: "cow-crc-seqpid", opts: pagelog.Options{Layout: pagelog.Packed, PayloadCRC: true}, seq: true},
	{name: "cow-store64", opts: pagelog.Options{Layout: pagelog.Packed}, store64: true},
	{name: "cow-fence", opts: pagelog.Options{Layout: pagelog.TwoWord, FenceOnly: true}},
	{name: "cow-2word", opts: pagelog.Options{Layout: pagelog.TwoWord}},
	{name: "microlog-4", opts: pagelog.Options{Layout: pagelog.Packed}, dirty: 4},
	{name: "microlog-16", opts: pagelog.Options{Layout: pagelog.Packed}, dirty: 16},
	{name: "checksum", opts: pagelog.Options{Layout: pagelog.Checksum}},
}

// benchStore maps a forced-PMem region on /dev/shm (the setting PMDK is
// compared in, PMEM_IS_PMEM_FORCE=1) and creates a store in it.
func benchStore(b *testing.B, o pagelog.Options) *pagelog.Store {
	b.Helper()
	o.Pages = benchData / o.PageSize
	size, err := pagelog.Footprint(&o)
	if err != nil {
		b.Fatal(err)
	}
	s, err := pagelog.Create(benchRegion(b, size), &o)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchRegion(b *testing.B, size int) *persist.Region { return structtest.MapShm(b, size) }

// BenchmarkPageWrite measures durable page writes of random pages (or
// sequential ones: cow-seqpid, the order of PMDK's pmemblk benchmark in
// bench/pmdk), one writer: Write for the copy-on-write and checksum
// variants, WriteLines with a few dirty lines for the micro log. pages/s
// is the figure to compare with libpmemblk's blocks/s.
func BenchmarkPageWrite(b *testing.B) {
	for _, v := range benchVariants {
		for _, ps := range []int{4096, 16384} {
			b.Run(fmt.Sprintf("%s/%d", v.name, ps), func(b *testing.B) {
				o := v.opts
				o.PageSize = ps
				if v.dirty > 0 {
					o.MicroLogLines = v.dirty
				}
				var s *pagelog.Store
				var raw *persist.Region
				n := uint64(benchData / ps)
				if v.raw {
					raw = benchRegion(b, benchData)
					b.Log(raw)
				} else {
					s = benchStore(b, o)
					pagelog.SetNTHeader(s, !v.store64)
					b.Log(s)
				}
				page := make([]byte, ps)
				for i := range page {
					page[i] = byte(i)
				}
				mask := pagelog.NewLines(ps)
				lines := ps / 64
				for i := 0; i < v.dirty; i++ {
					mask.Set(i * lines / v.dirty) // spread over the page
				}
				x := uint64(0x9e3779b97f4a7c15)
				b.SetBytes(int64(ps))
				next := uint64(0)
				for b.Loop() {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					pid := x % n
					if v.seq {
						pid = next % n
						next++
					}
					page[0] = byte(x)
					var err error
					if raw != nil {
						err = raw.Copy(raw.Bytes()[pid*uint64(ps):(pid+1)*uint64(ps)], page, 0)
					} else if v.dirty > 0 {
						err = s.WriteLines(pid, page, mask)
					} else {
						err = s.Write(pid, page)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			})
		}
	}
}

// BenchmarkWriteLines compares the micro log with copy-on-write for a page
// with d dirty lines spread over it (both through WriteLines): where the
// micro log stops paying is DefaultMicroLogLines.
func BenchmarkWriteLines(b *testing.B) {
	for _, ps := range []int{4096, 16384} {
		for _, method := range []string{"cow", "microlog"} {
			for _, d := range []int{1, 2, 4, 8, 16, 32, 64} {
				b.Run(fmt.Sprintf("%s/%d/%d", method, ps, d), func(b *testing.B) {
					o := pagelog.Options{PageSize: ps, MicroLogLines: -1}
					if method == "microlog" {
						o.MicroLogLines = ps / 64
					}
					s := benchStore(b, o)
					page := make([]byte, ps)
					mask := pagelog.NewLines(ps)
					for i := range d {
						mask.Set(i * (ps / 64) / d)
					}
					n := uint64(s.Pages())
					x := uint64(0x9e3779b97f4a7c15)
					b.SetBytes(int64(ps))
					for b.Loop() {
						x ^= x << 13
						x ^= x >> 7
						x ^= x << 17
						if err := s.WriteLines(x%n, page, mask); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
				})
			}
		}
	}
}

// BenchmarkPageWriteParallel: Write of random pages from GOMAXPROCS
// goroutines (pages on different lanes proceed in parallel).
func BenchmarkPageWriteParallel(b *testing.B) {
	for _, v := range benchVariants {
		if v.dirty > 0 || v.raw {
			continue
		}
		b.Run(v.name+"/4096", func(b *testing.B) {
			o := v.opts
			o.PageSize = 4096
			o.Slots = benchData/4096 + 64
			s := benchStore(b, o)
			n := uint64(s.Pages())
			b.SetBytes(4096)
			var seed atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				page := make([]byte, 4096)
				x := 0x9e3779b97f4a7c15 * seed.Add(1)
				for pb.Next() {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					if err := s.Write(x%n, page); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

// BenchmarkPageRead measures Read of random pages, one reader: a copy out
// of the page's current slot, plus the CRC32C check with payload CRCs (and
// on the Checksum layout).
func BenchmarkPageRead(b *testing.B) {
	for _, v := range []benchVariant{
		{name: "cow", opts: pagelog.Options{Layout: pagelog.Packed}},
		{name: "cow-crc", opts: pagelog.Options{Layout: pagelog.Packed, PayloadCRC: true}},
		{name: "checksum", opts: pagelog.Options{Layout: pagelog.Checksum}},
	} {
		for _, ps := range []int{4096, 16384} {
			b.Run(fmt.Sprintf("%s/%d", v.name, ps), func(b *testing.B) {
				o := v.opts
				o.PageSize = ps
				s := benchStore(b, o)
				n := uint64(s.Pages())
				buf := make([]byte, ps)
				x := uint64(0x9e3779b97f4a7c15)
				b.SetBytes(int64(ps))
				for b.Loop() {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					if err := s.Read(x%n, buf); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			})
		}
	}
}
