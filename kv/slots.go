package kv

import "unsafe"

// hugeSlots is the number of slots from which a table's array is mapped
// outside the Go heap with transparent huge pages (2 MiB: one huge page;
// on Linux, slots_linux.go; elsewhere every array is on the heap).
// A table of a few million keys is far larger than the caches, so every
// probe misses; with 4 KiB pages it also misses the TLB (and in a virtual
// machine pays a two-level page walk), which huge pages avoid. The array
// holds no Go pointers, so the garbage collector need not see it.
const hugeSlots = 2 << 20 / int(unsafe.Sizeof(slot{}))
