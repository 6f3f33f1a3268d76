package walog

import (
	"encoding/binary"
	"fmt"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
)

// Append adds p (1 to MaxEntry bytes) to the log and returns its sequence
// number. When Append returns nil, the entry is durable: recovery returns
// it, and every entry appended before it. The log copies p; the caller may
// reuse it.
func (l *Log) Append(p []byte) (uint64, error) {
	if len(p) == 0 || len(p) > l.maxEntry {
		return 0, l.checkEntry(p)
	}
	l.mu.Lock()
	var seq uint64
	err := l.guardWrite(func() (err error) {
		seq, err = l.append1(p)
		return err
	})
	l.mu.Unlock()
	return seq, err
}

func (l *Log) append1(p []byte) (seq uint64, err error) {
	if err = l.usable(); err != nil {
		return 0, err
	}
	fp := l.format.footprint(len(p))
	if l.tail+fp > l.hi {
		if err := l.makeRoom(fp); err != nil {
			return 0, err
		}
	}
	if l.set == nil && l.next < maxSeq {
		seq = l.next // takeSeqs(1), inline
		l.next++
	} else if seq, err = l.takeSeqs(1); err != nil {
		return 0, err
	}
	if l.stage == nil {
		l.allocStage()
	}
	off := l.tail
	t := l.alignUp(off + fp)
	switch l.format {
	case PopLog:
		if err = l.writePop(seq, p, false); err == nil {
			err = l.flushStage(t, true)
		}
	case RAWL:
		if err = l.writeRAWL(seq, p, false); err == nil {
			err = l.flushStage(t, true)
		}
	case Classic:
		var w0 uint64
		if w0, err = l.writeClassic(seq, p, false); err == nil {
			err = l.flushStage(t, true)
		}
		if err == nil {
			l.stageCommit(off+fp-8, w0)
			err = l.commitLastLine()
		}
	}
	if err != nil {
		return 0, l.fail(err)
	}
	l.appended(off, t, seq, 1)
	if invariants.Enabled {
		l.checkEntryAt(off, seq, p)
	}
	return seq, nil
}

// AppendBatch adds the entries in order with one barrier (two for
// Classic) and returns the sequence number of the first; the others follow
// it one by one. When it returns nil every entry is durable. After a crash
// during AppendBatch, recovery returns a prefix of the batch (possibly
// empty) after the entries appended before it. Each entry must be 1 to
// MaxEntry bytes, and the batch must occupy at most MaxBatch bytes of the
// log (ErrTooLarge); otherwise nothing is appended. An empty batch is
// ErrEmpty.
func (l *Log) AppendBatch(entries [][]byte) (uint64, error) {
	if len(entries) == 0 {
		return 0, fmt.Errorf("%w: empty batch", ErrEmpty)
	}
	need := 0
	for i, p := range entries {
		if err := l.checkEntry(p); err != nil {
			return 0, fmt.Errorf("batch entry %d: %w", i, err)
		}
		if i > 0 {
			need = l.alignUp(need)
		}
		need += l.format.footprint(len(p))
		if need > l.maxBatch {
			return 0, fmt.Errorf("%w: a batch of %d entries needs more than the log's MaxBatch of %d bytes", ErrTooLarge, len(entries), l.maxBatch)
		}
	}
	l.mu.Lock()
	var seq uint64
	err := l.guardWrite(func() (err error) {
		seq, err = l.appendBatch(entries, need)
		return err
	})
	l.mu.Unlock()
	return seq, err
}

func (l *Log) appendBatch(entries [][]byte, need int) (uint64, error) {
	if err := l.usable(); err != nil {
		return 0, err
	}
	if l.tail+need > l.hi {
		if err := l.makeRoom(need); err != nil {
			return 0, err
		}
	}
	seq0, err := l.takeSeqs(len(entries))
	if err != nil {
		return 0, err
	}
	if l.stage == nil {
		l.allocStage()
	}
	off0 := l.tail
	off := off0
	last := len(entries) - 1
	for i, p := range entries {
		if err = l.skipTo(off); err != nil {
			break
		}
		seq := seqWord(seq0+uint64(i), i)
		switch l.format {
		case PopLog:
			err = l.writePop(seq, p, i < last)
		case RAWL:
			err = l.writeRAWL(seq, p, i < last)
		case Classic:
			_, err = l.writeClassic(seq, p, i < last)
		}
		if err != nil {
			break
		}
		off = l.alignUp(off + l.format.footprint(len(p)))
	}
	end := off0 + need
	t := l.alignUp(end)
	switch {
	case err != nil:
	case l.format != Classic:
		err = l.flushStage(t, true)
	case l.eLo+l.eN == end && l.eLo <= off0:
		err = l.commitStagedBatch(entries, off0, end, t)
	default:
		err = l.commitStreamedBatch(entries, off0, t)
	}
	if err != nil {
		return 0, l.fail(err)
	}
	l.appended(off0, t, seq0, len(entries))
	if invariants.Enabled {
		pos := off0
		for i, p := range entries {
			l.checkEntryAt(pos, seq0+uint64(i), p)
			pos = l.alignUp(pos + l.format.footprint(len(p)))
		}
	}
	return seq0, nil
}

