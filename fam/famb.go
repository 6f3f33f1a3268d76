package fam

import "encoding/binary"

// A FAM block (FAMB) is one aligned 8-byte word, always written with a
// single 8-byte store, so it is either wholly old or wholly new after a
// crash:
//
//	bits 63..62  ver  2-bit version, incremented (mod 4) by every update
//	bits 61..31  old  the previous 31-bit value
//	bits 30..0   new  the current 31-bit value
//
// An object of n bytes (n a multiple of 4) is cut into k = n/4
// little-endian 4-byte words w_j. Data FAMB j holds the low 31 bits of w_j.
// The top bits go to meta FAMBs: the data FAMBs come in groups of up to 31,
// each group followed by its meta FAMB, whose new field holds bit 31 of the
// group's word j in bit j (the paper's 16-byte example has the extra block
// fifth and says no more; the grouping beyond it is ours). A 16-byte
// object is 4 data FAMBs and 1 meta FAMB: 40 bytes, one cache line.
const (
	valBits   = 31
	valMask   = 1<<valBits - 1
	oldMask   = valMask << valBits
	verShift  = 62
	groupSize = 31 // data FAMBs per meta FAMB
)

// blocks is the number of FAMBs of an object of size bytes.
func blocks(size int) int {
	k := size / 4
	return k + (k+groupSize-1)/groupSize
}

// stride is the bytes one object occupies in an array: its FAMBs, rounded
// up to whole cache lines so that every object starts on a line and a
// 16-byte object is one line, as in the paper's count of lines written
// (§3.4: 1, 2 and 3 lines for 16, 32 and 64 bytes).
func stride(size int) int { return (blocks(size)*8 + 63) &^ 63 }

// The FAMBs are read and written with load and store (word_64bit.go,
// word_32bit.go): one aligned 8-byte access each, which the compiler
// cannot split.

// next is the FAMB that replaces w when the update stores the 31-bit value
// x at version nv (already shifted into bits 63..62): the current new field
// becomes old, the previous old is dropped.
func next(w, nv, x uint64) uint64 { return nv | (w&valMask)<<valBits | x }

// versionsOf returns the set of versions found in ws as a 4-bit mask.
func versionsOf(ws []uint64) uint {
	var m uint
	for i := range ws {
		m |= 1 << (load(&ws[i]) >> verShift)
	}
	return m
}

// single reports whether the version mask holds exactly one version.
func single(m uint) bool { return m != 0 && m&(m-1) == 0 }

// update stores val (len(val) == 4*k for the object's k data FAMBs) as the
// next version of the FAM whose blocks are ws. It stores nothing and
// returns false when the blocks do not share one version. The caller
// flushes and fences.
func update(ws []uint64, val []byte) bool {
	v := load(&ws[0]) >> verShift
	for i := 1; i < len(ws); i++ {
		if load(&ws[i])>>verShift != v {
			return false
		}
	}
	nv := (v + 1) << verShift // version 3 + 1 overflows to 0: mod 4 for free
	b := 0
	for j0 := 0; j0 < len(val); j0 += 4 * groupSize {
		g := val[j0:min(j0+4*groupSize, len(val))]
		var top uint64
		for j := 0; j+4 <= len(g); j += 4 {
			x := binary.LittleEndian.Uint32(g[j:])
			top |= uint64(x>>31) << (j / 4)
			store(&ws[b], next(load(&ws[b]), nv, uint64(x)&valMask))
			b++
		}
		store(&ws[b], next(load(&ws[b]), nv, top))
		b++
	}
	return true
}

// update8 is update for 8-byte objects (2 data FAMBs + 1 meta), with the
// words kept in registers.
func update8(p *[3]uint64, x0, x1 uint32) bool {
	w0, w1, w2 := load(&p[0]), load(&p[1]), load(&p[2])
	if ((w0^w1)|(w0^w2))>>verShift != 0 {
		return false
	}
	nv := (w0>>verShift + 1) << verShift
	top := uint64(x0>>31) | uint64(x1>>31)<<1
	store(&p[0], next(w0, nv, uint64(x0)&valMask))
	store(&p[1], next(w1, nv, uint64(x1)&valMask))
	store(&p[2], next(w2, nv, top))
	return true
}

