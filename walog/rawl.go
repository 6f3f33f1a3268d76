package walog

import (
	"encoding/binary"
	"fmt"
)

// RAWL entry (8-byte aligned, little-endian); v is the validity sense of
// the current pass (pass&1), and bit 0 of every word is v:
//
//	0   v | len<<1       data length (1..MaxEntry); bits 33..63 zero
//	8   v | seq<<1       sequence number (63 bits)
//	16  data words       the data in 8-byte chunks x (the last one padded
//	                     with zero bytes), each stored as x&^1 | v
//	    collector        after every 63 data words and after the last,
//	                     partial group of k words: v | b_j<<(k-j), where
//	                     b_j is bit 0 of the group's j-th data word (the
//	                     first word's bit highest, the last's in bit 1)
//
// This is the torn-bit log of Mnemosyne in the form [VR] measured (bit 0
// as the validity bit, collector words; ALGORITHMS.md 3.3 and open
// question 19). Every word of an entry carries v, and every word of free
// space carries !v, so after a crash an entry is valid exactly when all
// its words carry v — whatever subset of them reached the media. Passes
// alternate the sense: a new pass needs no zeroing, because every word of
// the previous pass (padded to the end of the log before the pass flips,
// alignment gaps filled too) reads as invalid. One barrier per append; the cost is the bit packing.
const rawlGroup = 63

// writeRAWL stages one RAWL entry (no fence).
func (l *Log) writeRAWL(seq uint64, p []byte) error {
	v := l.v
	if err := l.room(entryHeader); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(l.stage[l.eN:], v|uint64(len(p))<<1)
	binary.LittleEndian.PutUint64(l.stage[l.eN+8:], v|seq<<1)
	l.eN += entryHeader
	for len(p) > 0 {
		k := min(rawlGroup, (len(p)+7)>>3)
		if err := l.room((k + 1) * 8); err != nil {
			return err
		}
		dst := l.stage[l.eN : l.eN+(k+1)*8]
		src := p[:min(len(p), k*8)&^7]
		p = p[len(src):]
		partial := len(src) < k*8 // the group ends with the last, partial word
		c := rawlWords(dst[:len(src)], src, v)
		dst = dst[len(src):]
		if partial {
			var x uint64
			for i, b := range p {
				x |= uint64(b) << (8 * i)
			}
			binary.LittleEndian.PutUint64(dst, x&^1|v)
			c = c<<1 | x&1
			dst, p = dst[8:], nil
		}
		binary.LittleEndian.PutUint64(dst, c<<1|v)
		l.eN += (k + 1) * 8
	}
	return nil
}

// rawlWords stores the whole words of src into dst (as long) with bit 0
// replaced by v, and returns their bits 0, the first word's highest. A
// leaf of its own, so that its loop keeps everything in registers (inlined
// into writeRAWL it spilled its counters, 2-3 times slower).
//
//go:noinline
func rawlWords(dst, src []byte, v uint64) uint64 {
	var c uint64
	dst = dst[:len(src)]
	for i := 0; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i : i+8])
		binary.LittleEndian.PutUint64(dst[i:i+8], x&^1|v)
		c = c<<1 | x&1
	}
	return c
}

// decodeRAWL checks the RAWL entry at off (see decode).
func (l *Log) decodeRAWL(off, limit int) (int, uint64, int, error) {
	v := l.v
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	if w0&1 != v {
		return 0, 0, 0, errEnd
	}
	if w0>>33 != 0 {
		return 0, 0, 0, fmt.Errorf("%w: rawl entry at offset %d: header %#x has reserved bits set", ErrCorrupt, off, w0)
	}
	n := int(w0 >> 1)
	fp, err := l.checkLen(off, limit, n)
	if err != nil {
		return 0, 0, 0, err
	}
	w1 := binary.LittleEndian.Uint64(l.mem[off+8:])
	if w1&1 != v {
		return 0, 0, 0, fmt.Errorf("%w: rawl entry at offset %d (%d bytes): sequence word has the wrong validity bit (torn)", ErrCorrupt, off, n)
	}
	if _, err := l.rawlData(off, n, nil, false); err != nil {
		return 0, 0, 0, err
	}
	return n, w1 >> 1, fp, nil
}

// rawlData checks the data words of the RAWL entry at off and, with out,
// appends the decoded data to dst[:0].
func (l *Log) rawlData(off, n int, dst []byte, out bool) ([]byte, error) {
	v := l.v
	dst = dst[:0]
	mem := l.mem[off+entryHeader : off+l.format.footprint(n)]
	left := n
	for pos := 0; left > 0; {
		k := min(rawlGroup, (left+7)>>3)
		g := mem[pos : pos+(k+1)*8]
		c := binary.LittleEndian.Uint64(g[k*8:])
		if c&1 != v {
			return dst, l.tornWord(off, off+entryHeader+pos+k*8)
		}
		if c>>(k+1) != 0 {
			return dst, fmt.Errorf("%w: rawl entry at offset %d: collector word has bits beyond its group", ErrCorrupt, off)
		}
		for j := range k {
			w := binary.LittleEndian.Uint64(g[j*8:])
			if w&1 != v {
				return dst, l.tornWord(off, off+entryHeader+pos+j*8)
			}
			x := w&^1 | c>>(k-j)&1
			if left < 8 {
				if x>>(8*left) != 0 {
					return dst, fmt.Errorf("%w: rawl entry at offset %d: non-zero padding", ErrCorrupt, off)
				}
				if out {
					for i := range left {
						dst = append(dst, byte(x>>(8*i)))
					}
				}
				left = 0
				break
			}
			if out {
				dst = binary.LittleEndian.AppendUint64(dst, x)
			}
			left -= 8
		}
		pos += (k + 1) * 8
	}
	return dst, nil
}

func (l *Log) tornWord(off, at int) error {
	return fmt.Errorf("%w: rawl entry at offset %d: word at offset %d has the wrong validity bit (torn)", ErrCorrupt, off, at)
}
