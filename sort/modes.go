package sort

import (
	"encoding/binary"
)

// The pieces every mode uses: KLV sources for the reader pool, the arena
// that carves the budget, and the write buffers (onepass.go, mergepass.go
// and ems.go are the modes; losertree.go their merge).

// klvSource walks KLV records from byte off of src, at most maxN records
// and maxBytes bytes, and cuts them into about parts slices for the reader
// pool. It returns the source (pointers are offsets in src) and the offset
// after the last record taken.
func (j *job) klvSource(src []byte, off, maxN, maxBytes int64, parts int) (source, int64) {
	k := int64(j.l.k)
	perN := (maxN + int64(parts) - 1) / int64(parts)
	perB := (maxBytes + int64(parts) - 1) / int64(parts)
	s := source{src: src}
	start := off
	cur := klvPart{off: off}
	for s.n < maxN && off < int64(len(src)) {
		sz := k + klvHeader + int64(binary.LittleEndian.Uint32(src[off+k:]))
		if off+sz-start > maxBytes {
			break
		}
		if cur.n >= perN || (cur.n > 0 && off+sz-cur.off > perB) {
			s.parts = append(s.parts, cur)
			cur = klvPart{off: off}
		}
		cur.n++
		s.n++
		off += sz
	}
	if cur.n > 0 {
		s.parts = append(s.parts, cur)
	}
	return s, off
}

// arena carves 64-byte aligned pieces out of a buffer.
type arena struct {
	b   []byte
	off int64
}

func (a *arena) take(n int64) []byte {
	p := a.b[a.off : a.off+n : a.off+n]
	a.off = (a.off + n + 63) &^ 63
	return p
}

// rest returns everything not taken yet.
func (a *arena) rest() []byte {
	if a.off >= int64(len(a.b)) {
		return nil
	}
	return a.b[a.off:]
}

// writeBuffers carves the write buffer(s) and the gather's scratch out of
// a: wb bytes per buffer, one buffer or two with overlap, and ord words.
func (j *job) writeBuffers(a *arena) ([][]byte, []uint64) {
	b := j.plan0
	bufs := [][]byte{a.take(b.wb)}
	if j.s.o.Overlap {
		bufs = append(bufs, a.take(b.wb))
	}
	return bufs, words(a.take(b.ord * 8))
}
