package asm

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestPrefetchNeverFaults: prefetches of nil, of addresses that are mapped
// nowhere, of every length around the line cut-offs and of non-positive
// lengths return without faulting (a prefetch is only a hint, so there is
// nothing else to observe; the twins do nothing).
func TestPrefetchNeverFaults(t *testing.T) {
	buf := make([]byte, 8192)
	for _, n := range append(cutoffs, -1, 8191) {
		for _, off := range []int{0, 1, 63, 64, 100} {
			if off+max(n, 0) > len(buf) {
				continue
			}
			PrefetchLines(ptr(buf, off), n)
		}
	}
	PrefetchLines(nil, 4096)
	ps := []unsafe.Pointer{nil, ptr(buf, 0), ptr(buf, 4095), ptr(buf, 8191)}
	for n := -1; n <= len(ps); n++ {
		PrefetchAll(&ps[0], n)
	}
	PrefetchAll(nil, 0)
	// Addresses mapped nowhere, kept as integers (the garbage collector
	// must not see them as pointers).
	wild := []uintptr{4096, ^uintptr(0) &^ 63, ^uintptr(0) >> 1}
	PrefetchAll((*unsafe.Pointer)(unsafe.Pointer(&wild[0])), len(wild))
}

// BenchmarkPrefetch compares one Prefetch call per address with one
// PrefetchAll call for the group, on lines already cached (the cost of the
// instructions and calls, not of memory): the measurement behind
// coro.Ring's choice between Prefetch and Queue.
func BenchmarkPrefetch(b *testing.B) {
	buf := make([]byte, 64<<10)
	for _, g := range []int{1, 4, 8, 16, 64} {
		ps := make([]unsafe.Pointer, g)
		for i := range ps {
			ps[i] = ptr(buf, i*997%len(buf))
		}
		b.Run(fmt.Sprintf("each/%d", g), func(b *testing.B) {
			for b.Loop() {
				for _, p := range ps {
					Prefetch(p)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*g), "ns/line")
		})
		b.Run(fmt.Sprintf("all/%d", g), func(b *testing.B) {
			for b.Loop() {
				PrefetchAll(&ps[0], g)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*g), "ns/line")
		})
	}
}
