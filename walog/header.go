package walog

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// The header is the first 256 bytes of a log's area (little-endian):
//
//	 0  magic     u64  "braidWAL"
//	 8  version   u16  2
//	10  format    u8   1 PopLog, 2 RAWL, 3 Classic
//	11  alignLog  u8   log2 of the entry alignment: 3, 6 or 8
//	12  flags     u32  bit 0: entries carry no checksum (Options.NoChecksum)
//	16  size      u64  bytes of the area, header included
//	24  maxEntry  u32  longest entry in bytes
//	28  maxBatch  u32  most bytes one append (AppendBatch) may occupy
//	32  setID     u64  0 for a standalone log, else the set's random id
//	40  setIndex  u32  member number in the set
//	44  setCount  u32  members in the set (0 for a standalone log)
//	48  reserved  u64  0
//	56  reserved  u32  0
//	60  crc       u32  CRC-32C of bytes 8..59
//
// followed by words that change while the log is used, each written alone
// with one failure-atomic 8-byte store and persisted, each a checked word
// (a 56-bit value and a CRC-8 of it in the top byte; see checksum.go):
//
//	 64  hi        prepared end, from the area start: every byte an
//	               append may have written lies below it
//	 72  pass      pass over the log, from 1 (RAWL's validity sense is
//	               pass&1; PopLog and Classic keep it at 1)
//	 80  floor     entries with a smaller sequence number are
//	               discarded: the commit point of Reset
//	 88  setFloor  member 0 of a set: the same for every member, the
//	               commit point of Set.Reset
//	 96  dirtyFrom the dirty range [dirtyFrom, dirtyTo), from the area
//	104  dirtyTo   start: set while Reset, Truncate or a salvaging Open
//	               leaves leftovers past the end of the log (see recover.go);
//	               0, 0 otherwise
//	112  reserved  0 up to 255
//
// Create writes the magic last, in its own barrier, after everything else
// is durable, so a header with a magic is complete.
const (
	formatVersion = 2

	flagNoChecksum = 1

	offHi        = 64
	offPass      = 72
	offFloor     = 80
	offSetFloor  = 88
	offDirtyFrom = 96
	offDirtyTo   = 104

	// maxSeq bounds sequence numbers: the header keeps 56 bits of them
	// (at 100 million appends a second, 22 years of numbers).
	maxSeq = 1 << wordBits
)

var magic = binary.LittleEndian.Uint64([]byte("braidWAL"))

// header is the decoded header.
type header struct {
	geometry
	setID              uint64
	setIndex, setCount uint32
	hi                 int // offset from the area start
	pass, floor        uint64
	setFloor           uint64
	dirtyFrom, dirtyTo int // offsets from the area start; 0 when unset
}

// encode fills b (HeaderSize bytes) with every field but the magic.
func (h *header) encode(b []byte) {
	_ = b[HeaderSize-1]
	clear(b)
	le := binary.LittleEndian
	le.PutUint16(b[8:], formatVersion)
	b[10] = byte(h.format)
	b[11] = byte(bits.TrailingZeros(uint(h.align)))
	if h.noChecksum {
		le.PutUint32(b[12:], flagNoChecksum)
	}
	le.PutUint64(b[16:], uint64(h.size))
	le.PutUint32(b[24:], uint32(h.maxEntry))
	le.PutUint32(b[28:], uint32(h.maxBatch))
	le.PutUint64(b[32:], h.setID)
	le.PutUint32(b[40:], h.setIndex)
	le.PutUint32(b[44:], h.setCount)
	le.PutUint32(b[60:], persist.CRC32C(b[8:60]))
	le.PutUint64(b[offHi:], checkedWord(uint64(h.hi)))
	le.PutUint64(b[offPass:], checkedWord(h.pass))
	le.PutUint64(b[offFloor:], checkedWord(h.floor))
	le.PutUint64(b[offSetFloor:], checkedWord(h.setFloor))
	le.PutUint64(b[offDirtyFrom:], checkedWord(uint64(h.dirtyFrom)))
	le.PutUint64(b[offDirtyTo:], checkedWord(uint64(h.dirtyTo)))
}

