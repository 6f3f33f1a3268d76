package walog

import (
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// popcount returns the number of set bits in b, with the POPCNT
// instruction through asm (math/bits pays a feature test per word on a
// GOAMD64=v1 build).
func popcount(b []byte) int {
	return asm.PopCount(unsafe.Pointer(unsafe.SliceData(b)), len(b))
}

// isZero reports whether every byte of b is zero, by comparing it with
// zero bytes a block at a time: the runtime's vector compare runs faster
// than a loop over words, and the race detector checks it as one range
// instead of byte by byte (BenchmarkRecover measures Open, which uses
// it): Open scans the free space ahead of the tail with it,
// in every crash image the tests of walog and pagelog check.
func isZero(b []byte) bool {
	for len(b) > 0 {
		k := min(len(b), len(zeroBlock))
		if string(b[:k]) != string(zeroBlock[:k]) {
			return false
		}
		b = b[k:]
	}
	return true
}

var zeroBlock [4096]byte
