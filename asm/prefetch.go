package asm

import "unsafe"

// PrefetchAll asks the CPU to bring the line at each of the n addresses
// stored at ps (an array of n pointers) into all cache levels, PREFETCHT0
// on each, in one call: a scheduler that has collected the next lines of a
// group of operations pays one call for the group instead of one per line
// (Prefetch is a call too; Go code cannot reach the runtime's inlined
// prefetch). It never faults, whatever the addresses are; n <= 0
// prefetches nothing.
func PrefetchAll(ps *unsafe.Pointer, n int) { prefetchAll(unsafe.Pointer(ps), n) }

// PrefetchLines prefetches (PREFETCHT0) every cache line that intersects
// [p, p+n): a node of several lines in one call. It never faults; n <= 0
// prefetches nothing.
func PrefetchLines(p unsafe.Pointer, n int) { prefetchLines(p, n) }
