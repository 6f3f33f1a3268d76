package walog

import (
	"encoding/binary"
	"fmt"
)

// RAWL entry (8-byte aligned, little-endian); v is the validity sense of
// the current pass (pass&1), and bit 0 of every word is v:
//
//	0   v | n<<1 | more<<28 | crc<<32
//	                     data length n (bits 1..27), more flag (bit 28),
//	                     bits 29..31 zero, checksum (bits 32..63)
//	8   v | sw<<1        sequence word: sequence number, index in its
//	                     append (format.go)
//	16  data words       the data in 8-byte chunks x (the last one padded
//	                     with zero bytes), each stored as x&^1 | v
//	    collector        after every 63 data words and after the last,
//	                     partial group of k words: v | b_j<<(k-j), where
//	                     b_j is bit 0 of the group's j-th data word (the
//	                     first word's bit highest, the last's in bit 1)
//
// crc = crc32.Update(low half of word 0, Castagnoli, bytes 8..end): the
// CRC-32C of every stored word after the first, with the register preset
// from the first word's low half, so that it covers every bit of the entry
// but itself.
//
// This is the torn-bit log of Mnemosyne in the form [VR] measured (bit 0
// as the validity bit, collector words; [VR] §3.3). Every word of an
// entry carries v, and every word of free space carries !v, so after a
// crash an entry is complete exactly when all its words carry v —
// whatever subset of them reached the media. Passes
// alternate the sense: a new pass needs no zeroing, because every word of
// the previous pass (padded to the end of the log before the pass flips,
// alignment gaps filled too) reads as invalid. One barrier per append; the
// cost is the bit packing. The checksum catches flipped bits but validity
// bits, which recovery judges by what follows them (see tornRAWL).
const rawlGroup = 63

// rawlLow is the low half of a RAWL entry's first word.
func rawlLow(v uint64, n int, more bool) uint32 {
	lo := uint32(v) | uint32(n)<<1
	if more {
		lo |= 1 << 28
	}
	return lo
}

// rawlLenField turns the low half of a first word into a length field
// (bits 29..31 must be zero: the caller checks).
func rawlLenField(lo uint32) uint32 { return lenField(int(lo>>1&lenMask), lo&(1<<28) != 0) }

