package walog

import (
	"encoding/binary"
	"math/bits"
)

// popcount returns the number of set bits in b. Four independent counters
// keep the POPCNT units busy on long entries.
func popcount(b []byte) int {
	var c0, c1, c2, c3 int
	for len(b) >= 32 {
		c0 += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		c1 += bits.OnesCount64(binary.LittleEndian.Uint64(b[8:]))
		c2 += bits.OnesCount64(binary.LittleEndian.Uint64(b[16:]))
		c3 += bits.OnesCount64(binary.LittleEndian.Uint64(b[24:]))
		b = b[32:]
	}
	for len(b) >= 8 {
		c0 += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, x := range b {
		c1 += bits.OnesCount8(x)
	}
	return c0 + c1 + c2 + c3
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
