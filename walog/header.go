package walog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// The header of a log (format version 3) is the first 512 bytes of its
// area: two 256-byte blocks, the header and, in the next block, its copy,
// which hold the same values but the role byte (little-endian):
//
//	 0  magic     u64  "braidWAL" ("walogNEW" while Create runs)
//	 8  version   u16  3
//	10  format    u8   1 PopLog, 2 RAWL, 3 Classic
//	11  alignLog  u8   log2 of the entry alignment: 3, 6 or 8
//	12  flags     u32  bit 0: entries carry no checksum (Options.NoChecksum)
//	16  size      u64  bytes of the area, header included
//	24  maxEntry  u32  longest entry in bytes
//	28  maxBatch  u32  most bytes one append (AppendBatch) may occupy
//	32  setID     u64  0 for a standalone log, else the set's random id
//	40  setIndex  u32  member number in the set
//	44  setCount  u32  members in the set (0 for a standalone log)
//	48  role      u8   0 in the header, 1 in its copy
//	49  reserved       0 up to 59
//	60  crc       u32  CRC-32C of bytes 8..59
//
// followed by words that change while the log is used, each a checked
// word (a 56-bit value and a CRC-8 of it in the top byte; see
// checksum.go), written with one failure-atomic 8-byte store into both
// blocks and persisted with one barrier:
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
//	112  closed    the tail, from the area start, when the log was closed
//	               cleanly (Close); 0 while it is open or after a crash
//	120  reserved  0 up to 255
//
// Two copies, so that damage to one (a zeroed or garbled block) neither
// loses the log nor reads as "no log here": Open reads the header from the
// sound copy and rewrites the other. A crash can leave the two copies of
// a word apart (one store reached the media, the other not), both values
// being states of the interrupted operation; Open takes the later one:
// the larger prepared end, pass and floors (they only grow, but for the
// prepared end that Reset lowers, before it clears its dirty range), the
// union of the dirty ranges, the closed tail either copy holds.
//
// Create writes creatingMagic into both blocks first, then the area's
// first chunk of zeroes and the fields, and the magic last, in barriers
// of their own: a crash during Create leaves the area as it was (before
// the first barrier), "a Create did not finish" (ErrNoLog), or the new
// log.
const (
	formatVersion = 3

	// BlockSize is the unit of a log's area: Offset and Size are
	// multiples of it, and each copy of the header fills one.
	BlockSize = 256

	flagNoChecksum = 1

	offRole      = 48
	offCRC       = 60
	offHi        = 64
	offPass      = 72
	offFloor     = 80
	offSetFloor  = 88
	offDirtyFrom = 96
	offDirtyTo   = 104
	offClosed    = 112
	wordsEnd     = 120

	roleHeader = 0
	roleCopy   = 1

	// maxSeq bounds sequence numbers: the header keeps 56 bits of them
	// (at 100 million appends a second, 22 years of numbers).
	maxSeq = 1 << wordBits
)

var (
	magic = pmheader.Magic("braidWAL")
	// creatingMagic marks a Create in progress. It differs from every
	// registered magic in many bits (TestCreatingMagic), so no damage to
	// a log's magic turns it into this one.
	creatingMagic = pmheader.Magic("walogNEW")
)

// header is the decoded header.
type header struct {
	geometry
	setID              uint64
	setIndex, setCount uint32
	hi                 int // offset from the area start
	pass, floor        uint64
	setFloor           uint64
	dirtyFrom, dirtyTo int // offsets from the area start; 0 when unset
	closed             int // the tail at a clean Close, from the area start; 0: none
}

// encode fills b (BlockSize bytes) with every field of the block of the
// given role but the magic.
func (h *header) encode(b []byte, role byte) {
	_ = b[BlockSize-1]
	clear(b[8:])
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
	b[offRole] = role
	le.PutUint32(b[offCRC:], persist.CRC32C(b[8:offCRC]))
	for i, v := range h.words() {
		le.PutUint64(b[offHi+8*i:], checkedWord(v))
	}
}

// words are the values of the changing words, in their order.
func (h *header) words() [7]uint64 {
	return [7]uint64{uint64(h.hi), h.pass, h.floor, h.setFloor, uint64(h.dirtyFrom), uint64(h.dirtyTo), uint64(h.closed)}
}

// blockState is what one block of the header holds.
type blockState uint8

