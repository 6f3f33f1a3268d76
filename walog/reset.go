package walog

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Reset discards every entry. When it returns nil the log is empty and
// stays empty after a crash; a crash during Reset leaves the log either
// whole or empty. Sequence numbers go on from where they were. PopLog and
// Classic zero one chunk; RAWL either invalidates the used part or, when
// the rest of the pass is shorter, fills it and flips the validity sense.
func (l *Log) Reset() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	return l.guardWrite(func() error {
		if err := l.reset(); err != nil {
			return l.fail(err)
		}
		return nil
	})
}

// reset commits the discard by raising the floor above every entry (one
// 8-byte store), then cleans up; recovery redoes the cleanup when it finds
// entries below the floor.
func (l *Log) reset() error {
	if l.count == 0 {
		l.epoch++
		return nil
	}
	floor := l.nextSeq()
	if err := l.storeWord(offFloor, floor); err != nil {
		return err
	}
	l.floor = floor
	return l.cleanup(l.tail)
}

// cleanup empties a log whose entries are all below the floor. What it
// leaves half done at a crash lies in the dirty range it records first
// (the used part of the log), so that Open takes it for leftovers, not
// for damage. For RAWL, every word below from must carry the current
// validity bit when it flips the sense: true of the log's own entries and
// gaps below the tail; recovery, which cannot vouch for what it found,
// passes the start of the log, and every block is checked.
func (l *Log) cleanup(from int) error {
	if err := l.setDirty(l.start, max(l.hi, l.tail)); err != nil {
		return err
	}
	switch {
	case l.format.zeroed():
		// Zero the first chunk, then lower the prepared end to it: the
		// old entries beyond it are out of reach of recovery, which never
		// reads past the prepared end.
		z := l.start + l.chunk
		if err := l.zeroAhead(l.start, z); err != nil {
			return err
		}
		if err := l.storeWord(offHi, uint64(z-l.base)); err != nil {
			return err
		}
		l.hi = z
	case l.end-l.tail <= l.hi-l.start:
		// Fill the rest of the pass with words valid in it, fence, then
		// flip the sense: every word of the log is now invalid for the new
		// pass. The fence first: a flip that reached the media before the
		// fill would leave words of the pass before valid again. Then, in
		// a barrier of its own, lower the prepared end: lowered in the old
		// pass, it would leave valid-looking words beyond it.
		if _, err := l.rewrite(min(from, l.tail), l.end, ^l.clean, l.isValidSense); err != nil {
			return err
		}
		if err := l.storeWord(offPass, l.pass+1); err != nil {
			return err
		}
		l.setPass(l.pass + 1)
		if err := l.storeWord(offHi, HeaderSize); err != nil {
			return err
		}
		l.hi = l.start
	default:
		// Invalidate the used part instead; the pass goes on.
		if _, err := l.scrub(l.start, l.hi); err != nil {
			return err
		}
	}
	if err := l.clearDirty(); err != nil {
		return err
	}
	l.tail, l.count = l.start, 0
	l.loadMirror(l.start)
	l.epoch++
	return nil
}

// Truncate discards the entries with sequence numbers seq and above,
// keeping those before; the next Append of a standalone log gets the
// first discarded number. When it returns nil the entries are gone for
// good; a crash during Truncate leaves them all or none of them. An entry
// that no longer passes its check (damage since Open) is an error
// wrapping ErrCorrupt.
func (l *Log) Truncate(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.guardWrite(func() error { return l.truncate(seq) })
}

func (l *Log) truncate(seq uint64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if l.count == 0 || seq > l.last {
		return nil
	}
	off, kept := l.start, 0
	var cut, prev uint64
	for off < l.tail {
		e, err := l.decode(off, l.tail)
		if err != nil {
			return fmt.Errorf("%w: truncate: entry %d of the log no longer passes its check: %s", ErrCorrupt, kept, bare(err))
		}
		if e.seq >= seq {
			cut = e.seq
			break
		}
		prev = e.seq
		off = l.alignUp(off + e.fp)
		kept++
	}
	return l.cutAt(off, kept, prev, cut)
}

// cutAt ends the log at off, where the entry numbered cut starts, keeping
// the kept entries before it (the last numbered prev).
func (l *Log) cutAt(off, kept int, prev, cut uint64) error {
	// Record the discarded bytes as the dirty range, then the commit: one
	// clean word where the first discarded entry starts ends the log
	// there. Then the rest of the discarded bytes go clean.
	if err := l.setDirty(off, l.tail); err != nil {
		return l.fail(err)
	}
	// From the commit's store on, memory holds the truncated log: the log
	// says so even when a sync fails below (it then takes no more writes,
	// and reads see the entries before off, as after a crash that kept the
	// commit).
	persist.Store64(l.mem[off:], l.cleanWord())
	oldTail := l.tail
	l.tail, l.count, l.last = off, kept, prev
	if l.set == nil {
		l.next = cut
	}
	l.epoch++
	if err := l.r.Persist(l.mem[off : off+8]); err != nil {
		return l.fail(err)
	}
	if _, err := l.scrub(off+8, oldTail); err != nil {
		return l.fail(err)
	}
	if err := l.clearDirty(); err != nil {
		return l.fail(err)
	}
	l.loadMirror(off)
	return nil
}
