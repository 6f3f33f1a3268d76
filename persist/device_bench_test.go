package persist_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

// BenchmarkDevice runs n goroutines copying 64 KiB chunks into (write) or
// declaring 64 KiB sequential reads of (read) a region emulating
// optane-1dimm, in real time, and reports the bandwidth they got beside
// the profile's at n (profile-GB/s) and the process CPU time per chunk
// (cpu-ns/64KiB: the emulator's own cost, its sleeps, plus the copies).
func BenchmarkDevice(b *testing.B) {
	for _, kind := range []string{"write", "read"} {
		for _, n := range []int{1, 2, 4, 6, 8, 16} {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) { benchDevice(b, kind, n) })
		}
	}
}

func benchDevice(b *testing.B, kind string, n int) {
	d, err := device.Open("optane-1dimm", nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := persist.Anonymous(64<<20, &persist.Options{Device: d})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	const chunk = 64 << 10
	mem := r.Bytes()
	src := make([]byte, chunk)
	b.SetBytes(chunk)
	var next atomic.Int64
	total := int64(b.N)
	cpu := structtest.StartCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for k := next.Add(1); k <= total; k = next.Add(1) {
				off := (int(k)*chunk + i*4096) % (len(mem) - chunk)
				off &^= 255
				if kind == "write" {
					if err := r.Copy(mem[off:off+chunk], src, 0); err != nil {
						b.Error(err)
						return
					}
				} else {
					r.ReadSeq(mem[off : off+chunk])
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	gbs := float64(total*chunk) / float64(el.Nanoseconds())
	curve := d.Profile().Model.Write
	if kind == "read" {
		curve = d.Profile().Model.SeqRead
	}
	b.ReportMetric(gbs, "GB/s")
	b.ReportMetric(device.At(curve, n), "profile-GB/s")
	cpu.Report(b, 1, "64KiB")
}

// BenchmarkDeviceCharge is the emulator's own cost per call, where the
// device never makes the caller sleep (a profile a thousand times faster
// than the copies): a 256-byte Persist and a declared 256-byte random read,
// on a region with the device and without.
func BenchmarkDeviceCharge(b *testing.B) {
	p, _ := device.Shipped("optane-1dimm")
	for _, c := range [][]device.Level{p.Model.SeqRead, p.Model.RandRead, p.Model.Write} {
		for i := range c {
			c[i].GBs *= 1000
		}
	}
	p.Model.ReadNs, p.Model.WriteNs = 0, 0
	d, err := device.New(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, dev := range []*device.Device{nil, d} {
		name := "off"
		if dev != nil {
			name = "on"
		}
		r, err := persist.Anonymous(64<<20, &persist.Options{Device: dev})
		if err != nil {
			b.Fatal(err)
		}
		mem := r.Bytes()
		units := len(mem) / 256
		b.Run("persist-256/"+name, func(b *testing.B) {
			i := 0
			cpu := structtest.StartCPU()
			defer cpu.Report(b, 1, "op")
			for b.Loop() {
				off := (i % units) * 256
				mem[off]++
				if err := r.Persist(mem[off : off+256]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run("read-256/"+name, func(b *testing.B) {
			i := 0
			cpu := structtest.StartCPU()
			defer cpu.Report(b, 1, "op")
			for b.Loop() {
				off := (i % units) * 256
				r.ReadRand(mem[off : off+256])
				i++
			}
		})
		r.Close()
	}
}
