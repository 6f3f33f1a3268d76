package walog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Report is what Open (or OpenSet, per member) found and repaired.
type Report struct {
	Format   Format
	Entries  int    // valid entries recovered
	FirstSeq uint64 // sequence number of the first (0 when none)
	NextSeq  uint64 // the sequence number the next append gets
	Tail     int    // region offset where the next entry goes
	// Stop is why the valid prefix ended, when it ended at an entry that
	// failed its check — a popcount mismatch, a validity bit of the wrong
	// sense, a missing commit word, an impossible length — rather than at
	// clean bytes. It wraps ErrCorrupt (and so persist.ErrCorrupt). After
	// a crash it describes the entry that was being appended; the entry
	// and everything after it were dropped.
	Stop error
	// StopOffset is the region offset of that entry.
	StopOffset int
	// Scrubbed is the number of bytes past the tail that held something
	// other than clean free space and were rewritten clean (zeroed, or for
	// RAWL invalidated) before the log accepts appends again.
	Scrubbed int
	// Discarded counts entries found below the log's floor: a Reset (or
	// Set.Reset) that a crash interrupted, completed by Open.
	Discarded int
}

func (r Report) String() string {
	s := fmt.Sprintf("%s log: %d entries", r.Format, r.Entries)
	if r.Entries > 0 {
		s += fmt.Sprintf(" (seq %d..%d)", r.FirstSeq, r.NextSeq-1)
	}
	s += fmt.Sprintf(", tail at %d, next seq %d", r.Tail, r.NextSeq)
	if r.Discarded > 0 {
		s += fmt.Sprintf(", completed an interrupted reset (%d entries discarded)", r.Discarded)
	}
	if r.Stop != nil {
		s += fmt.Sprintf(", stopped at offset %d: %v", r.StopOffset, r.Stop)
	}
	if r.Scrubbed > 0 {
		s += fmt.Sprintf(", %d bytes past the tail made clean", r.Scrubbed)
	}
	return s
}

// decode checks the entry at off, which must end by limit, and returns
// its data length, sequence number and footprint. At clean bytes it
// returns errEnd; for an entry that fails its check, an error wrapping
// ErrCorrupt.
func (l *Log) decode(off, limit int) (int, uint64, int, error) {
	if off+8 > limit {
		return 0, 0, 0, errEnd
	}
	switch l.format {
	case PopLog:
		return l.decodePop(off, limit)
	case RAWL:
		return l.decodeRAWL(off, limit)
	}
	return l.decodeClassic(off, limit)
}

// checkLen checks the length field of the entry at off.
func (l *Log) checkLen(off, limit, n int) (int, error) {
	if n < 1 || n > l.maxEntry {
		return 0, fmt.Errorf("%w: %s entry at offset %d: length %d outside 1..%d", ErrCorrupt, l.format, off, n, l.maxEntry)
	}
	fp := l.format.footprint(n)
	if fp > limit-off {
		return 0, fmt.Errorf("%w: %s entry at offset %d: %d bytes run past the prepared end %d", ErrCorrupt, l.format, off, fp, limit)
	}
	return fp, nil
}

// data returns the data of the valid entry at off (n bytes), appended to
// dst[:0].
func (l *Log) data(off, n int, dst []byte) ([]byte, error) {
	if l.format == RAWL {
		return l.rawlData(off, n, dst, true)
	}
	return append(dst[:0], l.mem[off+entryHeader:off+entryHeader+n]...), nil
}

