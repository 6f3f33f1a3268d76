package sort

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// An IndexMap ([WS] §3.2) is an array of (key, pointer) entries, plus the
// value length for KLV records so that output offsets can be prefix-summed
// without touching the input again. For fixed-size records the pointer is
// the record's index in the input (so 5 bytes name 2^40 records whatever
// their size); for KLV records it is the record's byte offset.
//
// On storage (run files) an entry is packed, with no padding:
//
//	key[K] | pointer[P] little-endian | value_len uint32 LE (KLV only)
//
// 15 bytes for gensort keys and 5-byte pointers. In DRAM the same fields
// are held in w = ceil((K+P+V)/8) machine words (two for gensort): read as
// one big-endian number of 64w bits, the key is its top 8K bits, the
// pointer the 8P bits above the value length, and the value length its
// low 8V bits, zeros in between. Comparing two entries' key bits is then a
// couple of integer compares, radix digits are shifts, and moving an
// entry is a register move instead of a memmove call — which is what the
// sort, the merge and the value gather spend their time on.
type layout struct {
	k, p int    // key and pointer bytes (p is 5 or 8)
	klv  bool   // entries carry the value length
	v    int    // bytes of value length carried: 4 for KLV, else 0
	e    int    // bytes of a packed entry (run files): k+p+v
	w    int    // words of an in-memory entry
	pm   uint64 // mask of the pointer's 8p bits
	kb   uint   // key bits: 8k
	// km[i] masks the key bits of word i (0 past the key).
	km [MaxKeySize/8 + 2]uint64
}

func newLayout(k, p int, klv bool) layout {
	l := layout{k: k, p: p, klv: klv, kb: 8 * uint(k)}
	if klv {
		l.v = klvHeader
	}
	l.e = k + p + l.v
	l.w = (l.e + 7) / 8
	l.pm = ^uint64(0)
	if p < 8 {
		l.pm = 1<<(8*uint(p)) - 1
	}
	for i := 0; i < l.w; i++ {
		bitsIn := int(l.kb) - 64*i
		switch {
		case bitsIn >= 64:
			l.km[i] = ^uint64(0)
		case bitsIn > 0:
			l.km[i] = ^uint64(0) << (64 - uint(bitsIn))
		}
	}
	return l
}

// ew is the size of an in-memory entry in bytes.
func (l *layout) ew() int64 { return int64(l.w) * 8 }

// maxPtr is the largest pointer the layout can hold.
func (l *layout) maxPtr() uint64 { return l.pm }

// wide reports whether entries are two words with the pointer in the low
// bits of the second: the gensort layout, which has specialised loops.
func (l *layout) wide() bool { return l.w == 2 && l.v == 0 }

// words views a byte buffer (8-byte aligned: mapped or carved at aligned
// offsets) as machine words.
func words(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

// w2 is an entry of the wide layout.
type w2 struct{ hi, lo uint64 }

// words2 views wide entries as words.
func words2(e []w2) []uint64 {
	if len(e) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(e))), 2*len(e))
}

func asW2(b []uint64) []w2 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*w2)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

func (l *layout) ptr(e []uint64) uint64 {
	last := e[l.w-1]
	if l.v == 0 {
		return last & l.pm
	}
	return (last>>32 | e[l.w-2]<<32) & l.pm
}

func (l *layout) vlen(e []uint64) uint32 { return uint32(e[l.w-1]) }

// setEntry encodes key, pointer and value length into e.
func (l *layout) setEntry(e []uint64, key []byte, ptr uint64, vlen uint32) {
	k := l.k
	i := 0
	for ; (i+1)*8 <= k; i++ {
		e[i] = binary.BigEndian.Uint64(key[8*i:])
	}
	for j := i; j < l.w; j++ {
		e[j] = 0
	}
	for b := 8 * i; b < k; b++ {
		e[i] |= uint64(key[b]) << (56 - 8*uint(b-8*i))
	}
	if l.v == 0 {
		e[l.w-1] |= ptr
		return
	}
	e[l.w-1] |= uint64(vlen) | ptr<<32
	e[l.w-2] |= ptr >> 32
}

// keyTo writes the entry's key bytes to dst.
func (l *layout) keyTo(dst []byte, e []uint64) {
	k := l.k
	i := 0
	for ; (i+1)*8 <= k; i++ {
		binary.BigEndian.PutUint64(dst[8*i:], e[i])
	}
	for b := 8 * i; b < k; b++ {
		dst[b] = byte(e[i] >> (56 - 8*uint(b-8*i)))
	}
}

