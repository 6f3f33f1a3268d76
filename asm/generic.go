package asm

import (
	"encoding/binary"
	"hash/crc32"
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

// castagnoli is hash/crc32's CRC-32C table, for the portable twins.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32cGeneric is the portable twin of CRC32C: hash/crc32 itself.
func crc32cGeneric(crc uint32, p unsafe.Pointer, n int) uint32 {
	if n <= 0 {
		return crc
	}
	return crc32.Update(crc, castagnoli, unsafe.Slice((*byte)(p), n))
}

// popCountCRC32CGeneric is the portable twin of PopCountCRC32C: two passes.
func popCountCRC32CGeneric(crc uint32, p unsafe.Pointer, n int) (uint32, int) {
	return crc32cGeneric(crc, p, n), popCountGeneric(p, n)
}

// crcPoly is the Castagnoli polynomial, bit-reflected: bit i is the
// coefficient of x^(31-i), as the CRC32 instruction and hash/crc32 hold
// their register.
const crcPoly = 0x82f63b78

// xPowMod returns x^k mod P (P the Castagnoli polynomial) in the reflected
// form of the CRC register: x^0 is bit 31, and multiplying by x is a shift
// right, reduced by P when a bit leaves bit 0 (x^31 becoming x^32).
//
// The three-stream CRC rests on this. Processing L zero bytes multiplies
// the register R by x^(8L) (mod P), and the CRC is linear, so the CRC of
// A‖B from R is CRC(CRC(R, A)·x^(8|B|), 0-preset B): streams over A, B
// and C run from presets R, 0 and 0 in parallel, and are combined as
// rA·x^(16L) + rB·x^(8L) + rC for three parts of L bytes each. A carry-less
// multiply of two reflected 32-bit values yields their 63-bit product one
// place short of the 64-bit data word the CRC32 instruction reads (data bit
// j is x^(63-j)), that is the product times x, and CRC32Q from a zero
// register multiplies its word by x^32 mod P: so CRC32Q(0, clmul(r, K))
// with K = x^(8L-33) mod P is r·x^(8L) mod P, and the two products can be
// added before that one reduction.
func xPowMod(k int) uint32 {
	r := uint32(1) << 31
	for range k {
		if r&1 != 0 {
			r = r>>1 ^ crcPoly
		} else {
			r >>= 1
		}
	}
	return r
}
