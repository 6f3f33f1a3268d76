package walog

import (
	"encoding/binary"
	"fmt"
)

// Classic entry (8-byte aligned, little-endian):
//
//	0        len u32 | 0 u32   data length (1..MaxEntry)
//	8        seq u64           sequence number
//	16       data              len bytes, then zero bytes to a multiple of 8
//	16+pad   commit u64        ^(len | seq<<32): never zero
//
// Append persists everything but the commit word (barrier 1), then writes
// the commit word and persists it (barrier 2). Free space is zero, so the
// commit word reads zero until barrier 2 and, once it is on the media,
// barrier 1 had completed: the entry is valid exactly when its commit word
// is present. Two barriers per append (or per batch).

func classicCommit(n int, seq uint64) uint64 { return ^(uint64(uint32(n)) | seq<<32) }

// writeClassic stages one Classic entry with a zero commit word (no
// fence); the caller writes the commit words after the first barrier.
func (l *Log) writeClassic(seq uint64, p []byte) error {
	if err := l.room(entryHeader); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(l.stage[l.eN:], uint64(len(p)))
	binary.LittleEndian.PutUint64(l.stage[l.eN+8:], seq)
	l.eN += entryHeader
	if err := l.emitData(p); err != nil {
		return err
	}
	if err := l.room(8); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(l.stage[l.eN:], 0)
	l.eN += 8
	return nil
}

// decodeClassic checks the Classic entry at off (see decode).
func (l *Log) decodeClassic(off, limit int) (int, uint64, int, error) {
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	if w0 == 0 {
		return 0, 0, 0, errEnd
	}
	if w0>>32 != 0 {
		return 0, 0, 0, fmt.Errorf("%w: classic entry at offset %d: header %#x has reserved bits set", ErrCorrupt, off, w0)
	}
	n := int(w0)
	fp, err := l.checkLen(off, limit, n)
	if err != nil {
		return 0, 0, 0, err
	}
	seq := binary.LittleEndian.Uint64(l.mem[off+8:])
	if c := binary.LittleEndian.Uint64(l.mem[off+fp-8:]); c != classicCommit(n, seq) {
		return 0, 0, 0, fmt.Errorf("%w: classic entry at offset %d (%d bytes, seq %d): commit word %#x, want %#x (torn)", ErrCorrupt, off, n, seq, c, classicCommit(n, seq))
	}
	if !isZero(l.mem[off+entryHeader+n : off+fp-8]) {
		return 0, 0, 0, fmt.Errorf("%w: classic entry at offset %d: non-zero padding", ErrCorrupt, off)
	}
	return n, seq, fp, nil
}
