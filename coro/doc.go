// Package coro hides memory latency by interleaving independent
// operations: each one prefetches the line it needs next and yields, and
// while the line is on its way the others run (van Renen et al.,
// "Building blocks for persistent memory", VLDB Journal 2020, §3.5, on an
// FP-tree; the scheduling is AMAC's, Kocberber et al., VLDB 2015: a slot
// whose operation finished takes the next operation at once, so chains of
// irregular length never leave the group short).
//
// Go has no stackless coroutines, so the fast form is a state machine:
// Ring keeps up to MaxGroup operation states — plain structs holding a
// stage and what the operation carries — in a fixed array, and the
// caller's loop advances them one stage at a time:
//
//	var r coro.Ring[lookup]
//	r.Reset(g, len(keys))
//	for r.Round() {
//		for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
//			if op >= 0 {
//				*s = lookup{key: keys[op], i: op}
//			}
//			if s.step(&r) { // one stage: ends with r.Prefetch(next line), or returns true
//				r.Done()
//			}
//		}
//	}
//
// A switch there is Next's few compares and the caller's switch on the
// stage: no allocation, no interface or indirect call, no goroutine or
// channel (Next and Done are inlined; Round runs once per round). Pull
// runs the same operations written as straight-line code over iter.Pull
// coroutines, which reads better and costs a runtime coroutine switch per
// yield; the benchmarks also run them on goroutines and channels. Ring's
// Prefetch issues one asm.Prefetch call per line; Queue collects up to
// QueueBatch lines and issues them with one asm.PrefetchAll call.
//
// # When interleaving pays
//
// Interleaving trades a switch for a stall: it pays when an operation's
// next access misses the caches and the miss costs much more than a
// switch. A miss to DRAM (or PMem) costs 100 ns and more; a Ring switch a
// few nanoseconds; an iter.Pull switch around a hundred; a goroutine
// handoff over channels several hundred. So only the Ring form can hide a
// DRAM miss, and only when the data really misses: on data that fits in
// the caches the switches are pure overhead (BenchmarkGroup's "small"
// array: no gain at any G). Operations must be independent (lookups of a
// batch, inserts into different places), and each needs enough stages —
// dependent misses — for the overlap to matter.
//
// # How to choose G
//
// G operations in flight overlap up to G misses, so G should cover one
// miss latency with the work of the others: G ≈ 1 + latency / (work per
// stage + switch). It is bounded by the misses a core can have in flight
// (its line fill buffers, about 10 to 24 on current x86 cores) and by
// the caches (G states, and G lines prefetched ahead, must stay cached).
// Past the best G, lines prefetched for late slots are evicted before use
// and the time per operation rises again. Measure: BenchmarkGroup sweeps G
// from 1 to 64 on pointer chasing far larger than the last-level cache
// (README); on the development machine the best G was 10 to 16.
package coro