// commitStagedBatch is Classic's commit of a batch that is still whole in
// the stage (it starts at or after the stage's first line and ends where
// the stage ends): write it (barrier 1), put the commit words into the
// staged copy and stream it again (barrier 2). Rewriting lines with what
// they hold changes nothing on the media; streaming them beats a store
// and a flush per commit word into lines the first write evicted.
func (l *Log) commitStagedBatch(entries [][]byte, off0, end, t int) error {
	m, err := l.writeStage(t, true)
	if err != nil {
		return err
	}
	pos := off0
	for _, p := range entries {
		fp := l.format.footprint(len(p))
		w0 := binary.LittleEndian.Uint64(l.stage[pos-l.eLo:])
		binary.LittleEndian.PutUint64(l.stage[pos+fp-8-l.eLo:], classicCommit(w0))
		pos = l.alignUp(pos + fp)
	}
	if err := l.put(l.mem[l.eLo:l.eLo+m], l.stage[:m], 0); err != nil {
		return err
	}
	l.keepLast(end, t)
	return nil
}

// commitStreamedBatch is Classic's commit of a batch longer than the
// stage, whose first lines were streamed out while it was staged: write
// the rest (barrier 1); then the commit words that fall in the last line
// go into the staged copy of that line, the others are stored and flushed
// one by one, and one fence covers them all (barrier 2). Each commit word
// repeats its entry's first word, durable since barrier 1.
func (l *Log) commitStreamedBatch(entries [][]byte, off0, t int) error {
	if err := l.flushStage(t, true); err != nil {
		return err
	}
	pos := off0
	for _, p := range entries {
		fp := l.format.footprint(len(p))
		c := pos + fp - 8
		w0 := binary.LittleEndian.Uint64(l.mem[pos:])
		if c >= l.lastLine {
			l.stageCommit(c, w0)
		} else {
			persist.Store64(l.mem[c:], classicCommit(w0))
			if err := l.r.Flush(l.mem[c : c+8]); err != nil {
				return err
			}
		}
		pos = l.alignUp(pos + fp)
	}
	return l.commitLastLine()
}

// stageCommit puts the commit word of the Classic entry whose first word
// is w0 into the staged last line.
func (l *Log) stageCommit(at int, w0 uint64) {
	binary.LittleEndian.PutUint64(l.stage[at-l.lastLine:], classicCommit(w0))
}

// commitLastLine streams the staged last line (with its commit words) and
// fences: Classic's second barrier.
func (l *Log) commitLastLine() error {
	return l.put(l.mem[l.lastLine:l.lastLine+64], l.stage[:64], 0)
}

func (l *Log) appended(off, t int, seq uint64, k int) {
	l.tail = t
	if l.count == 0 {
		l.first = seq
	}
	l.count += k
	l.last = seq + uint64(k) - 1
}

func (l *Log) checkEntry(p []byte) error {
	switch {
	case len(p) == 0:
		return fmt.Errorf("%w (entries are 1 to %d bytes)", ErrEmpty, l.maxEntry)
	case len(p) > l.maxEntry:
		return fmt.Errorf("%w: %d bytes, the log's MaxEntry is %d", ErrTooLarge, len(p), l.maxEntry)
	}
	return nil
}

// usable returns the reason the log cannot be written, or nil: in the
// common case after a few loads, without calls.

// takeSeqs hands out k consecutive sequence numbers.
func (l *Log) takeSeqs(k int) (uint64, error) {
	var s uint64
	if l.set != nil {
		s = l.set.next.Add(uint64(k)) - uint64(k)
	} else {
		s = l.next
	}
	if s+uint64(k) > maxSeq {
		return 0, fmt.Errorf("%w: the log has used up its sequence numbers (%d)", ErrFull, uint64(maxSeq))
	}
	if l.set == nil {
		l.next += uint64(k)
	}
	return s, nil
}

// nextSeq is the sequence number the next append would get.
func (l *Log) nextSeq() uint64 {
	if l.set != nil {
		return l.set.next.Load()
	}
	return l.next
}

// makeRoom finds space for need bytes at the tail: it prepares more of the
// log, or wraps it, or fails with ErrFull.
func (l *Log) makeRoom(need int) error {
	if l.tail+need > l.end {
		if need > l.end-l.start {
			return fmt.Errorf("%w: a batch of %d bytes does not fit in the log's %d", ErrTooLarge, need, l.end-l.start)
		}
		if !l.wrap {
			return fmt.Errorf("%w: %d bytes needed, %d left of %d (%d entries)", ErrFull, need, l.end-l.tail, l.end-l.start, l.count)
		}
		if l.checkpoint != nil {
			if err := l.checkpoint(l); err != nil {
				return &prefixed{prefix: "walog: checkpoint before wrapping the log: ", err: err}
			}
		}
		if err := l.reset(); err != nil {
			return l.fail(err)
		}
		l.wraps++
	}
	if l.tail+need > l.hi {
		if err := l.advance(l.tail + need); err != nil {
			return l.fail(err)
		}
	}
	return nil
}

// advance moves the prepared end past to, by at least a chunk. PopLog and
// Classic zero the new part first, in its own barrier: recovery scans up
// to the prepared end, and stale entries there (of an earlier pass) must
// be gone before the scan can reach them.
func (l *Log) advance(to int) error {
	hi := min(l.end, (max(to, l.hi+l.chunk)+BlockSize-1)&^(BlockSize-1))
	if l.format.zeroed() {
		if err := l.zeroAhead(l.hi, hi); err != nil {
			return err
		}
	}
	if err := l.storeWord(offHi, uint64(hi-l.base)); err != nil {
		return err
	}
	l.hi = hi
	return nil
}
