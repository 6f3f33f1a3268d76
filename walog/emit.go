package walog

import (
	"encoding/binary"

	"github.com/braid-pm/braid/persist"
)

// Appends are encoded in DRAM, in the log's stage, and written to the
// region with streaming stores of whole cache lines: stage[0:eN] holds the
// bytes of the region from offset eLo (line-aligned) on. Between appends
// the stage keeps a copy of the partly filled line at the tail, so the
// next append rewrites that line whole, its old bytes unchanged: a
// streaming store of a whole line and a fence cost less than one of a
// partial line (BenchmarkAppend measures the result). Rewriting bytes
// with the values they already hold changes nothing on the media, whatever
// part of the rewrite a crash lets through.
//
// The bytes of a line after the entry are written clean (zero, or RAWL's
// invalid pattern): they lie in free space, which is clean already.
//
// The stage is allocated by the first append (see allocStage): opening,
// recovering and reading a log never need it, and pagelog opens one log
// per lane in every crash image its tests check.
const stageSize = 8 << 10

// allocStage allocates the stage, stageSize bytes or the log's area if
// that is smaller — the stage holds bytes of the area from a line of it
// on, so it never needs more — and fills it with the bytes of the tail's
// line that lie before the tail (the mirror loadMirror and park describe).
func (l *Log) allocStage() {
	l.stage = make([]byte, min(stageSize, l.end-l.start))
	copy(l.stage, l.mem[l.eLo:l.eLo+l.eN])
}

// room makes space for k more bytes in the stage when k <= len(stage)-64
// (for larger k the caller streams through the stage).
func (l *Log) room(k int) error {
	if l.eN+k <= len(l.stage) {
		return nil
	}
	return l.spill()
}

// spill writes the whole lines of the stage (no fence) and keeps the
// partial last line.
func (l *Log) spill() error {
	whole := l.eN &^ 63
	if whole == 0 {
		return nil
	}
	if err := l.put(l.mem[l.eLo:l.eLo+whole], l.stage[:whole], persist.NoDrain); err != nil {
		return err
	}
	l.eN = copy(l.stage, l.stage[whole:l.eN])
	l.eLo += whole
	return nil
}

// emitBytes stages p, spilling whole lines as the stage fills.
func (l *Log) emitBytes(p []byte) error {
	for {
		k := copy(l.stage[l.eN:], p)
		l.eN += k
		p = p[k:]
		if len(p) == 0 {
			return nil
		}
		if err := l.spill(); err != nil {
			return err
		}
	}
}

// pad8 stages zero bytes up to a multiple of 8.
func (l *Log) pad8() error {
	r := l.eN & 7
	if r == 0 {
		return nil
	}
	if err := l.room(8 - r); err != nil {
		return err
	}
	clear(l.stage[l.eN : l.eN+8-r])
	l.eN += 8 - r
	return nil
}

// skipTo stages the gap up to region offset off, where the next entry of
// a batch starts (entries 64- or 256-byte aligned); see gapFill.
func (l *Log) skipTo(off int) error {
	return l.gapFill(off - (l.eLo + l.eN))
}

// gapFill stages g bytes of the gap between an entry and the next aligned
// start (g < 256). The gap lies below the new tail and is never read; it
// is written anyway so that appends write whole aligned blocks, and RAWL
// fills it with words valid in the current pass: when the pass ends and
// the sense flips, every word of the log must read invalid, gaps included.
func (l *Log) gapFill(g int) error {
	if g <= 0 {
		return nil
	}
	if err := l.room(g); err != nil {
		return err
	}
	fill(l.stage[l.eN:l.eN+g], l.gap)
	l.eN += g
	return nil
}

// flushStage writes what is staged, the gap to the aligned tail t and
// the rest of the last line (clean bytes), with streaming stores, and
// fences when drain is set. The line holding the last staged entry byte
// is kept at stage[0:64] (its region offset in lastLine) for Classic's
// commit word, and the stage is left mirroring the tail t.
func (l *Log) flushStage(t int, drain bool) error {
	entryEnd := l.eLo + l.eN
	if _, err := l.writeStage(t, drain); err != nil {
		return err
	}
	l.keepLast(entryEnd, t)
	return nil
}