// recover scans the log from the start, completes an interrupted reset and
// scrubs what lies past the valid entries. extFloor is a set's floor.
func (l *Log) recover(extFloor uint64) error {
	rep := Report{Format: l.format}
	floor := max(l.floor, extFloor)
	off := l.start
	count := 0
	var first, last uint64
	for off < l.hi {
		_, seq, fp, err := l.decode(off, l.hi)
		if err != nil {
			if !errors.Is(err, errEnd) {
				rep.Stop, rep.StopOffset = err, off
			}
			break
		}
		if count == 0 {
			first = seq
		}
		last = seq
		count++
		off = l.alignUp(off + fp)
	}
	l.tail = off
	l.count = count
	if count > 0 && first < floor {
		// A reset was committed (the floor is above the entries) but not
		// finished: finish it. Entries of one log are never on both sides
		// of the floor, so the first decides.
		rep.Discarded = count
		if floor > l.floor {
			if err := l.storeHeader(offFloor, floor); err != nil {
				return err
			}
			l.floor = floor
		}
		if err := l.cleanup(); err != nil {
			return err
		}
		count = 0
	} else if l.variant != variantNoScrub {
		n, err := l.scrub(l.tail, l.hi)
		if err != nil {
			return err
		}
		rep.Scrubbed = n
	}
	l.floor = floor
	l.count, l.first, l.last = count, first, last
	l.next = floor
	if count > 0 {
		l.next = max(floor, last+1)
		rep.FirstSeq = first
	}
	l.loadMirror(l.tail)
	rep.Entries, rep.Tail, rep.NextSeq = count, l.tail, l.next
	l.report = rep
	return nil
}

// scrub rewrites clean every 256-byte block of [from, to) that holds a
// word other than clean free space (for RAWL: a word with the current
// validity bit), with one fence at the end, and returns the bytes
// rewritten. It reads before it writes: on PMem reads are much cheaper
// than writes, and free space is mostly clean already. What it reads is
// what the media holds: the log's own writes are durable when its
// operations return, and after a restart memory is the media.
func (l *Log) scrub(from, to int) (int, error) {
	return l.rewrite(from, to, l.clean, l.isClean)
}

// zeroAhead makes [from, to) clean (zero), with one fence
// if it wrote. When the first block is dirty the range is taken to be
// dirty (the steady state: old entries of an earlier pass) and filled
// without reading the rest, which would only add cache misses; else it is
// checked block by block (a fresh, zeroed file: reads instead of writes).
func (l *Log) zeroAhead(from, to int) error {
	if from >= to {
		return nil
	}
	if first := min(to, (from+HeaderSize)&^(HeaderSize-1)); l.isClean(l.mem[from:first]) {
		_, err := l.scrub(from, to)
		return err
	}
	return l.r.Set(l.mem[from:to], 0, persist.NonTemporal)
}

// rewrite fills with c every 256-byte block of [from, to) for which ok is
// false — runs of such blocks with one streaming fill each — fences once
// if it wrote, and returns the bytes written.
func (l *Log) rewrite(from, to int, c byte, ok func([]byte) bool) (int, error) {
	done := 0
	run := -1 // start of the current run of blocks to fill
	flush := func(end int) error {
		if run < 0 {
			return nil
		}
		err := l.r.Set(l.mem[run:end], c, persist.NonTemporal|persist.NoDrain)
		done += end - run
		run = -1
		return err
	}
	for off := from; off < to; {
		next := min(to, (off+HeaderSize)&^(HeaderSize-1))
		if ok(l.mem[off:next]) {
			if err := flush(off); err != nil {
				return done, err
			}
		} else if run < 0 {
			run = off
		}
		off = next
	}
	if err := flush(to); err != nil {
		return done, err
	}
	if done > 0 {
		if err := l.r.Drain(); err != nil {
			return done, err
		}
	}
	return done, nil
}

// isValidSense reports whether every word of b carries RAWL's current
// validity bit.
func (l *Log) isValidSense(b []byte) bool {
	for ; len(b) >= 8; b = b[8:] {
		if binary.LittleEndian.Uint64(b)&1 != l.v {
			return false
		}
	}
	return true
}

// isClean reports whether b (whole words) is clean free space.
func (l *Log) isClean(b []byte) bool {
	if l.format.zeroed() {
		return isZero(b)
	}
	for ; len(b) >= 8; b = b[8:] {
		if binary.LittleEndian.Uint64(b)&1 == l.v {
			return false
		}
	}
	return true
}
