package kv

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/braid-pm/braid/internal/numa"
)

// slotMem owns a mapped slot array; its cleanup unmaps it once the table
// that holds it is gone.
type slotMem struct {
	mem     []byte
	cleanup runtime.Cleanup
	node    int // the NUMA node the kernel bound mem to, -1 none (numa.go)
}

// allocSlots returns n zeroed slots and what owns them (nil: the heap).
// With bind, a mapped array is bound to NUMA node node (mbind) where the
// kernel allows it.
func allocSlots(n int, bind bool, node int) ([]slot, *slotMem) {
	if n < hugeSlots {
		return make([]slot, n), nil
	}
	size := n * int(unsafe.Sizeof(slot{}))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]slot, n), nil
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	m := &slotMem{mem: mem, node: -1}
	if bind && numa.Bind(mem, node) == nil {
		m.node = node
	}
	m.cleanup = runtime.AddCleanup(m, func(b []byte) { _ = unix.Munmap(b) }, mem)
	return unsafe.Slice((*slot)(unsafe.Pointer(unsafe.SliceData(mem))), n), m
}

// boundTo reports whether the array is mapped and bound to node.
func (m *slotMem) boundTo(node int) bool { return m != nil && m.node == node }

// free unmaps the array now (the table replaced it and holds the lock, so
// only a prefetch can still name it, and a prefetch never faults).
func (m *slotMem) free() {
	if m != nil {
		m.cleanup.Stop()
		_ = unix.Munmap(m.mem)
	}
}
