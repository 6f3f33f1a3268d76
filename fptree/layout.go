package fptree

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/braid-pm/braid/internal/pmheader"
)

// The area of a tree, from Options.Offset (the README draws it):
//
//	  0  header line (internal/pmheader): magic "braidFPT", format 1,
//	     flags 3 (flagBackLinks: leaves with prev; flagMark: the mark
//	     in the log line), size = slots per leaf, stride = bytes per
//	     leaf, count = leaves, aux 0
//	 64  log line: the split micro log (word 0), the free micro log
//	     (word 1), the mark (word 2: the highest leaf number ever given
//	     out since Create, 0 when only the head was, in the low 32 bits,
//	     its complement in the high 32), the rest zero
//	128  leaf 0 (the head of the chain, never freed), leaf 1, ...
//
// A leaf, m slots, every field little-endian:
//
//	  0  bitmap  u64  bit i set: slot i holds a key (the commit word)
//	  8  next    u64  the next leaf's number in key order; 0: the last
//	 16  lo      u64  the lowest key the leaf may hold (0 for leaf 0)
//	 24  prev    u64  the previous leaf's number | linkedBit while the leaf
//	                  is in the chain; 0 in the head and in a free leaf
//	 32  fps     m    one fingerprint byte per slot (fingerprint)
//	kv   slots   m×16 key u64, value u64; kv = 32+m rounded up to 16
//
// and the leaf's bytes round up to 64. Keys are unsorted inside a leaf;
// the leaves of the chain are in key order (every key of a leaf is below
// the next leaf's lo).
//
// prev is a back link that only Open reads, to go on past a leaf whose
// first line is on poisoned media (media.go): the leaf that names the
// unreadable one as its linked predecessor is where the chain goes on.
// The lock of a leaf guards its next and its successor's prev; both
// change with the same fence (a split's link, a free's unlink) under the
// same micro log, whose redo sets them again, and a leaf leaves the chain
// with its prev cleared. A new leaf gets its linkedBit only once the
// split's log is durable, so the copy a crash left in a free leaf never
// has it (it has its old leaf's number without the bit).
//
// Open cross-checks the two directions (walk.go): each leaf of the chain
// must name its predecessor, linked, and no leaf up to the mark outside
// the chain may be linked: a damaged next, which skips or cuts off
// leaves, is found either way. Leaves past the mark were never given out
// and hold whatever the area held before Create; the mark is raised with
// a split's log (same fence) before the new leaf is linked, and again by
// the split's redo, so the chain never reaches past it.
const (
	logOff    = 64
	leavesOff = 128

	offBitmap = 0
	offNext   = 8
	offLo     = 16
	offPrev   = 24
	offFps    = 32

	// linkedBit marks a prev word of a leaf in the chain.
	linkedBit = 1 << 63
	// flagBackLinks (header flags) marks the leaf layout with prev; a
	// tree without it is of the layout before it, which this build does
	// not read.
	flagBackLinks = 1
	// flagMark (header flags) marks a tree that keeps the mark in the
	// log line (layout 3); a tree without it is of an older layout.
	flagMark = 2
	// markWord is the mark's word in the log line.
	markWord = 2
)

// markWordOf is the log line's word 2 for the mark m: m and its
// complement, so that no damage that zeroes or fills the word reads as a
// mark, and one 8-byte store changes it.
func markWordOf(m uint32) uint64 { return uint64(m) | uint64(^m)<<32 }

// markOf decodes the mark word w; ok is false when it is damaged.
func markOf(w uint64) (m uint32, ok bool) { return uint32(w), uint32(w>>32) == ^uint32(w) }

// linkedTo is the prev word of a leaf in the chain after leaf p.
func linkedTo(p uint32) uint64 { return uint64(p) | linkedBit }

var treeKind = pmheader.Kind{
	Magic: pmheader.Magic("braidFPT"), Flags: flagBackLinks | flagMark, Name: "FP-tree", Pkg: "fptree",
	NoArray: ErrNoTree, BadFormat: ErrBadFormat, Corrupt: ErrCorrupt, Invalid: ErrInvalid, TooSmall: ErrTooSmall,
}

