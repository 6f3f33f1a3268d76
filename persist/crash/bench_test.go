package crash_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
)

var benchSizes = []struct {
	name string
	size int
}{{"64KiB", 64 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}, {"256MiB", 256 << 20}}

// BenchmarkCrashImages measures crash images checked per second: one crash
// point (the end of the workload) over a region with 16 dirty words, whose
// 65536 images are all checked by a trivial checker in every iteration
// (4096 of them from 1 MiB up, to keep an iteration short). The goal is
// 100,000 images/s for a 64 KiB region.
func BenchmarkCrashImages(b *testing.B) {
	for _, s := range benchSizes {
		size := s.size
		b.Run(s.name, func(b *testing.B) {
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: size}}, Points: crash.AtEnd, MaxImages: 1 << 16, RecoveryCrashes: -1}
			if size >= 1<<20 {
				cfg.MaxImages = 1 << 12
			}
			wl := func(w *crash.Run) error {
				buf := w.Region("r").Bytes()
				for i := 0; i < 16; i++ {
					buf[i*size/16] = byte(i + 1) // 16 dirty words, spread out
				}
				return nil
			}
			images := checkLoop(b, cfg, wl)
			b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
			b.ReportMetric(float64(images)/float64(b.N), "images/op")
		})
	}
}

// BenchmarkCrashPoint measures the cost of one crash point — finding the
// dirty words, planning, and checking one image — by region size: a
// workload of b.N persisted 8-byte stores, a crash point at every fence,
// MaxImages 1. hot: the stores cycle over 16 pages, as a log or a header
// does. all: the workload first writes every page of the region once (not
// timed), the worst case: every page is compared at every crash point.
func BenchmarkCrashPoint(b *testing.B) {
	for _, touched := range []string{"hot", "all"} {
		for _, s := range benchSizes {
			size := s.size
			b.Run(touched+"/"+s.name, func(b *testing.B) {
				cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: size}}, MaxImages: 1, RecoveryCrashes: -1}
				pages := 16
				if touched == "all" {
					pages = size / 4096
				}
				wl := func(w *crash.Run) error {
					r := w.Region("r")
					buf := r.Bytes()
					if touched == "all" {
						for off := 0; off < size; off += 4096 {
							buf[off+8] = 1
						}
						if err := r.Persist(buf); err != nil {
							return err
						}
					}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						off := (i % pages) * 4096
						persist.Store64(buf[off:], uint64(i)+1)
						if err := r.Persist(buf[off : off+8]); err != nil {
							return err
						}
					}
					b.StopTimer()
					return nil
				}
				rep, err := crash.Check(cfg, wl, func(img *crash.Image) error { return nil })
				if err != nil || rep.Failed() {
					b.Fatal(err, rep)
				}
			})
		}
	}
}

// BenchmarkSampledPoint measures one crash point beyond the exhaustive
// bound with the default settings — nothing, everything, every unit alone,
// the covering array, every pair lost together (up to Pairs units), the
// recovery crashes — over a 64 KiB region with n dirty words (written with
// Store64, so none tears) and a trivial check: ns/op is the cost of such a
// crash point, images/op its images.
func BenchmarkSampledPoint(b *testing.B) {
	for _, n := range []int{8, 40, 200, 1000} {
		b.Run(fmt.Sprintf("units=%d", n), func(b *testing.B) {
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 64 << 10}}, Points: crash.AtEnd}
			wl := func(w *crash.Run) error {
				buf := w.Region("r").Bytes()
				for i := 0; i < n; i++ {
					persist.Store64(buf[8*i:], uint64(i)+1)
				}
				return nil
			}
			images := checkLoop(b, cfg, wl)
			b.ReportMetric(float64(images)/float64(b.N), "images/op")
		})
	}
}

// checkLoop runs the crash test of wl with a trivial check in every
// iteration of b and returns the images checked in all.
func checkLoop(b *testing.B, cfg crash.Config, wl func(*crash.Run) error) int {
	ck := func(img *crash.Image) error {
		if img.Region("r").Bytes()[0] > 1 {
			return fmt.Errorf("impossible")
		}
		return nil
	}
	images := 0
	for b.Loop() {
		rep, err := crash.Check(cfg, wl, ck)
		if err != nil || rep.Failed() {
			b.Fatal(err, rep)
		}
		images += rep.Images
	}
	return images
}

// BenchmarkConcurrentPoint measures a crash point of a concurrent
// workload against the same work on one goroutine: b.N persisted 8-byte
// stores (a Store64, a flush and a fence each: three scheduling points)
// over 16 pages of a 64 KiB region, a crash point at every fence,
// MaxImages 1, one schedule; threads=2 splits them between two Run.Go
// goroutines. ns/op is the cost of one such store and its crash point.
func BenchmarkConcurrentPoint(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 64 << 10}}, MaxImages: 1, RecoveryCrashes: -1, Schedules: 1}
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				buf := r.Bytes()
				run := func(id, n int) error {
					for i := 0; i < n; i++ {
						off := ((i*threads+id)%16)*4096 + 8*id
						persist.Store64(buf[off:], uint64(i)+1)
						if err := r.Persist(buf[off : off+8]); err != nil {
							return err
						}
					}
					return nil
				}
				b.ResetTimer()
				if threads == 1 {
					return run(0, b.N)
				}
				for id := range threads {
					w.Go(func() error { return run(id, b.N/threads) })
				}
				w.Wait()
				b.StopTimer()
				return nil
			}
			rep, err := crash.Check(cfg, wl, func(img *crash.Image) error { return nil })
			if err != nil || rep.Failed() {
				b.Fatal(err, rep)
			}
		})
	}
}
