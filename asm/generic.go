package asm

import "unsafe"

// copyGeneric and fillGeneric are the portable twins of the streaming copy
// and fill: the same result in memory, with ordinary stores. The assembly is
// tested against them.
func copyGeneric(dst, src unsafe.Pointer, n int) {
	if n <= 0 {
		return
	}
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}

func fillGeneric(dst unsafe.Pointer, c byte, n int) {
	if n <= 0 {
		return
	}
	b := unsafe.Slice((*byte)(dst), n)
	for i := range b {
		b[i] = c
	}
}
