//go:build !linux

package persist

import (
	"fmt"
	"unsafe"
)

const (
	protNone = iota
	protRead
	protWrite
)

func protect(unsafe.Pointer, Range, int) error {
	return fmt.Errorf("%w: poisoning memory needs Linux (mprotect)", ErrUnsupported)
}

func (m *osMapping) ownsPages() bool { return false }