// update16 is update for 16-byte objects (4 data FAMBs + 1 meta, one cache
// line), with the words kept in registers.
func update16(p *[5]uint64, x0, x1, x2, x3 uint32) bool {
	w0, w1, w2, w3, w4 := load(&p[0]), load(&p[1]), load(&p[2]), load(&p[3]), load(&p[4])
	if ((w0^w1)|(w0^w2)|(w0^w3)|(w0^w4))>>verShift != 0 {
		return false
	}
	nv := (w0>>verShift + 1) << verShift
	top := uint64(x0>>31) | uint64(x1>>31)<<1 | uint64(x2>>31)<<2 | uint64(x3>>31)<<3
	store(&p[0], next(w0, nv, uint64(x0)&valMask))
	store(&p[1], next(w1, nv, uint64(x1)&valMask))
	store(&p[2], next(w2, nv, uint64(x2)&valMask))
	store(&p[3], next(w3, nv, uint64(x3)&valMask))
	store(&p[4], next(w4, nv, top))
	return true
}

// read16 decodes a 16-byte object; ok is false when its FAMBs do not share
// one version.
func read16(p *[5]uint64) (v [16]byte, ok bool) {
	w0, w1, w2, w3, w4 := load(&p[0]), load(&p[1]), load(&p[2]), load(&p[3]), load(&p[4])
	if ((w0^w1)|(w0^w2)|(w0^w3)|(w0^w4))>>verShift != 0 {
		return v, false
	}
	lo := w0&valMask | (w4&1)<<31 | (w1&valMask|(w4>>1&1)<<31)<<32
	hi := w2&valMask | (w4>>2&1)<<31 | (w3&valMask|(w4>>3&1)<<31)<<32
	binary.LittleEndian.PutUint64(v[0:], lo)
	binary.LittleEndian.PutUint64(v[8:], hi)
	return v, true
}

// read8 decodes an 8-byte object as a little-endian uint64; ok is false
// when its FAMBs do not share one version.
func read8(p *[3]uint64) (uint64, bool) {
	w0, w1, w2 := load(&p[0]), load(&p[1]), load(&p[2])
	if ((w0^w1)|(w0^w2))>>verShift != 0 {
		return 0, false
	}
	return w0&valMask | (w2&1)<<31 | (w1&valMask|(w2>>1&1)<<31)<<32, true
}

// decode writes the value held in the new fields of ws into dst
// (len(dst) == 4*k). It does not look at versions.
func decode(ws []uint64, dst []byte) {
	b := 0
	for j0 := 0; j0 < len(dst); j0 += 4 * groupSize {
		g := dst[j0:min(j0+4*groupSize, len(dst))]
		k := len(g) / 4
		top := load(&ws[b+k])
		for j := range k {
			x := uint32(load(&ws[b+j])&valMask) | uint32(top>>j&1)<<31
			binary.LittleEndian.PutUint32(g[4*j:], x)
		}
		b += k + 1
	}
}

// aheadOf returns, for a mask of exactly two versions, the one that is one
// step ahead of the other (mod 4). ok is false for any other mask with more
// than one version: versions two apart, or three or four versions, which
// no crash of a single-writer FAM can leave.
func aheadOf(m uint) (ahead uint64, ok bool) {
	switch m {
	case 0b0011:
		return 1, true
	case 0b0110:
		return 2, true
	case 0b1100:
		return 3, true
	case 0b1001:
		return 0, true
	}
	return 0, false
}

// rollback brings the FAMBs of one object back to one version: when two
// adjacent versions a and a+1 are present, every FAMB at a+1 ran ahead of a
// crash and gets version a and new = old (the paper's rollback, §3.4.3,
// which says nothing of old: it is kept, and equals new afterwards). A
// rolled-back FAMB matches the others, so running rollback again after a
// crash during recovery leaves it alone: recovery is idempotent. It returns whether it stored anything,
// and ok=false, storing nothing, for an impossible version mix. The caller
// flushes and fences.
func rollback(ws []uint64) (rolled, ok bool) {
	m := versionsOf(ws)
	if single(m) {
		return false, true
	}
	ahead, ok := aheadOf(m)
	if !ok {
		return false, false
	}
	behind := (ahead - 1) & 3 << verShift
	for i := range ws {
		w := load(&ws[i])
		if w>>verShift == ahead {
			store(&ws[i], behind|w&oldMask|(w>>valBits)&valMask)
		}
	}
	return true, true
}
