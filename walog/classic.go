package walog

import (
	"encoding/binary"
	"fmt"
)

// Classic entry (8-byte aligned, little-endian):
//
//	0        lenField u32   data length n (bits 0..26), more flag (bit 31)
//	4        crc u32        CRC-32C of sw ‖ data, preset from lenField
//	8        sw u64         sequence word: sequence number, index in
//	                        its append (format.go)
//	16       data           n bytes, then zero bytes to a multiple of 8
//	16+pad   commit u64     ^(first word): never zero
//
// Append persists everything but the commit word (barrier 1), then writes
// the commit word and persists it (barrier 2). Free space is zero, so the
// commit word reads zero until barrier 2 and, once it is on the media,
// barrier 1 had completed: the entry is complete exactly when its commit
// word is present. Two barriers per append (or per batch). The checksum
// catches bits flipped in place, which the commit word cannot.

func classicCommit(w0 uint64) uint64 { return ^w0 }

// writeClassic stages one Classic entry with a zero commit word (no fence)
// and returns its first word; the caller writes the commit words after the
// first barrier.
func (l *Log) writeClassic(seq uint64, p []byte, more bool) (uint64, error) {
	n := len(p)
	lf := lenField(n, more)
	fp := Classic.footprint(n)
	if l.eN+fp > len(l.stage) {
		if err := l.spill(); err != nil {
			return 0, err
		}
	}
	if l.eN+fp <= len(l.stage) {
		e := l.stage[l.eN : l.eN+fp]
		binary.LittleEndian.PutUint64(e[8:], seq)
		// Zero the last data word (its padding) and the commit word, then
		// copy the data over them.
		fillWords(e[(16+n)&^7:], 0)
		copy(e[16:], p)
		w0 := uint64(lf)
		if !l.noChecksum {
			w0 |= uint64(crcUpdate(lf, e[8:16+n])) << 32
		}
		binary.LittleEndian.PutUint64(e, w0)
		l.eN += fp
		return w0, nil
	}
	w0 := uint64(lf)
	if !l.noChecksum {
		w0 |= uint64(seqDataCRC(lf, seq, p)) << 32
	}
	if err := l.room(entryHeader); err != nil {
		return 0, err
	}
	binary.LittleEndian.PutUint64(l.stage[l.eN:], w0)
	binary.LittleEndian.PutUint64(l.stage[l.eN+8:], seq)
	l.eN += entryHeader
	if err := l.emitBytes(p); err != nil {
		return 0, err
	}
	if err := l.pad8(); err != nil {
		return 0, err
	}
	if err := l.room(8); err != nil {
		return 0, err
	}
	binary.LittleEndian.PutUint64(l.stage[l.eN:], 0)
	l.eN += 8
	return w0, nil
}

// decodeClassic checks the Classic entry at off (see decode).
func (l *Log) decodeClassic(off, limit int) (ent, error) {
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
	if c := binary.LittleEndian.Uint64(b[e.fp-8:]); c != classicCommit(w0) {
		return e, fmt.Errorf("%w: classic entry at offset %d (%d bytes, seq %d): commit word %#x, want %#x", ErrCorrupt, off, e.n, e.seq, c, classicCommit(w0))
	}
	crc := uint32(w0 >> 32)
	if !l.noChecksum {
		if want := crcUpdate(uint32(w0), b[8:16+e.n]); crc != want {
			return e, fmt.Errorf("%w: classic entry at offset %d (%d bytes, seq %d): checksum %#08x, computed %#08x", ErrCorrupt, off, e.n, e.seq, crc, want)
		}
	} else if crc != 0 {
		return e, fmt.Errorf("%w: classic entry at offset %d: checksum %#08x in a log without checksums", ErrCorrupt, off, crc)
	}
	if !isZero(b[16+e.n : e.fp-8]) {
		return e, fmt.Errorf("%w: classic entry at offset %d: non-zero padding", ErrCorrupt, off)
	}
	if !ok {
		return e, fmt.Errorf("%w: classic entry at offset %d: sequence word %#x has its reserved bit set", ErrCorrupt, off, binary.LittleEndian.Uint64(b[8:]))
	}
	return e, nil
}

// tornClassic reports whether the Classic entry at off, which failed its
// check, could be an append torn by a crash: its first word is present
// (the entry is not the clean end), so its length is what was written and
// must be sound, and its commit word is missing (zero). A present commit
// word means the first barrier had completed: then nothing of the entry
// can be missing, and a failed check is corruption.
func (l *Log) tornClassic(off int) bool {
	e, err := l.checkLen(off, l.hi, binary.LittleEndian.Uint32(l.mem[off:]))
	return err == nil && binary.LittleEndian.Uint64(l.mem[off+e.fp-8:]) == 0
}
