package walog_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// benchSize is the region the append benchmarks write into.
const benchSize = 1 << 30

// benchMap maps a forced-PMem region on /dev/shm (the setting libpmem is
// measured in with PMEM_IS_PMEM_FORCE=1), shared by the benchmarks.
func benchMap(b *testing.B) *persist.Region { return structtest.Shared(b, "walog-bench", benchSize) }

var benchSizes = []int{16, 64, 256, 1024, 4096}

// BenchmarkAppend appends entries of one size, each durable on return, to
// a 1 GiB log that wraps when full. The region starts dirty, as after
// earlier passes, so the figures are the steady state: PopLog and Classic
// zero ahead of the tail as they go, RAWL pays its bit packing and flips
// its validity sense at each wrap.
func BenchmarkAppend(b *testing.B) {
	for _, f := range formats {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", f, size), func(b *testing.B) {
				benchAppend(b, f, size, 1, false)
			})
		}
	}
}

// BenchmarkAppendNoChecksum is BenchmarkAppend on the raw formats
// (Options.NoChecksum): the difference is what the CRC-32C costs.
func BenchmarkAppendNoChecksum(b *testing.B) {
	for _, f := range formats {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", f, size), func(b *testing.B) {
				benchAppend(b, f, size, 1, true)
			})
		}
	}
}

// BenchmarkAppendBatch appends batches of 16 entries, one barrier per batch
// (two for Classic); figures are per entry.
func BenchmarkAppendBatch(b *testing.B) {
	for _, f := range formats {
		for _, size := range []int{16, 64, 256} {
			b.Run(fmt.Sprintf("%s/%d", f, size), func(b *testing.B) {
				benchAppend(b, f, size, 16, false)
			})
		}
	}
}

func benchAppend(b *testing.B, f walog.Format, size, batch int, raw bool) {
	r := benchMap(b)
	if err := r.Set(r.Bytes(), 0xa5, persist.NonTemporal); err != nil {
		b.Fatal(err)
	}
	l, err := walog.Create(r, &walog.Options{Format: f, Wrap: true, MaxEntry: 4096, NoChecksum: raw})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close() // the next benchmark creates its log on the same region
	b.Log(r)
	rng := structtest.NewRand(1<<32 | 2)
	p := make([]byte, size)
	for i := range p {
		p[i] = byte(rng.Uint64())
	}
	ps := make([][]byte, batch)
	for i := range ps {
		ps[i] = p
	}
	b.SetBytes(int64(size * batch))
	b.ReportAllocs()
	for b.Loop() {
		if batch == 1 {
			_, err = l.Append(p)
		} else {
			_, err = l.AppendBatch(ps)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds()/1e6, "Mappends/s")
}

// BenchmarkSetAppend appends 64-byte entries from parallel goroutines, each
// to its own member of a set of GOMAXPROCS logs.
func BenchmarkSetAppend(b *testing.B) {
	for _, f := range formats {
		b.Run(f.String(), func(b *testing.B) {
			r := benchMap(b)
			if err := r.Set(r.Bytes(), 0xa5, persist.NonTemporal); err != nil {
				b.Fatal(err)
			}
			n := max(1, runtime.GOMAXPROCS(0))
			parts, err := walog.Split(r, n)
			if err != nil {
				b.Fatal(err)
			}
			s, err := walog.CreateSet(parts, &walog.Options{Format: f, Wrap: true, MaxEntry: 4096})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var mu sync.Mutex
			member := 0
			p := make([]byte, 64)
			b.SetBytes(64)
			b.RunParallel(func(pb *testing.PB) {
				mu.Lock()
				l := s.Log(member % n)
				member++
				mu.Unlock()
				for pb.Next() {
					if _, err := l.Append(p); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRecover measures Open's recovery of a log holding 16 MiB of
// 64-byte entries, closed cleanly: the scan of every entry (checksum,
// popcount or validity bits, sequence numbers) and the check of the free
// space past the tail, then Close. Figures are per recovery; SetBytes is
// the log's used bytes, so MB/s is the scan's rate.
func BenchmarkRecover(b *testing.B) {
	for _, f := range formats {
		b.Run(f.String(), func(b *testing.B) {
			r, used := benchFull(b, f)
			b.SetBytes(int64(used))
			for b.Loop() {
				l, err := walog.Open(r, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIter measures an iteration over the same log (each entry
// checked again as it is read); figures are per entry.
func BenchmarkIter(b *testing.B) {
	for _, f := range formats {
		b.Run(f.String(), func(b *testing.B) {
			r, _ := benchFull(b, f)
			l, err := walog.Open(r, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.SetBytes(64)
			it := l.Iter()
			for b.Loop() {
				if !it.Next() {
					if err := it.Err(); err != nil {
						b.Fatal(err)
					}
					it = l.Iter()
				}
			}
		})
	}
}

// benchFull returns a region holding a closed log of format f, full of
// 64-byte entries (16 MiB of them), and the bytes they use.
func benchFull(b *testing.B, f walog.Format) (*persist.Region, int) {
	r := structtest.Region(b, 16<<20+walog.HeaderSize+64<<10)
	l, err := walog.Create(r, &walog.Options{Format: f})
	if err != nil {
		b.Fatal(err)
	}
	p := make([]byte, 64)
	for {
		if _, err := l.Append(p); err != nil {
			break // full
		}
	}
	used := l.Stats().Used
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return r, used
}