// readHeader decodes and checks the header at base. It needs only the
// header's 256 bytes to lie in the region; that the area fits is checked
// here too, against the region size.
func readHeader(r *persist.Region, base int) (header, error) {
	var h header
	b, err := r.Slice(base, HeaderSize)
	if err != nil {
		return h, fmt.Errorf("%w: no room for a log header at offset %d of a %d-byte region", ErrInvalid, base, r.Size())
	}
	le := binary.LittleEndian
	crc := persist.CRC32C(b[8:60])
	crcOK := le.Uint32(b[60:]) == crc
	version := le.Uint16(b[8:])
	switch m := le.Uint64(b); {
	case m == magic:
	case m == 0:
		return h, fmt.Errorf("%w (offset %d): the header is empty; Create one", ErrNoLog, base)
	case crcOK && version == formatVersion:
		// The rest is a sound walog header: the magic itself was hit.
		return h, fmt.Errorf("%w: log header at offset %d: magic %q, want %q", ErrCorrupt, base, b[:8], "braidWAL")
	default:
		return h, fmt.Errorf("%w: the header at offset %d holds %s, not a walog log", ErrBadFormat, base, pmheader.Identify(b))
	}
	if version != formatVersion {
		return h, fmt.Errorf("%w: log format version %d, this build reads version %d", ErrBadFormat, version, formatVersion)
	}
	if !crcOK {
		return h, fmt.Errorf("%w: log header at offset %d: checksum %#08x, computed %#08x", ErrCorrupt, base, le.Uint32(b[60:]), crc)
	}
	bad := func(format string, args ...any) (header, error) {
		return h, fmt.Errorf("%w: log header at offset %d: "+format, append([]any{ErrCorrupt, base}, args...)...)
	}
	h.base = base
	h.format = Format(b[10])
	alignLog := b[11]
	flags := le.Uint32(b[12:])
	size := le.Uint64(b[16:])
	h.maxEntry = int(le.Uint32(b[24:]))
	h.maxBatch = int(le.Uint32(b[28:]))
	h.setID = le.Uint64(b[32:])
	h.setIndex = le.Uint32(b[40:])
	h.setCount = le.Uint32(b[44:])
	switch {
	case !h.format.valid():
		return bad("unknown format %d", b[10])
	case alignLog != 3 && alignLog != 6 && alignLog != 8:
		return bad("entry alignment 2^%d", alignLog)
	case flags&^flagNoChecksum != 0 || le.Uint64(b[48:]) != 0 || le.Uint32(b[56:]) != 0:
		return bad("unknown flags %#x or non-zero reserved fields", flags)
	case size < MinSize || size%HeaderSize != 0:
		return bad("area size %d", size)
	case size > uint64(r.Size()-base):
		// The header's checksum holds: the region is short, not the header
		// damaged.
		return h, fmt.Errorf("%w: the log at offset %d is %d bytes, the region has %d from there: map the whole file (is it truncated?)", ErrTooSmall, base, size, r.Size()-base)
	case h.maxEntry < 1 || h.maxEntry > MaxEntryLimit || h.format.footprint(h.maxEntry) > int(size)-HeaderSize:
		return bad("longest entry %d in an area of %d bytes", h.maxEntry, size)
	case h.maxBatch < h.format.footprint(h.maxEntry) || h.maxBatch > int(size)-HeaderSize:
		return bad("largest batch %d bytes (longest entry %d, area %d bytes)", h.maxBatch, h.maxEntry, size)
	case (h.setCount == 0) != (h.setID == 0) || (h.setCount != 0 && h.setIndex >= h.setCount):
		return bad("set member %d of %d (set id %#x)", h.setIndex, h.setCount, h.setID)
	}
	h.noChecksum = flags&flagNoChecksum != 0
	h.align = 1 << alignLog
	h.size = int(size)
	if base > r.Size()-h.size {
		return h, fmt.Errorf("%w: the log at offset %d is %d bytes, beyond the region's %d", ErrTooSmall, base, h.size, r.Size())
	}
	// The changing words: each was written with one 8-byte store, so each
	// is either its old or its new value, never a mixture; a word that
	// fails its check was hit by something else.
	var w [6]uint64
	for i, off := range []int{offHi, offPass, offFloor, offSetFloor, offDirtyFrom, offDirtyTo} {
		v, ok := wordValue(persist.Load64(b[off:]))
		if !ok {
			return bad("word at byte %d (%#x) fails its check", off, persist.Load64(b[off:]))
		}
		w[i] = v
	}
	hi, from, to := w[0], w[4], w[5]
	h.pass, h.floor, h.setFloor = w[1], w[2], w[3]
	switch {
	case hi < HeaderSize || hi > size || hi%HeaderSize != 0:
		return bad("prepared end %d outside [%d, %d]", hi, HeaderSize, size)
	case h.pass < 1:
		return bad("pass %d", h.pass)
	case h.floor < 1:
		return bad("sequence floor %d (set floor %d)", h.floor, h.setFloor)
	case h.setFloor != 0 && (h.setCount == 0 || h.setIndex != 0):
		return bad("set floor %d outside member 0 of a set", h.setFloor)
	case from != 0 && to != 0 && (from < HeaderSize || from >= to || to > size):
		return bad("dirty range [%d, %d) outside [%d, %d]", from, to, HeaderSize, size)
	case from > size || to > size:
		return bad("dirty range end %d or %d beyond %d", from, to, size)
	}
	for i := offDirtyTo + 8; i < HeaderSize; i++ {
		if b[i] != 0 {
			return bad("non-zero reserved byte %d", i)
		}
	}
	h.hi, h.dirtyFrom, h.dirtyTo = int(hi), int(from), int(to)
	return h, nil
}

