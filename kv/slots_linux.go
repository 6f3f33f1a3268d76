package kv

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