const (
	blockSound      blockState = iota // a block of this format and role whose checks hold
	blockZero                         // a zero magic
	blockCreating                     // creatingMagic: a Create did not finish
	blockForeign                      // another registered kind's magic
	blockOldVersion                   // a sound walog header of another format version
	blockDamaged                      // a walog block that fails a check
	blockIsCopy                       // a sound copy where the header belongs: a wrong offset
	blockOther                        // an unknown magic over bytes that are no walog block
)

type block struct {
	state   blockState
	h       header
	version uint16 // blockOldVersion
	why     string // what is wrong, when not sound
}

// decodeBlock decodes and checks the block b of the header at base whose
// role should be role.
func decodeBlock(b []byte, base int, role byte) block {
	le := binary.LittleEndian
	crcOK := le.Uint32(b[offCRC:]) == persist.CRC32C(b[8:offCRC])
	version := le.Uint16(b[8:])
	damaged := func(format string, args ...any) block {
		return block{state: blockDamaged, why: fmt.Sprintf(format, args...)}
	}
	switch m := le.Uint64(b); {
	case m == magic:
	case m == creatingMagic:
		return block{state: blockCreating, why: "is a Create that did not finish"}
	case m == 0:
		return block{state: blockZero, why: "has a zero magic"}
	case crcOK && version == formatVersion:
		// The rest is a sound walog block: the magic itself was hit.
		return damaged("has the magic %q over fields whose checksum holds", b[:8])
	default:
		if _, ok := pmheader.Known(m); ok {
			return block{state: blockForeign, why: "holds " + pmheader.Identify(b)}
		}
		return block{state: blockOther, why: "holds " + pmheader.Identify(b)}
	}
	if !crcOK {
		return damaged("fails its checksum (%#08x, computed %#08x)", le.Uint32(b[offCRC:]), persist.CRC32C(b[8:offCRC]))
	}
	if version != formatVersion {
		return block{state: blockOldVersion, version: version, why: fmt.Sprintf("is of format version %d", version)}
	}
	if b[offRole] != role {
		if role == roleHeader && b[offRole] == roleCopy {
			return block{state: blockIsCopy, why: "holds the copy of the header of a log that starts 256 bytes before"}
		}
		return damaged("has role %d where the %s belongs", b[offRole], [2]string{"header", "header's copy"}[role])
	}
	var h header
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
		return damaged("says format %d", b[10])
	case alignLog != 3 && alignLog != 6 && alignLog != 8:
		return damaged("says entry alignment 2^%d", alignLog)
	case flags&^flagNoChecksum != 0 || !isZero(b[offRole+1:offCRC]):
		return damaged("has unknown flags %#x or non-zero reserved fields", flags)
	case size < MinSize || size%BlockSize != 0 || size > 1<<62:
		return damaged("says the area is %d bytes", size)
	case h.maxEntry < 1 || h.maxEntry > MaxEntryLimit || h.format.footprint(h.maxEntry) > int(size)-HeaderSize:
		return damaged("says the longest entry is %d bytes in an area of %d", h.maxEntry, size)
	case h.maxBatch < h.format.footprint(h.maxEntry) || h.maxBatch > int(size)-HeaderSize:
		return damaged("says the largest batch is %d bytes (longest entry %d, area %d bytes)", h.maxBatch, h.maxEntry, size)
	case (h.setCount == 0) != (h.setID == 0) || (h.setCount != 0 && h.setIndex >= h.setCount):
		return damaged("says set member %d of %d (set id %#x)", h.setIndex, h.setCount, h.setID)
	}
	h.noChecksum = flags&flagNoChecksum != 0
	h.align = 1 << alignLog
	h.size = int(size)
	return decodeWords(b, h)
}

