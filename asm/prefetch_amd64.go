//go:build !purego

package asm

import "unsafe"

//go:noescape
func prefetchAll(ps unsafe.Pointer, n int)

//go:noescape
func prefetchLines(p unsafe.Pointer, n int)
