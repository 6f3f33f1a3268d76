package walog

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// PopLog entry (8-byte aligned, little-endian):
//
//	0   len u32 | pop u32   data length (1..MaxEntry) and popcount
//	8   seq u64             sequence number
//	16  data                len bytes, then zero bytes to a multiple of 8
//
// pop is the number of set bits in the len field, in seq and in the data:
// everything the entry holds except pop itself. The entry is written with
// streaming stores and persisted with one barrier. Free space is zero
// (zeroed ahead of the tail, torn tails zeroed by recovery), so after a
// crash every 8-byte word of the entry holds either what was written or
// zero: a missing word can only lower the recounted popcount, and a
// missing first word reads as the clean end of the log. The entry is
// valid exactly when the recount equals pop — header words included,
// which is why pop covers len and seq ([VR] §3.3.1; ALGORITHMS.md 3.4).

// popCount is the popcount an entry stores, given the count of its data
// bits.
func (l *Log) popCount(n int, seq uint64, data int) uint64 {
	if l.variant == variantPopNoHeader {
		return uint64(data)
	}
	return uint64(data + bits.OnesCount32(uint32(n)) + bits.OnesCount64(seq))
}

// writePop stages one PopLog entry (no fence). The popcount is computed
// in DRAM first, in its own pass: fusing it with the copy into the stage
// measured 2.5 times slower at 4 KiB (amd64 without GOAMD64=v2 checks for
// POPCNT at every word, and the fallback call makes the compiler spill).
func (l *Log) writePop(seq uint64, p []byte) error {
	n := len(p)
	if err := l.room(entryHeader); err != nil {
		return err
	}
	l.putPopHeader(n, seq, l.popCount(n, seq, popcount(p)))
	return l.emitData(p)
}

func (l *Log) putPopHeader(n int, seq, pop uint64) {
	binary.LittleEndian.PutUint64(l.stage[l.eN:], uint64(n)|pop<<32)
	binary.LittleEndian.PutUint64(l.stage[l.eN+8:], seq)
	l.eN += entryHeader
}

// decodePop checks the PopLog entry at off (see decode).
func (l *Log) decodePop(off, limit int) (int, uint64, int, error) {
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	if w0 == 0 {
		return 0, 0, 0, errEnd
	}
	n := int(uint32(w0))
	pop := w0 >> 32
	fp, err := l.checkLen(off, limit, n)
	if err != nil {
		return 0, 0, 0, err
	}
	seq := binary.LittleEndian.Uint64(l.mem[off+8:])
	data := l.mem[off+entryHeader : off+fp]
	if got := l.popCount(n, seq, popcount(data)); got != pop {
		return 0, 0, 0, fmt.Errorf("%w: poplog entry at offset %d (%d bytes, seq %d): popcount %d, header says %d (torn)", ErrCorrupt, off, n, seq, got, pop)
	}
	if !isZero(data[n:]) {
		return 0, 0, 0, fmt.Errorf("%w: poplog entry at offset %d: non-zero padding", ErrCorrupt, off)
	}
	return n, seq, fp, nil
}