// writeStage is flushStage without the bookkeeping: it stages the gap to
// t and the rest of the last line, writes the stage and returns how many
// bytes of it it wrote. The stage is unchanged otherwise.
func (l *Log) writeStage(t int, drain bool) (int, error) {
	if g := t - (l.eLo + l.eN); g > 0 {
		if err := l.gapFill(g); err != nil {
			return 0, err
		}
	}
	m := (l.eN + 63) &^ 63
	fillWords(l.stage[l.eN:m], l.cleanWord())
	var flags persist.Flags
	if !drain {
		flags = persist.NoDrain
	}
	return m, l.put(l.mem[l.eLo:l.eLo+m], l.stage[:m], flags)
}

// keepLast moves the line holding the last entry byte (entryEnd-1) to
// stage[0:64], notes its offset in lastLine, and parks the stage at t.
func (l *Log) keepLast(entryEnd, t int) {
	keep := (entryEnd - 1) &^ 63
	if k := keep - l.eLo; k > 0 {
		copy(l.stage[:64], l.stage[k:k+64])
	}
	l.lastLine = keep
	l.park(t)
}

// park leaves the stage mirroring the tail t: the bytes of t's line before
// t, when t is not line-aligned, must be in stage[0:t&63] already (they are
// after flushStage, or after loadMirror).
func (l *Log) park(t int) {
	if t&63 == 0 {
		l.eLo, l.eN = t, 0
		return
	}
	l.eLo, l.eN = t&^63, t&63
}

// loadMirror fills the stage from the region for the tail t (after Open,
// Reset or Truncate); before the first append, allocStage does.
func (l *Log) loadMirror(t int) {
	l.eLo, l.eN = t&^63, t&63
	if l.stage != nil {
		copy(l.stage, l.mem[l.eLo:t])
	}
}

// fillWords stores w into every 8-byte word of b (whole words; at most a
// line on the hot paths): inline stores, where a call of clear or of the
// runtime's memclr for a few words made an append slower before its
// streaming stores (BenchmarkAppend).
func fillWords(b []byte, w uint64) {
	for ; len(b) >= 8; b = b[8:] {
		binary.LittleEndian.PutUint64(b, w)
	}
}

func fill(b []byte, c byte) {
	if c == 0 {
		clear(b)
		return
	}
	for i := range b {
		b[i] = c
	}
}

// put writes the staged bytes src (whole words) to the log at dst and
// flushes them, fencing unless flags has persist.NoDrain: a streaming copy,
// whose every word reaches the media whole. Where Copy makes ordinary
// stores (an msync region: a copy may tear a word, by the crash model), the
// words are stored one by one with persist.Store64 instead, so that a torn
// append has the shapes recovery knows (an entry's words old or new, never
// half of each); the msync that follows costs far more than the loop.
func (l *Log) put(dst, src []byte, flags persist.Flags) error {
	if !l.wordStores || len(src)&7 != 0 {
		return l.r.Copy(dst, src, flags|persist.NonTemporal)
	}
	return l.storeWords8(dst[:len(src)], flags, func(i int) uint64 { return binary.LittleEndian.Uint64(src[i:]) })
}

// fill is put for a fill of dst (whole words) with the byte c: a
// streaming fill, or word stores on an msync region (free space that a
// torn fill leaves half old would read as neither clean nor an entry).
func (l *Log) fill(dst []byte, c byte, flags persist.Flags) error {
	if !l.wordStores || len(dst)&7 != 0 {
		return l.r.Set(dst, c, flags|persist.NonTemporal)
	}
	w := uint64(c) * 0x0101010101010101
	return l.storeWords8(dst, flags, func(int) uint64 { return w })
}

// storeWords8 stores word(i) at dst[i:] for every word of dst (whole
// words, 8-aligned as every offset of a log is) with
// persist.Store64, flushes dst and fences unless flags has
// persist.NoDrain.
func (l *Log) storeWords8(dst []byte, flags persist.Flags, word func(i int) uint64) error {
	if err := l.r.Writable(); err != nil {
		return err
	}
	for i := 0; i+8 <= len(dst); i += 8 {
		persist.Store64(dst[i:], word(i))
	}
	if err := l.r.Flush(dst); err != nil {
		return err
	}
	if flags&persist.NoDrain != 0 {
		return nil
	}
	return l.r.Drain()
}
