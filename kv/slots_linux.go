package kv

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeSlots is the number of slots from which a table's array is mapped
// outside the Go heap with transparent huge pages (2 MiB: one huge page).
// A table of a few million keys is far larger than the caches, so every
// probe misses; with 4 KiB pages it also misses the TLB (and in a virtual
// machine pays a two-level page walk), which huge pages avoid. The array
// holds no Go pointers, so the garbage collector need not see it.
const hugeSlots = 2 << 20 / int(unsafe.Sizeof(slot{}))

// slotMem owns a mapped slot array; its cleanup unmaps it once the table
// that holds it is gone.
type slotMem struct {
	mem     []byte
	cleanup runtime.Cleanup
}

// allocSlots returns n zeroed slots and what owns them (nil: the heap).
func allocSlots(n int) ([]slot, *slotMem) {
	if n < hugeSlots {
		return make([]slot, n), nil
	}
	size := n * int(unsafe.Sizeof(slot{}))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]slot, n), nil
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	m := &slotMem{mem: mem}
	m.cleanup = runtime.AddCleanup(m, func(b []byte) { _ = unix.Munmap(b) }, mem)
	return unsafe.Slice((*slot)(unsafe.Pointer(unsafe.SliceData(mem))), n), m
}

// free unmaps the array now (the table replaced it and holds the lock, so
// only a prefetch can still name it, and a prefetch never faults).
func (m *slotMem) free() {
	if m != nil {
		m.cleanup.Stop()
		_ = unix.Munmap(m.mem)
	}
}
