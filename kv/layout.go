package kv

import (
	"encoding/binary"
	"fmt"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// On-media layouts (the README draws them; testdata/*.hex are their golden
// dumps).
//
// A segment is one pre-allocated file of Options.SegmentSize bytes: the
// 64-byte pmheader line at offset 0 (magic "braidKDS" for a data segment,
// "braidKMT" for a metadata segment, zero for a free one; Size = segment
// bytes, Stride = owner worker on its device, Count = epoch, Aux = store
// id), zeros up to bodyOff, then the log body.
//
// A data record is key || value, zero-padded to 8 bytes; a tombstone's
// record is the key alone. Records carry no header: the metadata entry
// that commits a record says where it is, how long it is and its CRC. A
// record with a deadline (the entry's deadline bit) is key || value ||
// deadline, the deadline a u64 (Unix milliseconds, little-endian, not
// aligned): its entry's value length counts those 8 bytes, so that the
// entry's CRC field covers the deadline (expire.go).
//
// A metadata entry is 24 bytes, 8-byte aligned:
//
//	 0  u64  serial (bits 0..47) | key length (bits 48..63)
//	 8  u32  offset of the data record in the data segment (a multiple
//	         of 8) | batch start (bit 0)
//	12  u32  value length (bits 0..29) | deadline (bit 30) | tombstone (bit 31)
//	16  u32  CRC-32C of key || value
//	20  u32  CRC-32C of the metadata segment's epoch (8 bytes, LE) || bytes 0..19
//
// An entry with key length 0 is a marker: the entries after it commit
// records of data segment "offset" (bytes 8..11) whose epoch is bits
// 0..47 of word 0, whose log end was "value length" (bytes 12..15) when
// the marker was written; its CRC field is 0, or 1 for a batch start.
// Every metadata segment starts with a marker; a worker writes one
// whenever it moves to a new data segment. An all-zero entry ends the
// log. Seeding the entry CRC with the segment's epoch makes entries left
// from a previous use of a recycled segment fail their check.
// A metadata segment's header carries flag flagDeadlines (its entries may
// set the deadline bit), so that a build that knows no deadlines refuses
// the store (ErrBadFormat) instead of dropping those entries as corrupt.
//
// Batch start (format 2): set on the first entry a worker stages after
// each of its fences, so every entry before it in its segment was durable
// before it was written. A damaged or zeroed entry with a valid batch
// start after it is therefore damage, never the tear of an
// unacknowledged batch (recover.go); a metadata segment's header carries
// metaFlagBatches, which this build requires.
const (
	bodyOff   = 256 // the header's XPLine; the log body starts at the next one
	entrySize = 24
	unit      = 256 // the media's write unit (Optane XPLine): appends are whole units

	serialBits = 48
	serialMask = 1<<serialBits - 1
	tombBit    = 1 << 31
	ttlBit     = 1 << 30    // the record ends with a deadline (expire.go)
	vlenMask   = ttlBit - 1 // (a marker's log end: tombBit - 1)

	flagDeadlines = 1 // metadata segment header flag: entries may set ttlBit
)

var (
	dataKind = segKind("braidKDS", "kv data segment")
	metaKind = withFlags(segKind("braidKMT", "kv metadata segment"), flagDeadlines|metaFlagBatches)
	ckptKind = withFlags(segKind("braidKCP", "kv checkpoint"), ckptFlagBuckets)
)

// metaFlagBatches (pmheader flag, metadata segments): the entries carry
// batch starts — kv's format 2. A metadata segment without it is format 1,
// which this build does not read (ErrBadFormat naming both).
const (
	metaFlagBatches = 2
	formatVersion   = 2
)

func segKind(magic, name string) pmheader.Kind {
	return pmheader.Kind{
		Magic:     pmheader.Magic(magic),
		Name:      name,
		Pkg:       "kv",
		NoArray:   errFreeSegment,
		BadFormat: ErrBadFormat,
		Corrupt:   ErrCorrupt,
		Invalid:   ErrInvalid,
		TooSmall:  ErrInvalid,
	}
}

func withFlags(k pmheader.Kind, flags uint32) pmheader.Kind {
	k.Flags = flags
	return k
}

// errFreeSegment: a segment header with a zero magic (free or never used).
var errFreeSegment = persist.NewError("kv: free segment")

// segHeader is what a segment's header line says.
type segHeader struct {
	kind    uint8 // kindFree, kindData, kindMeta
	size    int64
	owner   int
	epoch   uint64
	storeID uint64
}

const (
	kindFree uint8 = iota
	kindData
	kindMeta
)

func (h *segHeader) fields() pmheader.Fields {
	f := pmheader.Fields{Size: uint32(h.size), Stride: uint32(h.owner), Count: h.epoch, Aux: h.storeID}
	if h.kind == kindMeta {
		f.Flags = flagDeadlines | metaFlagBatches
	}
	return f
}

// decodeSegHeader reads a segment's header line. A free segment (zero
// magic) still reports the epoch its fields hold when their checksum does
// (Invalidate clears only the magic), so epochs never repeat.
func decodeSegHeader(b []byte) (segHeader, error) {
	if len(b) < pmheader.Size {
		return segHeader{}, fmt.Errorf("%w: segment header needs %d bytes, have %d", ErrCorrupt, pmheader.Size, len(b))
	}
	var h segHeader
	m := binary.LittleEndian.Uint64(b)
	var k *pmheader.Kind
	switch m {
	case 0:
		if binary.LittleEndian.Uint32(b[56:]) == persist.CRC32C(b[8:56]) && binary.LittleEndian.Uint32(b[8:]) == pmheader.Format {
			h.epoch = binary.LittleEndian.Uint64(b[24:])
		}
		return h, nil
	case metaKind.Magic:
		k, h.kind = &metaKind, kindMeta
	default:
		k, h.kind = &dataKind, kindData
	}
	f, err := k.Decode(b[:pmheader.Size])
	if err != nil {
		return segHeader{}, err
	}
	h.size, h.owner, h.epoch, h.storeID = int64(f.Size), int(f.Stride), f.Count, f.Aux
	if h.kind == kindMeta && f.Flags&metaFlagBatches == 0 {
		return segHeader{}, fmt.Errorf("%w: a kv metadata segment of format 1 (entries without batch starts); this build reads format %d", ErrBadFormat, formatVersion)
	}
	if h.epoch == 0 || h.epoch > serialMask {
		return segHeader{}, fmt.Errorf("%w: segment epoch %d out of range", ErrCorrupt, h.epoch)
	}
	return h, nil
}

// entry is a decoded metadata entry.
type entry struct {
	serial uint64 // for a marker: the data segment's epoch
	klen   int    // 0: a marker
	off    uint32 // for a marker: the data segment
	vlen   uint32 // with ttl: the value's length + 8
	tomb   bool
	ttl    bool // the record ends with its deadline
	crc    uint32
	first  bool // the first entry its worker staged after a fence
}

func (e *entry) marker() bool { return e.klen == 0 }

// recSize is the bytes of a data record of klen + vlen bytes.
func recSize(klen, vlen int) int { return (klen + vlen + 7) &^ 7 }

// encodeEntry writes e into b (entrySize bytes) with its CRC under the
// metadata segment's epoch.
func encodeEntry(b []byte, e *entry, metaEpoch uint64) {
	encodeEntrySeeded(b, e, entrySeed(metaEpoch))
}

// encodeEntrySeeded is encodeEntry with the segment's entrySeed given (a
// worker keeps its metadata segment's).
func encodeEntrySeeded(b []byte, e *entry, seed uint32) {
	_ = b[entrySize-1]
	binary.LittleEndian.PutUint64(b, e.serial&serialMask|uint64(e.klen)<<serialBits)
	off, crc := e.off, e.crc
	if e.first {
		if e.marker() {
			crc |= 1
		} else {
			off |= 1
		}
	}
	binary.LittleEndian.PutUint32(b[8:], off)
	v := e.vlen
	if e.tomb {
		v |= tombBit
	}
	if e.ttl {
		v |= ttlBit
	}
	binary.LittleEndian.PutUint32(b[12:], v)
	binary.LittleEndian.PutUint32(b[16:], crc)
	binary.LittleEndian.PutUint32(b[20:], persist.UpdateCRC32C(seed, b[:20]))
}

// entrySeed is the CRC-32C of a metadata segment's epoch, where every
// entry CRC of the segment starts.
func entrySeed(metaEpoch uint64) uint32 {
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], metaEpoch)
	return persist.CRC32C(seed[:])
}

