package walog

import (
	"encoding/binary"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// popcount returns the number of set bits in b, with the POPCNT
// instruction through asm (math/bits pays a feature test per word on a
// GOAMD64=v1 build).
func popcount(b []byte) int {
	return asm.PopCount(unsafe.Pointer(unsafe.SliceData(b)), len(b))
}

// isZero reports whether every byte of b is zero, a line at a time.
func isZero(b []byte) bool {
	for len(b) >= 64 {
		le := binary.LittleEndian
		if le.Uint64(b)|le.Uint64(b[8:])|le.Uint64(b[16:])|le.Uint64(b[24:])|
			le.Uint64(b[32:])|le.Uint64(b[40:])|le.Uint64(b[48:])|le.Uint64(b[56:]) != 0 {
			return false
		}
		b = b[64:]
	}
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
