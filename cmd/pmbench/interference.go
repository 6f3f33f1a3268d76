package main

import (
	"fmt"
	"slices"
)

// Interference (the BRAID "I" property): sequential 64 KiB reads alone,
// then with sequential 64 KiB streaming writers beside them, on separate
// halves of the file. The two runs alternate mixedRounds times, and the
// medians are compared, so that a noisy neighbour hits both alike.
const (
	mixedRounds = 3
	mixedSteps  = 2*mixedRounds + 2 // plus one timed run of each
	mixedSize   = 64 << 10
)

// mixedGroups are the readers and the writers: half of -threads each, at
// least one of each.
func (b *bench) mixedGroups() (readers, writers group) {
	n := b.cfg.threads
	r := max(1, n/2)
	w := max(1, n-r)
	half := len(b.mem) / 2 / mixedSize * mixedSize
	readers = group{op: opRead, pattern: seq, size: mixedSize, threads: r, lo: 0, hi: half}
	writers = group{op: opWriteNT, pattern: seq, size: mixedSize, threads: w, lo: half, hi: len(b.mem)}
	return readers, writers
}

func runMixed(b *bench) error {
	rg, wg := b.mixedGroups()
	var alone, mixed, written, aloneNs, mixedNs, writtenNs []float64
	for range mixedRounds {
		b.prog.step("interference: " + rg.String() + " alone")
		s, err := b.runGroups([]group{rg}, b.cfg.duration, false)
		if err != nil {
			return err
		}
		alone = append(alone, s[0].gbs())
		aloneNs = append(aloneNs, s[0].nsPerOp())

		b.prog.step("interference: " + rg.String() + " + " + wg.String())
		s, err = b.runGroups([]group{rg, wg}, b.cfg.duration, false)
		if err != nil {
			return err
		}
		mixed = append(mixed, s[0].gbs())
		mixedNs = append(mixedNs, s[0].nsPerOp())
		written = append(written, s[1].gbs())
		writtenNs = append(writtenNs, s[1].nsPerOp())
	}
	b.prog.step("interference: latency alone")
	la, err := b.runGroups([]group{rg}, b.latencyDuration(), true)
	if err != nil {
		return err
	}
	b.prog.step("interference: latency with writers")
	lm, err := b.runGroups([]group{rg, wg}, b.latencyDuration(), true)
	if err != nil {
		return err
	}

	pt := func(g group, pattern string, bw, ns []float64, l sample) result {
		r := result{Point: newPoint(g, pattern, median(bw), median(ns))}
		r.timed(l)
		return r
	}
	ra := pt(rg, "alone", alone, aloneNs, la[0])
	rm := pt(rg, "mixed", mixed, mixedNs, lm[0])
	wm := pt(wg, "mixed", written, writtenNs, lm[1])
	b.add(ra, rm, wm)

	tab := &table{
		title: fmt.Sprintf("interference: %s (sequential %s reads) next to %s (sequential %s streaming writes); GB/s: median of %d rounds; latency of one access, timed run: mean, p50, p99 (ns)",
			threadWord(rg.threads, "reader"), byteString(mixedSize), threadWord(wg.threads, "writer"), byteString(mixedSize), mixedRounds),
		header: []string{"", "GB/s", "mean", "p50", "p99"},
		left:   1,
	}
	for _, r := range []struct {
		name string
		res  result
	}{{"reads alone", ra}, {"reads with writers", rm}, {"writers", wm}} {
		tab.row(r.name, gbs(r.res.GBs), nanos(r.res.MeanNs), nanos(r.res.P50Ns), nanos(r.res.P99Ns))
	}
	tab.notes = append(tab.notes, fmt.Sprintf("interference (read GB/s with writers / alone): %.2f", interference(pointsOf(b.results))))
	b.section(tab)
	return nil
}

func threadWord(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func newPoint(g group, pattern string, gbs, ns float64) persistPoint {
	return persistPoint{Op: g.opName(), Pattern: pattern, Size: g.size, Threads: g.threads, GBs: gbs, NsPerOp: ns}
}

// median of xs (not modified); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