// entry decode results.
const (
	entryOK = iota
	entryEnd
	entryBad
)

// decodeEntry decodes the entry in b: entryEnd for an all-zero entry (the
// end of the log), entryBad for one whose checksum or fields fail.
func decodeEntry(b []byte, metaEpoch uint64) (entry, int) {
	return decodeEntrySeeded(b, entrySeed(metaEpoch))
}

// decodeEntrySeeded is decodeEntry with the segment's entrySeed.
func decodeEntrySeeded(b []byte, seed uint32) (entry, int) {
	_ = b[entrySize-1]
	w0 := binary.LittleEndian.Uint64(b)
	if w0 == 0 && binary.LittleEndian.Uint64(b[8:]) == 0 && binary.LittleEndian.Uint64(b[16:]) == 0 {
		return entry{}, entryEnd
	}
	if binary.LittleEndian.Uint32(b[20:]) != persist.UpdateCRC32C(seed, b[:20]) {
		return entry{}, entryBad
	}
	v := binary.LittleEndian.Uint32(b[12:])
	e := entry{
		serial: w0 & serialMask,
		klen:   int(w0 >> serialBits),
		off:    binary.LittleEndian.Uint32(b[8:]),
		vlen:   v & vlenMask,
		tomb:   v&tombBit != 0,
		ttl:    v&ttlBit != 0,
		crc:    binary.LittleEndian.Uint32(b[16:]),
	}
	if e.marker() { // a marker's log end takes 31 bits; its CRC field says batch start
		e.vlen, e.ttl = v&^tombBit, false
		e.first, e.crc = e.crc&1 != 0, e.crc&^1
	} else {
		e.first, e.off = e.off&1 != 0, e.off&^1
	}
	if e.serial == 0 || e.marker() && (e.tomb || e.crc != 0) || e.tomb && e.vlen != 0 || e.off%8 != 0 && !e.marker() ||
		e.ttl && e.vlen < deadlineSize {
		return entry{}, entryBad
	}
	return e, entryOK
}

// recordCRC is the CRC-32C of a record's key || value.
func recordCRC(key, value []byte) uint32 {
	return persist.UpdateCRC32C(persist.CRC32C(key), value)
}
