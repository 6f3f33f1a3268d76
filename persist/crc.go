package persist

import (
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// CRC32C returns the CRC-32C (Castagnoli) checksum of b: the value of
// crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)), computed by
// asm.CRC32C (the SSE4.2 CRC32 instruction, three streams from 96 bytes,
// one call). It is the one checksum of braid's persistent formats.
func CRC32C(b []byte) uint32 {
	return asm.CRC32C(0, unsafe.Pointer(unsafe.SliceData(b)), len(b))
}

// UpdateCRC32C continues the CRC-32C crc over b: crc32.Update(crc,
// Castagnoli table, b), so a checksum can be computed piece by piece
// (UpdateCRC32C(CRC32C(a), b) == CRC32C(a ‖ b)).
func UpdateCRC32C(crc uint32, b []byte) uint32 {
	return asm.CRC32C(crc, unsafe.Pointer(unsafe.SliceData(b)), len(b))
}
