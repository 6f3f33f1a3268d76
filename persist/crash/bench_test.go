package crash_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
)

// BenchmarkCrashImages measures crash images checked per second: one crash
// point (the end of the workload) over a region with 16 dirty words, whose
// 65536 images are all checked by a trivial checker in every iteration.
// The goal is 100,000 images/s for a 64 KiB region.
func BenchmarkCrashImages(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 16 << 20} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: size}}, Points: crash.AtEnd, MaxImages: 1 << 16, RecoveryCrashes: -1}
			if size >= 1<<20 {
				cfg.MaxImages = 1 << 12 // copy-on-write images cost more; keep an iteration short
			}
			wl := func(w *crash.Run) error {
				buf := w.Region("r").Bytes()
				for i := 0; i < 16; i++ {
					buf[i*size/16] = byte(i + 1) // 16 dirty words, spread out
				}
				return nil
			}
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
			b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "images/s")
			b.ReportMetric(float64(images)/float64(b.N), "images/op")
		})
	}
}

// BenchmarkCrashPoint measures the cost of one crash point (finding the
// dirty words, planning, and checking one image) by region size: a
// workload of b.N persisted 8-byte stores with a crash point at every
// fence and MaxImages 1.
func BenchmarkCrashPoint(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20, 16 << 20, 64 << 20} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: size}}, MaxImages: 1, RecoveryCrashes: -1}
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				buf := r.Bytes()
				for i := 0; i < b.N; i++ {
					off := (i * 4096) % size
					persist.Store64(buf[off:], uint64(i))
					if err := r.Persist(buf[off : off+8]); err != nil {
						return err
					}
				}
				return nil
			}
			b.ResetTimer()
			rep, err := crash.Check(cfg, wl, func(img *crash.Image) error { return nil })
			if err != nil || rep.Failed() {
				b.Fatal(err, rep)
			}
		})
	}
}
