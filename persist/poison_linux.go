//go:build linux

package persist

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	protNone  = unix.PROT_NONE
	protRead  = unix.PROT_READ
	protWrite = unix.PROT_WRITE
)

// protect sets the access of the pages g of the memory at base.
func protect(base unsafe.Pointer, g Range, prot int) error {
	return unix.Mprotect(unsafe.Slice((*byte)(unsafe.Add(base, g.Lo)), g.Len()), prot)
}

// ownsPages reports whether the region's memory is a mapping of its own,
// whose last page is whole: mmap maps whole pages.
func (m *osMapping) ownsPages() bool { return m.mapped }
