package main

import (
	"slices"
)

// A mode is one measurement program of pmbench, chosen with -mode. Each
// mode lives in its own file and registers itself in init, so adding one
// (log appends, page propagation, in-place updates, ...) is a new file and
// nothing else changes:
//
//	func init() { register(mode{name: "log", summary: "...", run: runLog}) }
//
//	func runLog(b *bench) error {
//		b.addSteps(len(sizes))          // progress steps this mode will take
//		logs := ...                     // one log per thread, in b.r
//		for _, size := range sizes {
//			res, err := b.point(group{
//				name: "log-append", pattern: seq, size: size, threads: 1,
//				lo: 0, hi: len(b.mem),
//				access: func(t, off int, buf []byte) error { return logs[t].Append(buf) },
//			})
//			if err != nil {
//				return err
//			}
//			b.add(res)                  // into -json and the profile's points
//			tab.row(...)
//		}
//		b.section(tab)                  // into the printed report
//		return nil
//	}
//
// A mode measures with b.point (bandwidth, mean and latency percentiles of
// one group) or b.runGroups (several groups at once), on the mapped
// region b.r; it records results with b.add and prints through b.section
// and b.note. The device profile is computed from every recorded result
// (summarize), so a mode contributes to it by recording points with the op
// and pattern names summarize reads.
//
// A mode whose points feed the profile's summary sets profile, which
// allows -profile; the others refuse it rather than write a profile of
// zeros. A mode that needs more than minSize bytes (to hold its
// structures, or to defeat the cache) says how many with minSize.
type mode struct {
	name    string
	summary string // one line for -h
	run     func(*bench) error

	profile bool                                // it measures figures of the device profile
	minSize func(*config) (n int64, why string) // nil: the global minSize
}

var modes = map[string]mode{}

// register adds a mode. Two modes with one name are a programming error.
func register(m mode) {
	if _, dup := modes[m.name]; dup {
		panic("pmbench: mode " + m.name + " registered twice")
	}
	modes[m.name] = m
}

// modeNames lists the registered modes, sorted.
func modeNames() []string {
	names := make([]string, 0, len(modes))
	for n := range modes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