// decodeWords decodes and checks the changing words of the block b, whose
// fixed fields are h's.
func decodeWords(b []byte, h header) block {
	le := binary.LittleEndian
	damaged := func(format string, args ...any) block {
		return block{state: blockDamaged, why: fmt.Sprintf(format, args...)}
	}
	size := uint64(h.size)
	// The changing words: each was written with one 8-byte store, so each
	// is either its old or its new value, never a mixture; a word that
	// fails its check was hit by something else.
	var w [7]uint64
	for i := range w {
		off := offHi + 8*i
		v, ok := wordValue(le.Uint64(b[off:]))
		if !ok {
			return damaged("has a word at byte %d (%#x) that fails its check", off, le.Uint64(b[off:]))
		}
		w[i] = v
	}
	hi, from, to, closed := w[0], w[4], w[5], w[6]
	h.pass, h.floor, h.setFloor = w[1], w[2], w[3]
	switch {
	case hi < HeaderSize || hi > size || hi%BlockSize != 0:
		return damaged("says the prepared end is %d, outside [%d, %d]", hi, HeaderSize, size)
	case h.pass < 1:
		return damaged("says pass %d", h.pass)
	case h.floor < 1:
		return damaged("says sequence floor %d (set floor %d)", h.floor, h.setFloor)
	case h.setFloor != 0 && (h.setCount == 0 || h.setIndex != 0):
		return damaged("says set floor %d outside member 0 of a set", h.setFloor)
	case from != 0 && to != 0 && (from < HeaderSize || from >= to || to > size):
		return damaged("says the dirty range is [%d, %d), outside [%d, %d]", from, to, HeaderSize, size)
	case from > size || to > size:
		return damaged("says a dirty range end %d or %d beyond %d", from, to, size)
	case closed != 0 && (closed < HeaderSize || closed > hi || closed%8 != 0):
		return damaged("says it was closed with its tail at %d (prepared end %d)", closed, hi)
	case !isZero(b[wordsEnd:]):
		return damaged("has non-zero reserved bytes")
	}
	h.hi, h.closed = int(hi), int(closed)
	if from != 0 && to != 0 {
		// A range with one word zero is none: a crash let one store
		// through without the other, before the leftovers were made or
		// after they were gone.
		h.dirtyFrom, h.dirtyTo = int(from), int(to)
	}
	return block{state: blockSound, h: h}
}

// sameGeometry reports whether two sound blocks describe the same log.
func sameGeometry(a, b *header) bool {
	return a.geometry == b.geometry && a.setID == b.setID && a.setIndex == b.setIndex && a.setCount == b.setCount
}

// merge combines two sound copies of the header, which a crash may have
// left apart in one word store (see the comment at the top): the later
// value of each word.
func merge(a, b header) (header, error) {
	h := a
	h.hi = max(a.hi, b.hi)
	h.pass, h.floor, h.setFloor = max(a.pass, b.pass), max(a.floor, b.floor), max(a.setFloor, b.setFloor)
	switch {
	case a.dirtyTo == 0:
		h.dirtyFrom, h.dirtyTo = b.dirtyFrom, b.dirtyTo
	case b.dirtyTo != 0:
		h.dirtyFrom, h.dirtyTo = min(a.dirtyFrom, b.dirtyFrom), max(a.dirtyTo, b.dirtyTo)
	}
	if a.closed != 0 && b.closed != 0 && a.closed != b.closed {
		return h, fmt.Errorf("the header says the log was closed with its tail at %d, its copy at %d", a.closed, b.closed)
	}
	h.closed = max(a.closed, b.closed)
	if h.closed > h.hi {
		return h, fmt.Errorf("the log was closed with its tail at %d, past the prepared end %d", h.closed, h.hi)
	}
	return h, nil
}