// geom is the layout of a leaf of m slots.
type geom struct {
	m      int    // slots
	kv     int    // offset of slot 0's key
	stride int    // bytes per leaf, a multiple of 64
	head   int    // bytes of the lines holding bitmap, next, lo and fingerprints
	words  int    // 8-byte words of fingerprints to scan
	full   uint64 // the bitmap of a full leaf
}

func geometry(m int) geom {
	kv := (offFps + m + 15) &^ 15
	return geom{
		m:      m,
		kv:     kv,
		stride: (kv + 16*m + 63) &^ 63,
		head:   (offFps + m + 63) &^ 63,
		words:  (m + 7) / 8,
		full:   ^uint64(0) >> (64 - m),
	}
}

// fingerprint is the byte a slot keeps of its key's hash: the top byte
// of a multiplicative (Fibonacci) hash, which depends on every bit of the
// key.
func fingerprint(k uint64) byte { return byte((k * 0x9e3779b97f4a7c15) >> 56) }

// at returns the leaf's word at off. Leaves are 64-byte aligned (the
// region is page-aligned, the area a multiple of 64), so it is one load.
func at(p unsafe.Pointer, off int) uint64 {
	return *(*uint64)(unsafe.Add(p, off))
}

// word returns the 8 bytes at off of the leaf at p as a slice, for
// persist.Store64.
func word(p unsafe.Pointer, off int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(p, off)), 8)
}

// bytesAt returns n bytes at off of the leaf at p, for Flush and Copy.
func bytesAt(p unsafe.Pointer, off, n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(p, off)), n)
}

func (g *geom) key(p unsafe.Pointer, i int) uint64 { return at(p, g.kv+16*i) }
func (g *geom) val(p unsafe.Pointer, i int) uint64 { return at(p, g.kv+16*i+8) }

// candidates returns the slots of the leaf at p whose fingerprint is fp,
// as a bitmap (a superset of the valid slots that match, which the
// caller masks with the leaf's bitmap). The fingerprints are compared
// eight at a time (SWAR).
func (g *geom) candidates(p unsafe.Pointer, fp byte) uint64 {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	b := uint64(fp) * 0x0101010101010101
	var c uint64
	for w := range g.words {
		x := at(p, offFps+8*w) ^ b
		// The high bit of each byte of z is set exactly where x has a
		// zero byte (no false positives, unlike the shorter
		// (x-0x01..)&^x form).
		z := ^((x&lo7 + lo7) | x | lo7)
		// Gather the eight high bits into one byte: the products of
		// distinct bits land on distinct powers of two, so nothing
		// carries into the top byte.
		c |= ((z >> 7) * 0x0102040810204080 >> 56) << (8 * w)
	}
	return c
}

// find returns the slot of key k in the leaf at p whose bitmap is bm, or
// -1, and how many keys it compared (the probes: one per slot whose
// fingerprint matched, up to the one that holds k).
func (g *geom) find(p unsafe.Pointer, bm, k uint64) (slot, probes int) {
	c := g.candidates(p, fingerprint(k)) & bm
	for c != 0 {
		i := bits.TrailingZeros64(c)
		probes++
		if g.key(p, i) == k {
			return i, probes
		}
		c &= c - 1
	}
	return -1, probes
}

// logWord packs a micro log entry: two leaf numbers in one word, written
// with one 8-byte store so that it never tears. a is the entry's own leaf
// plus one (never 0 in a set entry), b the other leaf.
func logWord(a, b uint32) uint64 { return uint64(a) + 1 | uint64(b)<<32 }

func unpackLog(w uint64) (a, b uint32, set bool) {
	if w == 0 {
		return 0, 0, false
	}
	return uint32(w) - 1, uint32(w >> 32), true
}

// putKV writes slot i's key and value (ordinary stores: the bitmap,
// stored after they are durable, is what makes them count).
func (g *geom) putKV(p unsafe.Pointer, i int, k, v uint64) {
	b := bytesAt(p, g.kv+16*i, 16)
	binary.LittleEndian.PutUint64(b, k)
	binary.LittleEndian.PutUint64(b[8:], v)
}
