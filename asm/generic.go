package asm

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

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

// popCountGeneric is the portable twin of the POPCNT loop.
func popCountGeneric(p unsafe.Pointer, n int) int {
	if n <= 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(p), n)
	c := 0
	for len(b) >= 8 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, x := range b {
		c += bits.OnesCount8(x)
	}
	return c
}
