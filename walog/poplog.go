package walog

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// PopLog entry (8-byte aligned, little-endian):
//
//	0      lenField u32    data length n (bits 0..26), more flag (bit 31)
//	4      pop u32         set bits of the entry but pop itself
//	8      sw u64          sequence word: sequence number, index in
//	                       its append (format.go)
//	16     data            n bytes
//	16+n   crc u32         CRC-32C of sw ‖ data, preset from lenField
//	20+n   pad             zero bytes up to a multiple of 8
//
// pop counts every bit the entry holds except its own: length field,
// sequence number, data, checksum and padding. The entry is written with
// streaming stores and persisted with one barrier. Free space is zero
// (zeroed ahead of the tail, torn tails zeroed by recovery), so after a
// crash every 8-byte word of the entry holds either what was written or
// zero: a missing word can only lower the recounted popcount, and a
// missing first word reads as the clean end of the log. The popcount
// decides torn or whole exactly, header words included ([VR] §3.3.1);
// the checksum catches what a crash cannot do —
// bits flipped in place — and tells recovery which failed entries are
// corrupt rather than torn (see tornPop).

// writePop stages one PopLog entry (no fence). When the entry fits in the
// stage it is laid out there, then checksummed and its bits counted in one
// pass over the staged sequence number and data (asm.PopCountCRC32C); a
// longer one is checksummed and counted from its parts first, then
// streamed through the stage. The header fields and the checksum are
// counted apart; padding is zero.
func (l *Log) writePop(seq uint64, p []byte, more bool) error {
	n := len(p)
	lf := lenField(n, more)
	fp := PopLog.footprint(n)
	if l.eN+fp > len(l.stage) {
		if err := l.spill(); err != nil {
			return err
		}
	}
	if l.eN+fp <= len(l.stage) {
		e := l.stage[l.eN : l.eN+fp]
		binary.LittleEndian.PutUint64(e, uint64(lf))
		binary.LittleEndian.PutUint64(e[8:], seq)
		// Zero the words that hold the end of the data, the checksum and
		// the padding (at most two), then copy the data over them.
		fillWords(e[(16+n)&^7:], 0)
		copy(e[16:], p)
		var pop int
		if !l.noChecksum {
			// The checksum and the count of the sequence number and the
			// data in one pass over the staged bytes.
			var crc uint32
			crc, pop = crcPopcount(lf, e[8:16+n])
			binary.LittleEndian.PutUint32(e[16+n:], crc)
			pop += bits.OnesCount32(crc) + bits.OnesCount32(lf)
		} else {
			// The count is taken over p and the header fields rather
			// than over the staged copy: it does not wait for the copy,
			// and the CPU overlaps them.
			pop = popcount(p) + bits.OnesCount32(lf) + bits.OnesCount64(seq)
		}
		if l.variant == variantPopNoHeader {
			pop -= bits.OnesCount32(lf) + bits.OnesCount64(seq)
		}
		binary.LittleEndian.PutUint32(e[4:], uint32(pop))
		l.eN += fp
		return nil
	}
	var crc uint32
	var pop int
	if !l.noChecksum {
		crc, pop = seqDataCRCPop(lf, seq, p)
	} else {
		pop = popcount(p)
	}
	pop += bits.OnesCount32(crc)
	if l.variant != variantPopNoHeader {
		pop += bits.OnesCount32(lf) + bits.OnesCount64(seq)
	}
	if err := l.room(entryHeader); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(l.stage[l.eN:], uint64(lf)|uint64(pop)<<32)
	binary.LittleEndian.PutUint64(l.stage[l.eN+8:], seq)
	l.eN += entryHeader
	if err := l.emitBytes(p); err != nil {
		return err
	}
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], crc)
	if err := l.emitBytes(c[:]); err != nil {
		return err
	}
	return l.pad8()
}

// decodePop checks the PopLog entry at off (see decode).
func (l *Log) decodePop(off, limit int) (ent, error) {
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	if w0 == 0 {
		return ent{}, errEnd
	}
	e, err := l.checkLen(off, limit, uint32(w0))
	if err != nil {
		return e, err
	}
	b := l.mem[off : off+e.fp]
	var ok bool
	e.seq, e.idx, ok = splitSeq(binary.LittleEndian.Uint64(b[8:]))
	pop := w0 >> 32
	if got := l.popRecount(b, pop); got != pop {
		return e, fmt.Errorf("%w: poplog entry at offset %d (%d bytes, seq %d): popcount %d, header says %d", ErrCorrupt, off, e.n, e.seq, got, pop)
	}
	crc := binary.LittleEndian.Uint32(b[16+e.n:])
	if !l.noChecksum {
		if want := crcUpdate(uint32(w0), b[8:16+e.n]); crc != want {
			return e, fmt.Errorf("%w: poplog entry at offset %d (%d bytes, seq %d): checksum %#08x, computed %#08x", ErrCorrupt, off, e.n, e.seq, crc, want)
		}
	} else if crc != 0 {
		return e, fmt.Errorf("%w: poplog entry at offset %d: checksum %#08x in a log without checksums", ErrCorrupt, off, crc)
	}
	if !isZero(b[20+e.n:]) {
		return e, fmt.Errorf("%w: poplog entry at offset %d: non-zero padding", ErrCorrupt, off)
	}
	if !ok {
		return e, fmt.Errorf("%w: poplog entry at offset %d: sequence word %#x has its reserved bit set", ErrCorrupt, off, binary.LittleEndian.Uint64(b[8:]))
	}
	return e, nil
}

// tornPop reports whether the PopLog entry at off, which failed its check,
// could be an append torn by a crash: its length field is sound (it lies
// in the first word, present since the entry is not the clean end), the
// recount falls short of pop (missing words only remove bits), a word of
// it reads zero (a missing word), and the checksum fails (a missing word
// with bits in it changes the checksummed bytes or the checksum).
// Anything else is corruption.
func (l *Log) tornPop(off int) bool {
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	e, err := l.checkLen(off, l.hi, uint32(w0))
	if err != nil {
		return false
	}
	b := l.mem[off : off+e.fp]
	if l.popRecount(b, w0>>32) >= w0>>32 || !hasZeroWord(b) {
		return false
	}
	return l.noChecksum || crcUpdate(uint32(w0), b[8:16+e.n]) != binary.LittleEndian.Uint32(b[16+e.n:])
}

// popRecount counts the bits of the entry b that its popcount pop covers.
func (l *Log) popRecount(b []byte, pop uint64) uint64 {
	if l.variant == variantPopNoHeader {
		return uint64(popcount(b[16:]))
	}
	return uint64(popcount(b) - bits.OnesCount64(pop))
}

// hasZeroWord reports whether b (whole words) holds an all-zero word.
func hasZeroWord(b []byte) bool {
	for ; len(b) >= 8; b = b[8:] {
		if binary.LittleEndian.Uint64(b) == 0 {
			return true
		}
	}
	return false
}
