package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

func init() {
	register(mode{
		name: "copy",
		summary: "the copy size from which streaming stores beat store+flush (the profile's movnt_threshold), " +
			"and the latency of an 8-byte store + Persist",
		run: func(b *bench) error {
			b.addSteps(copySteps(b))
			return runCopy(b)
		},
		profile: true,
		minSize: cacheMinSize,
	})
}

// The crossover: persist.Copy with NonTemporal against Temporal, one
// thread, sequential destinations, each copy durable on return. The two
// alternate in batches of copyBatch copies (tens of microseconds), and the
// medians of the per-batch times are compared: a batch is rarely
// interrupted, so preemption and noisy neighbours become outliers that the
// median ignores, and slow drifts hit both sides alike.
var copySizes = []int{8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}

const copyBatch = 32

// copySteps is the number of progress steps of runCopy.
func copySteps(b *bench) int {
	if !b.streams() {
		return 2
	}
	return len(copySizes) + 2
}

// streams reports whether Copy can use streaming stores on this region at
// all (not on msync regions).
func (b *bench) streams() bool { return b.r.Info().Mode != persist.ModeMsync }

func runCopy(b *bench) error {
	if b.streams() {
		if err := runCrossover(b); err != nil {
			return err
		}
	} else {
		b.note("streaming stores are not used on an msync region: no copy crossover measured (movnt_threshold 0).")
	}
	return runPersistLatency(b)
}

func runCrossover(b *bench) error {
	var pts []result
	tab := &table{
		title:  fmt.Sprintf("copy crossover: persist.Copy NonTemporal vs Temporal, 1 thread, sequential, durable each (median of batches of %d, ns)", copyBatch),
		header: []string{"size", "nt", "temporal", "nt/temporal", "faster"},
		left:   1,
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, size := range copySizes {
		b.prog.step(fmt.Sprintf("copy crossover %s", byteString(int64(size))))
		// Each side walks its own half, so that neither writes lines the
		// other has just left in (or taken out of) the cache.
		half := len(b.mem) / 2 / maxAccess * maxAccess
		g := group{op: opWriteNT, pattern: seq, size: size, threads: 1, lo: 0, hi: half}
		nt := newWorker(&g, 0, 0, b.r, false, 0)
		gt := group{op: opWriteFlush, pattern: seq, size: size, threads: 1, lo: half, hi: len(b.mem)}
		tp := newWorker(&gt, 1, 0, b.r, false, 0)
		var ntNs, tpNs []float64
		for t0 := time.Now(); time.Since(t0) < b.cfg.duration || len(ntNs) < 3; {
			if err := b.ctx.Err(); err != nil {
				return err
			}
			for _, w := range []*worker{nt, tp} {
				s := time.Now()
				for range copyBatch {
					w.do(w.next())
				}
				ns := float64(time.Since(s).Nanoseconds()) / copyBatch
				if w.err != nil {
					return fmt.Errorf("%v: %w", *w.g, w.err)
				}
				if w == nt {
					ntNs = append(ntNs, ns)
				} else {
					tpNs = append(tpNs, ns)
				}
			}
		}
		a, c := median(ntNs), median(tpNs)
		pts = append(pts,
			result{Point: device.Point{Op: "copy-nt", Pattern: "seq", Size: size, Threads: 1, GBs: float64(size) / a, NsPerOp: a}},
			result{Point: device.Point{Op: "copy-temporal", Pattern: "seq", Size: size, Threads: 1, GBs: float64(size) / c, NsPerOp: c}})
		faster := "temporal"
		if a < c {
			faster = "nt"
		}
		tab.row(byteString(int64(size)), nanos(a), nanos(c), fmt.Sprintf("%.2f", a/c), faster)
	}
	b.add(pts...)
	th := movntThreshold(pointsOf(pts))
	last := copySizes[len(copySizes)-1]
	note := fmt.Sprintf("movnt_threshold: %s (streaming stores at least %.0f%% faster from there up)", byteString(int64(th)), 100*ntMargin)
	if th > last {
		note = fmt.Sprintf("movnt_threshold: %s (streaming stores were not faster up to %s)", byteString(int64(th)), byteString(int64(last)))
	}
	info := b.r.Info()
	tab.notes = append(tab.notes, note, fmt.Sprintf("this run's mapping used streaming stores from %d B (%s)", info.Threshold, info.NT))
	b.section(tab)
	return nil
}

// runPersistLatency measures persist.Store64 of one word plus Persist of
// its line, on consecutive lines and on random ones.
func runPersistLatency(b *bench) error {
	tab := &table{
		title:  "persist: persist.Store64 of 8 bytes + Persist of its line, 1 thread; every access timed: mean, p50, p99 (ns)",
		header: []string{"lines", "mean", "p50", "p99"},
		left:   1,
	}
	for _, pat := range []pattern{seq, rand} {
		res, err := b.point(group{op: opPersist, pattern: pat, size: 8, threads: 1, lo: 0, hi: len(b.mem)})
		if err != nil {
			return err
		}
		b.add(res)
		tab.row(patternWord(pat), nanos(res.MeanNs), nanos(res.P50Ns), nanos(res.P99Ns))
	}
	b.section(tab)
	return nil
}
