package walog

import (
	"encoding/binary"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist"
)

// crcUpdate continues the CRC-32C crc over b (persist.UpdateCRC32C: the
// SSE4.2 CRC32 instruction, three streams from 96 bytes, in one call).
func crcUpdate(crc uint32, b []byte) uint32 { return persist.UpdateCRC32C(crc, b) }

// crcPopcount returns crcUpdate(crc, b) and popcount(b), in one pass over b
// (asm.PopCountCRC32C).
func crcPopcount(crc uint32, b []byte) (uint32, int) {
	return asm.PopCountCRC32C(crc, unsafe.Pointer(unsafe.SliceData(b)), len(b))
}

// seqDataCRC is the checksum of PopLog and Classic entries computed from
// the entry's parts: CRC-32C of the sequence number (8 bytes, little-endian)
// and the data, with the register preset from the length field
// (crc32.Update(lenField, Castagnoli, seq ‖ data)). Presetting with the
// length field covers it without hashing a third, separate piece: for
// fixed bytes, distinct presets give distinct checksums. Appends hash the
// same bytes in one call where they lie together in the stage.
func seqDataCRC(lf uint32, seq uint64, p []byte) uint32 {
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seq)
	return crcUpdate(crcUpdate(lf, s[:]), p)
}

// seqDataCRCPop is seqDataCRC and the popcount of p.
func seqDataCRCPop(lf uint32, seq uint64, p []byte) (uint32, int) {
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seq)
	return crcPopcount(crcUpdate(lf, s[:]), p)
}

// The changing words of the log header (hi, pass, floors, dirty range) are
// each written with one failure-atomic 8-byte store, so they cannot share
// the header's CRC. Each carries its own check instead: a 56-bit value and,
// in the top byte, a CRC-8 of it (polynomial x^8+x^2+x+1, CRC-8/SMBUS),
// which catches every error of one, two or an odd number of bits in the
// word. The word of the value 0 is 0, so a zeroed word reads as 0.
const (
	wordBits = 56
	wordMask = 1<<wordBits - 1
)

var crc8Table = func() (t [256]byte) {
	for i := range t {
		c := byte(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc8(v uint64) byte {
	var c byte
	for i := range wordBits / 8 {
		c = crc8Table[c^byte(v>>(8*i))]
	}
	return c
}

// checkedWord encodes v (< 2^56) with its check byte.
func checkedWord(v uint64) uint64 { return v&wordMask | uint64(crc8(v&wordMask))<<wordBits }

// wordValue decodes a checked word; ok is false when its check fails.
func wordValue(w uint64) (v uint64, ok bool) {
	v = w & wordMask
	return v, byte(w>>wordBits) == crc8(v)
}