// readHeader reads the header at base from whichever of its two copies is
// sound (both merged when both are) and checks that the area it describes
// fits in r. note says which copy was not sound and why ("" when both
// were): syncHeader rewrites it from the other.
//
// Which kind of error says what the area holds: ErrNoLog when it holds
// nothing (zeroes where the header and the first entries would be) or a
// Create that did not finish; ErrBadFormat for another kind of structure,
// another format version, or bytes that are no walog header in either
// block; ErrCorrupt for a walog header damaged in both copies, or zeroed
// over data; ErrTooSmall for a sound header of a log longer than the
// region.
func readHeader(r *persist.Region, base, size int) (h header, note string, err error) {
	b, err := r.Slice(base, HeaderSize)
	if err != nil {
		return h, "", fmt.Errorf("%w: no room for a log header (%d bytes) at offset %d of a %d-byte region", ErrInvalid, HeaderSize, base, r.Size())
	}
	p := decodeBlock(b[:BlockSize], base, roleHeader)
	switch p.state {
	case blockSound:
		c := decodeBlock(b[BlockSize:], base, roleCopy)
		h = p.h
		if c.state != blockSound {
			note = "the header's copy " + c.why
		} else {
			if !sameGeometry(&p.h, &c.h) {
				return h, "", fmt.Errorf("%w: log header at offset %d: the header and its copy describe different logs; nothing was changed", ErrCorrupt, base)
			}
			if h, err = merge(p.h, c.h); err != nil {
				return h, "", fmt.Errorf("%w: log header at offset %d: %v; nothing was changed", ErrCorrupt, base, err)
			}
		}
	case blockCreating:
		return h, "", fmt.Errorf("%w (offset %d): a Create did not finish here; Create the log again", ErrNoLog, base)
	case blockForeign, blockIsCopy:
		return h, "", fmt.Errorf("%w: the header at offset %d %s, not a walog log", ErrBadFormat, base, p.why)
	case blockOldVersion:
		return h, "", fmt.Errorf("%w: the log at offset %d is of format version %d; this build reads version %d only (recreate the log, or open it with the build that wrote it)", ErrBadFormat, base, p.version, formatVersion)
	default:
		c := decodeBlock(b[BlockSize:], base, roleCopy)
		switch {
		case c.state == blockSound:
			h, note = c.h, "the header "+p.why
		case c.state == blockCreating:
			return h, "", fmt.Errorf("%w (offset %d): a Create did not finish here; Create the log again", ErrNoLog, base)
		case p.state == blockZero && c.state == blockZero && isZero(area(r, base, size)):
			return h, "", fmt.Errorf("%w (offset %d): the area is empty; Create a log", ErrNoLog, base)
		case p.state == blockOther && (c.state == blockOther || c.state == blockZero || c.state == blockForeign):
			return h, "", fmt.Errorf("%w: the header at offset %d %s, not a walog log", ErrBadFormat, base, p.why)
		default:
			what := "; the area holds data"
			if p.state == blockZero && c.state == blockZero {
				what = fmt.Sprintf(" (zeroed), but the area is not empty: byte %d is not zero", base+firstNonZero(area(r, base, size)))
			}
			return h, "", fmt.Errorf("%w: log header at offset %d: the header %s and its copy %s%s: a damaged log, not an empty area. Nothing was changed", ErrCorrupt, base, p.why, c.why, what)
		}
	}
	if h.size > r.Size()-base {
		// The header's checksum holds: the region is short, not the header
		// damaged.
		return h, "", fmt.Errorf("%w: the log at offset %d is %d bytes, the region has %d from there: map the whole file (is it truncated?)", ErrTooSmall, base, h.size, r.Size()-base)
	}
	return h, note, nil
}

// area is what decides whether an area without a header is empty: all
// of it, size bytes from base, or to the end of the region when size is
// 0 (the header that would say is gone). Damage that zeroes the header
// and the first entries leaves the later ones, so the whole area is read.
func area(r *persist.Region, base, size int) []byte {
	end := r.Size()
	if size > 0 {
		end = min(end, base+size)
	}
	return r.Bytes()[base:end]
}

func firstNonZero(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}

// match checks the options a caller gave Open against the header: a
// contradiction is ErrInvalid (the options are wrong, the log is sound).
func (h *header) match(o *Options) error {
	switch {
	case o.Format != 0 && o.Format != h.format:
		return fmt.Errorf("%w: the log is %s, Options.Format asks %s", ErrInvalid, h.format, o.Format)
	case o.Size != 0 && o.Size != h.size:
		return fmt.Errorf("%w: the log is %d bytes, Options.Size asks %d", ErrInvalid, h.size, o.Size)
	case o.MaxEntry != 0 && o.MaxEntry != h.maxEntry:
		return fmt.Errorf("%w: the log's MaxEntry is %d, Options.MaxEntry asks %d", ErrInvalid, h.maxEntry, o.MaxEntry)
	case o.Align != 0 && o.Align != h.align:
		return fmt.Errorf("%w: the log's entries are %d-byte aligned, Options.Align asks %d", ErrInvalid, h.align, o.Align)
	case o.MaxBatch != 0 && o.MaxBatch != h.maxBatch:
		return fmt.Errorf("%w: the log's MaxBatch is %d, Options.MaxBatch asks %d", ErrInvalid, h.maxBatch, o.MaxBatch)
	}
	return nil
}