// writeRAWL stages one RAWL entry (no fence). When it fits in the stage it
// is checksummed there, in one pass over its stored words; a longer one
// is encoded twice, once to checksum it and once into the stage.
func (l *Log) writeRAWL(seq uint64, p []byte, more bool) error {
	v := l.v
	lo := rawlLow(v, len(p), more)
	fp := RAWL.footprint(len(p))
	if l.eN+fp > len(l.stage) {
		if err := l.spill(); err != nil {
			return err
		}
	}
	fast := l.eN+fp <= len(l.stage)
	var crc uint32
	if !fast && !l.noChecksum {
		crc = rawlCRC(lo, v, seq, p)
	}
	if err := l.room(entryHeader); err != nil {
		return err
	}
	start := l.eN
	binary.LittleEndian.PutUint64(l.stage[l.eN:], uint64(lo)|uint64(crc)<<32)
	binary.LittleEndian.PutUint64(l.stage[l.eN+8:], v|seq<<1)
	l.eN += entryHeader
	for len(p) > 0 {
		// rawlEncodeGroup, inline: a call per group costs on the hot path.
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
	if fast && !l.noChecksum {
		binary.LittleEndian.PutUint32(l.stage[start+4:], crcUpdate(lo, l.stage[start+8:start+fp]))
	}
	return nil
}

// rawlCRC is the checksum of a RAWL entry computed from its parts.
func rawlCRC(lo uint32, v, seq uint64, p []byte) uint32 {
	var g [(rawlGroup + 1) * 8]byte
	binary.LittleEndian.PutUint64(g[:], v|seq<<1)
	crc := crcUpdate(lo, g[:8])
	for len(p) > 0 {
		took, m := rawlEncodeGroup(g[:], p, v)
		crc = crcUpdate(crc, g[:m])
		p = p[took:]
	}
	return crc
}

// rawlEncodeGroup encodes the next group of p (up to 63 words and their
// collector) into dst and returns how many bytes of p it took and of dst
// it wrote: writeRAWL's loop body, for rawlCRC (TestChecksumTwins keeps
// the two in step).
func rawlEncodeGroup(dst, p []byte, v uint64) (int, int) {
	k := min(rawlGroup, (len(p)+7)>>3)
	dst = dst[:(k+1)*8]
	whole := min(len(p), k*8) &^ 7
	c := rawlWords(dst[:whole], p[:whole], v)
	rest, took := dst[whole:], whole
	if whole < k*8 {
		// The group ends with the last, partial word.
		var x uint64
		for i, b := range p[whole:] {
			x |= uint64(b) << (8 * i)
		}
		binary.LittleEndian.PutUint64(rest, x&^1|v)
		c = c<<1 | x&1
		rest, took = rest[8:], len(p)
	}
	binary.LittleEndian.PutUint64(rest, c<<1|v)
	return took, (k + 1) * 8
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
func (l *Log) decodeRAWL(off, limit int) (ent, error) {
	v := l.v
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	if w0&1 != v {
		return ent{}, errEnd
	}
	lo := uint32(w0)
	if lo>>29 != 0 {
		return ent{}, fmt.Errorf("%w: rawl entry at offset %d: first word %#x has reserved bits set", ErrCorrupt, off, w0)
	}
	e, err := l.checkLen(off, limit, rawlLenField(lo))
	if err != nil {
		return e, err
	}
	w1 := binary.LittleEndian.Uint64(l.mem[off+8:])
	if w1&1 != v {
		return e, l.tornWord(off, off+8)
	}
	e.seq, e.idx, _ = splitSeq(w1 >> 1)
	if _, err := l.rawlData(off, e.n, nil, false); err != nil {
		return e, err
	}
	crc := uint32(w0 >> 32)
	if !l.noChecksum {
		if want := crcUpdate(lo, l.mem[off+8:off+e.fp]); crc != want {
			return e, fmt.Errorf("%w: rawl entry at offset %d (%d bytes, seq %d): checksum %#08x, computed %#08x", ErrCorrupt, off, e.n, e.seq, crc, want)
		}
	} else if crc != 0 {
		return e, fmt.Errorf("%w: rawl entry at offset %d: checksum %#08x in a log without checksums", ErrCorrupt, off, crc)
	}
	return e, nil
}

// tornRAWL reports whether the RAWL entry at off, which failed its check,
// could be an append torn by a crash: its first word carries v (the entry
// is not the clean end), so its length is what was written and must be
// sound, and a word of it has the wrong validity bit (a word that never
// arrived). Whether such a word is missing or had its validity bit
// flipped cannot be told from the entry: the stale word a missing one
// leaves can differ from what was written in bit 0 alone (zeroed free
// space under a collector word of zero bits, or the same payload at the
// same place in the pass before). Recovery tells them apart by what
// follows (recover.go).
func (l *Log) tornRAWL(off int) bool {
	lo := uint32(binary.LittleEndian.Uint64(l.mem[off:]))
	if lo>>29 != 0 {
		return false
	}
	e, err := l.checkLen(off, l.hi, rawlLenField(lo))
	return err == nil && !l.isValidSense(l.mem[off:off+e.fp])
}

// rawlFlippedHead reports whether the invalid word at off, where the log
// seems to end, is the first word of a complete entry whose validity bit
// was flipped: with bit 0 set to v it starts an entry that passes its
// checksum with every validity bit set to v and whose sequence number
// follows (ok(seq)). The first word a crash leaves missing never does: it
// is clean free space (whose every pattern with bit 0 set to v has
// reserved bits set or a zero length) or a word of an earlier pass, and a
// first word of an earlier pass has a checksum over a smaller sequence
// number. Never true without checksums.
func (l *Log) rawlFlippedHead(off int, ok func(uint64) bool) bool {
	if l.noChecksum || off+entryHeader > l.hi {
		return false
	}
	v := l.v
	w0 := binary.LittleEndian.Uint64(l.mem[off:])&^1 | v
	lo := uint32(w0)
	if lo>>29 != 0 {
		return false
	}
	e, err := l.checkLen(off, l.hi, rawlLenField(lo))
	if err != nil || !ok(binary.LittleEndian.Uint64(l.mem[off+8:])>>1&seqMask) {
		return false
	}
	return rawlForcedCRC(lo, l.mem[off+8:off+e.fp], v) == uint32(w0>>32)
}

// rawlForcedCRC is the checksum of the stored words b with every validity
// bit set to v.
func rawlForcedCRC(lo uint32, b []byte, v uint64) uint32 {
	var buf [512]byte
	crc := lo
	for len(b) > 0 {
		m := min(len(b), len(buf))
		for i := 0; i < m; i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], binary.LittleEndian.Uint64(b[i:])&^1|v)
		}
		crc = crcUpdate(crc, buf[:m])
		b = b[m:]
	}
	return crc
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
	return fmt.Errorf("%w: rawl entry at offset %d: word at offset %d has the wrong validity bit", ErrCorrupt, off, at)
}