// match checks the options a caller gave Open against the header.
func (h *header) match(o *Options) error {
	switch {
	case o.Format != 0 && o.Format != h.format:
		return fmt.Errorf("%w: the log is %s, Options.Format asks %s", ErrBadFormat, h.format, o.Format)
	case o.Size != 0 && o.Size != h.size:
		return fmt.Errorf("%w: the log is %d bytes, Options.Size asks %d", ErrBadFormat, h.size, o.Size)
	case o.MaxEntry != 0 && o.MaxEntry != h.maxEntry:
		return fmt.Errorf("%w: the log's MaxEntry is %d, Options.MaxEntry asks %d", ErrBadFormat, h.maxEntry, o.MaxEntry)
	case o.Align != 0 && o.Align != h.align:
		return fmt.Errorf("%w: the log's entries are %d-byte aligned, Options.Align asks %d", ErrBadFormat, h.align, o.Align)
	case o.MaxBatch != 0 && o.MaxBatch != h.maxBatch:
		return fmt.Errorf("%w: the log's MaxBatch is %d, Options.MaxBatch asks %d", ErrBadFormat, h.maxBatch, o.MaxBatch)
	}
	return nil
}

// storeWord writes one changing word of the header, a checked word, with a
// failure-atomic store and persists it.
func (l *Log) storeWord(off int, v uint64) error {
	return l.storeRaw(off, checkedWord(v))
}

// storeRaw writes the header word at off with a failure-atomic store and
// persists it.
func (l *Log) storeRaw(off int, w uint64) error {
	b := l.mem[l.base+off : l.base+off+8]
	persist.Store64(b, w)
	return l.r.Persist(b)
}

// setDirty records [from, to) (region offsets) as the dirty range: Open
// accepts anything it finds there past the end of the log.
func (l *Log) setDirty(from, to int) error {
	return l.storeDirty(from, to, uint64(from-l.base), uint64(to-l.base))
}

// clearDirty clears the dirty range once its leftovers are gone.
func (l *Log) clearDirty() error { return l.storeDirty(0, 0, 0, 0) }

// storeDirty writes both words of the dirty range in one barrier. A crash
// may let one through without the other: a range with a zero end counts
// as none (Open clears it). That is safe both ways: the range is set
// before the leftovers are made and cleared after they are gone.
func (l *Log) storeDirty(from, to int, a, b uint64) error {
	h := l.mem[l.base+offDirtyFrom : l.base+offDirtyTo+8]
	persist.Store64(h, checkedWord(a))
	persist.Store64(h[8:], checkedWord(b))
	if err := l.r.Persist(h); err != nil {
		return err
	}
	l.dirtyFrom, l.dirtyTo = from, to
	return nil
}