// pack writes the entry in its run-file form (l.e bytes) to dst.
func (l *layout) pack(dst []byte, e []uint64) {
	l.keyTo(dst, e)
	p := l.ptr(e)
	if l.p == 8 {
		binary.LittleEndian.PutUint64(dst[l.k:], p)
	} else {
		b := dst[l.k : l.k+5]
		binary.LittleEndian.PutUint32(b, uint32(p))
		b[4] = byte(p >> 32)
	}
	if l.klv {
		binary.LittleEndian.PutUint32(dst[l.k+l.p:], l.vlen(e))
	}
}

// unpack decodes a run-file entry (l.e bytes) into e.
func (l *layout) unpack(e []uint64, src []byte) {
	var p uint64
	if l.p == 8 {
		p = binary.LittleEndian.Uint64(src[l.k:])
	} else {
		b := src[l.k : l.k+5]
		p = uint64(binary.LittleEndian.Uint32(b)) | uint64(b[4])<<32
	}
	var vl uint32
	if l.klv {
		vl = binary.LittleEndian.Uint32(src[l.k+l.p:])
	}
	l.setEntry(e, src, p, vl)
}

// packRun converts n in-memory entries at the start of b, in place, into
// their packed form (which is never longer), front to back. It returns the
// packed bytes, an alias of b.
func (l *layout) packRun(b []uint64, n int64) []byte {
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), len(b)*8)
	e := int64(l.e)
	w := int64(l.w)
	if l.wide() && l.k == 10 && l.p == 5 {
		// Gensort: 8 + 2 key bytes and 5 pointer bytes; the 15 bytes of
		// entry i never overlap the words of entry i+1 or later.
		for i := int64(0); i < n; i++ {
			hi, lo := b[2*i], b[2*i+1]
			d := raw[i*15 : i*15+15]
			binary.BigEndian.PutUint64(d, hi)
			binary.BigEndian.PutUint16(d[8:], uint16(lo>>48))
			binary.LittleEndian.PutUint32(d[10:], uint32(lo))
			d[14] = byte(lo >> 32)
		}
		return raw[:n*15]
	}
	var tmp [MaxKeySize/8 + 2]uint64
	for i := int64(0); i < n; i++ {
		ent := tmp[:w]
		copy(ent, b[i*w:i*w+w])
		l.pack(raw[i*e:i*e+e], ent)
	}
	return raw[:n*e]
}

// unpackRun decodes len(dst)/w packed entries from src into dst.
func (l *layout) unpackRun(dst []uint64, src []byte) {
	n := len(dst) / l.w
	if l.wide() && l.k == 10 && l.p == 5 {
		d := asW2(dst)
		for i := 0; i < n; i++ {
			s := src[i*15 : i*15+15]
			d[i] = w2{binary.BigEndian.Uint64(s),
				uint64(binary.BigEndian.Uint16(s[8:]))<<48 | uint64(binary.LittleEndian.Uint32(s[10:])) | uint64(s[14])<<32}
		}
		return
	}
	for i := 0; i < n; i++ {
		l.unpack(dst[i*l.w:(i+1)*l.w], src[i*l.e:])
	}
}

// top returns the 64 entry bits starting at key bit bit (0 = the most
// significant bit of the key).
func (l *layout) top(e []uint64, bit uint) uint64 {
	i := bit >> 6
	off := bit & 63
	x := e[i] << off
	if off != 0 && int(i)+1 < l.w {
		x |= e[i+1] >> (64 - off)
	}
	return x
}

// top2 is top for the wide layout.
func top2(e w2, bit uint) uint64 {
	if bit < 64 {
		return e.hi<<bit | e.lo>>(64-bit)
	}
	return e.lo << (bit - 64)
}

// keyLess compares the keys of two entries.
func (l *layout) keyLess(a, b []uint64) bool {
	for i := 0; i < l.w; i++ {
		m := l.km[i]
		if x, y := a[i]&m, b[i]&m; x != y {
			return x < y
		}
	}
	return false
}

// keyCmp2 compares the keys of two wide entries (mhi, mlo: key masks).
func keyLess2(a, b w2, mhi, mlo uint64) bool {
	if x, y := a.hi&mhi, b.hi&mhi; x != y {
		return x < y
	}
	return a.lo&mlo < b.lo&mlo
}

// firstBits picks the width of the first radix digit: about 16K entries
// per bucket (the first-level scatter then writes to a few thousand
// places at most, which stay in cache, and a bucket fits a sorter's
// scratch), between 1 and 12 bits, never more than the key has.
func firstBits(n int64, k int) uint {
	b := bits.Len64(uint64(n))
	b -= 13
	b = max(1, min(b, 12))
	return min(uint(b), 8*uint(k))
}
