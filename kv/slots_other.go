//go:build !linux

package kv

// slotMem: slot arrays come from the Go heap here.
type slotMem struct{}

func allocSlots(n int, bind bool, node int) ([]slot, *slotMem) { return make([]slot, n), nil }

func (m *slotMem) free() {}

func (m *slotMem) freeZeroed() {}

func (m *slotMem) boundTo(node int) bool { return false }
