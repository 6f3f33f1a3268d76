package fam

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

// The header is the first cache line of an array (little-endian):
//
//	 0  magic    u64  "braidFAM" (Array) or "braidFLG" (LogArray)
//	 8  format   u32  1
//	12  flags    u32  0
//	16  size     u32  object size in bytes
//	20  stride   u32  bytes per object slot
//	24  count    u64  number of objects
//	32  aux      u64  LogArray: lanes (low 32 bits) | log bytes per lane (high 32)
//	40  reserved u64  0
//	48  reserved u64  0
//	56  crc      u32  CRC-32C of bytes 8..55
//	60  reserved u32  0
//
// Create writes the magic last, in its own barrier, after everything else
// is durable, so a header with a magic is complete; the CRC catches media
// corruption and stray writes.
const (
	headerSize    = 64
	formatVersion = 1
)

var (
	magicArray = binary.LittleEndian.Uint64([]byte("braidFAM"))
	magicLog   = binary.LittleEndian.Uint64([]byte("braidFLG"))
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

type header struct {
	size, stride uint32
	count        uint64
	aux          uint64
}

// encode writes every field but the magic into b (64 bytes).
func (h *header) encode(b []byte) {
	_ = b[headerSize-1]
	binary.LittleEndian.PutUint32(b[8:], formatVersion)
	binary.LittleEndian.PutUint32(b[12:], 0)
	binary.LittleEndian.PutUint32(b[16:], h.size)
	binary.LittleEndian.PutUint32(b[20:], h.stride)
	binary.LittleEndian.PutUint64(b[24:], h.count)
	binary.LittleEndian.PutUint64(b[32:], h.aux)
	clear(b[40:56])
	binary.LittleEndian.PutUint32(b[56:], crc32.Checksum(b[8:56], castagnoli))
	binary.LittleEndian.PutUint32(b[60:], 0)
}

// decodeHeader checks the header in b (64 bytes) against magic and returns
// its fields. The caller checks that they make sense for its kind of array.
func decodeHeader(b []byte, magic uint64, what string) (header, error) {
	var h header
	_ = b[headerSize-1]
	switch m := binary.LittleEndian.Uint64(b); m {
	case magic:
	case 0:
		return h, ErrNoArray
	default:
		return h, fmt.Errorf("%w: header magic %q, want %q (not a %s)", ErrCorrupt, b[:8], binary.LittleEndian.AppendUint64(nil, magic), what)
	}
	if got, want := binary.LittleEndian.Uint32(b[56:]), crc32.Checksum(b[8:56], castagnoli); got != want {
		return h, fmt.Errorf("%w: header checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVersion {
		return h, fmt.Errorf("%w: header format version %d, this package reads %d", ErrCorrupt, v, formatVersion)
	}
	if binary.LittleEndian.Uint32(b[12:]) != 0 || binary.LittleEndian.Uint64(b[40:]) != 0 ||
		binary.LittleEndian.Uint64(b[48:]) != 0 || binary.LittleEndian.Uint32(b[60:]) != 0 {
		return h, fmt.Errorf("%w: header has non-zero reserved fields", ErrCorrupt)
	}
	h.size = binary.LittleEndian.Uint32(b[16:])
	h.stride = binary.LittleEndian.Uint32(b[20:])
	h.count = binary.LittleEndian.Uint64(b[24:])
	h.aux = binary.LittleEndian.Uint64(b[32:])
	return h, nil
}

// invalidate clears the magic of hb (the header line) durably, so that a
// Create interrupted by a crash leaves no array rather than an old header
// over half-initialized objects.
func invalidate(r *persist.Region, hb []byte) error {
	if persist.Load64(hb) == 0 {
		return nil
	}
	persist.Store64(hb, 0)
	return r.Persist(hb[:8])
}

// commit makes the header durable, then its magic: two barriers, so the
// magic never reaches the media before the fields it vouches for.
func commit(r *persist.Region, hb []byte, h *header, magic uint64) error {
	h.encode(hb)
	if err := r.Persist(hb[8:headerSize]); err != nil {
		return err
	}
	persist.Store64(hb, magic)
	return r.Persist(hb[:8])
}

// checkPlace validates an array offset and returns the header line. The
// offset must be a multiple of 64 (a cache line) and the region's memory
// 8-byte aligned there, as every FAMB store must be.
func checkPlace(r *persist.Region, off int) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	if off < 0 || off%64 != 0 {
		return nil, fmt.Errorf("%w: offset %d is not a non-negative multiple of 64", ErrInvalid, off)
	}
	if off > r.Size()-headerSize {
		return nil, fmt.Errorf("%w: header at offset %d does not fit in a %d-byte region", ErrTooSmall, off, r.Size())
	}
	hb, err := r.Slice(off, headerSize)
	if err != nil {
		return nil, fmt.Errorf("fam: %w", err)
	}
	if !aligned8(hb) {
		return nil, fmt.Errorf("%w: region memory at offset %d is not 8-byte aligned", ErrInvalid, off)
	}
	return hb, nil
}

func aligned8(b []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(b)))&7 == 0 }