// state is the header as the log holds it now: what syncHeader writes and
// Check compares with the media.
func (l *Log) state() header {
	h := l.hdr
	h.hi = l.hi - l.base
	h.pass, h.floor, h.setFloor = l.pass, l.floor, l.setFloor
	h.dirtyFrom, h.dirtyTo = 0, 0
	if l.dirtyTo != 0 {
		h.dirtyFrom, h.dirtyTo = l.dirtyFrom-l.base, l.dirtyTo-l.base
	}
	h.closed = 0
	if l.closedTail != 0 {
		h.closed = l.closedTail - l.base
	}
	return h
}

// storeWord writes one changing word of the header, a checked word, into
// both copies with failure-atomic stores, and persists them (one barrier).
func (l *Log) storeWord(off int, v uint64) error {
	return l.storeWords(off, checkedWord(v))
}

// storeWords writes the checked words ws from off into both copies of the
// header and persists them with one barrier. A crash may let any of the
// stores through without the others; Open's merge takes each word's later
// value, which is a state of the interrupted operation either way.
func (l *Log) storeWords(off int, ws ...uint64) error {
	n := 8 * len(ws)
	p := l.mem[l.base+off : l.base+off+n]
	c := l.mem[l.base+BlockSize+off : l.base+BlockSize+off+n]
	copyToo := l.variant != variantCopyAtClose
	for i, w := range ws {
		persist.Store64(p[8*i:], w)
		if copyToo {
			persist.Store64(c[8*i:], w)
		}
	}
	if err := l.r.Flush(p); err != nil {
		return err
	}
	if copyToo {
		if err := l.r.Flush(c); err != nil {
			return err
		}
	}
	return l.r.Drain()
}

// syncHeader rewrites each copy of the header that differs from what the
// log holds (state): a block whose fixed part differs (damaged, zeroed,
// another role) gets its fields, persisted, then its magic, persisted; a
// block whose words differ gets them, in one barrier for both copies.
// It returns whether it wrote.
func (l *Log) syncHeader() (bool, error) {
	h := l.state()
	var want [BlockSize]byte
	wrote := false
	words := false
	for role := range byte(2) {
		h.encode(want[:], role)
		binary.LittleEndian.PutUint64(want[:], magic)
		b := l.mem[l.base+int(role)*BlockSize : l.base+int(role+1)*BlockSize]
		if bytes.Equal(b, want[:]) {
			continue
		}
		wrote = true
		if !bytes.Equal(b[:offHi], want[:offHi]) {
			if err := l.r.Copy(b[8:], want[8:], 0); err != nil {
				return wrote, err
			}
			persist.Store64(b, magic)
			if err := l.r.Persist(b[:8]); err != nil {
				return wrote, err
			}
			continue
		}
		for off := offHi; off < BlockSize; off += 8 {
			if w := binary.LittleEndian.Uint64(want[off:]); persist.Load64(b[off:]) != w {
				persist.Store64(b[off:], w)
				if err := l.r.Flush(b[off : off+8]); err != nil {
					return wrote, err
				}
				words = true
			}
		}
	}
	if words {
		return wrote, l.r.Drain()
	}
	return wrote, nil
}

// headerDiffers reports whether syncHeader would write.
func (l *Log) headerDiffers() bool {
	h := l.state()
	var want [BlockSize]byte
	for role := range byte(2) {
		h.encode(want[:], role)
		binary.LittleEndian.PutUint64(want[:], magic)
		if !bytes.Equal(l.mem[l.base+int(role)*BlockSize:l.base+int(role+1)*BlockSize], want[:]) {
			return true
		}
	}
	return false
}

// setDirty records [from, to) (region offsets) as the dirty range: Open
// accepts anything it finds there past the end of the log.
func (l *Log) setDirty(from, to int) error {
	return l.storeDirty(from, to, uint64(from-l.base), uint64(to-l.base))
}

// clearDirty clears the dirty range once its leftovers are gone.
func (l *Log) clearDirty() error { return l.storeDirty(0, 0, 0, 0) }

// storeDirty writes both words of the dirty range into both copies in one
// barrier. A crash may let some through without the others: a range with
// a zero end counts as none, and Open merges the copies. That is safe both
// ways: the range is set before the leftovers are made and cleared after
// they are gone.
func (l *Log) storeDirty(from, to int, a, b uint64) error {
	if err := l.storeWords(offDirtyFrom, checkedWord(a), checkedWord(b)); err != nil {
		return err
	}
	l.dirtyFrom, l.dirtyTo = from, to
	return nil
}
