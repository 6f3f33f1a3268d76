package walog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/braid-pm/braid/persist"
)

// Recovery is what Open (or OpenSet, per member) found and repaired: the
// log as Open left it, not as it is later (see Log.Stats for that).
type Recovery struct {
	Format Format
	// Member is the log's index in its set and Members the set's size;
	// for a standalone log Member is -1 and Members 0. The sequence
	// numbers of a member are the set's: they grow along the member, and
	// the other members hold the numbers in between.
	Member, Members int
	Entries         int    // valid entries recovered
	FirstSeq        uint64 // sequence number of the first (0 when none)
	LastSeq         uint64 // and of the last (0 when none)
	// NextSeq is the sequence number the next append gets (for a set
	// member: the next append to any member of the set).
	NextSeq uint64
	Tail    int // region offset where the next entry goes
	// Stop is why the valid prefix ended, when it ended at an entry that
	// failed its check rather than at clean bytes. It wraps ErrCorrupt
	// (and so persist.ErrCorrupt). Without Salvaged, the entry has the
	// shape of an append torn by a crash — Open fails on anything else —
	// and it and everything after it were dropped: they had not been
	// acknowledged. With Salvaged, Stop is the corruption that was cut off.
	Stop error
	// StopOffset is the region offset of that entry.
	StopOffset int
	// Salvaged is set when Options.Salvage let Open recover a corrupt log:
	// everything from StopOffset on was discarded, acknowledged entries
	// possibly among it.
	Salvaged bool
	// Scrubbed is the number of bytes past the tail that held something
	// other than clean free space and were rewritten clean (zeroed, or for
	// RAWL invalidated) before the log accepts appends again.
	Scrubbed int
	// Discarded counts entries found below the log's floor: a Reset (or
	// Set.Reset) that a crash interrupted, completed by Open.
	Discarded int
	// Closed is set when the log had been closed cleanly: its header
	// recorded the tail, and Open found the entries ending exactly there.
	Closed bool
	// Header says what Open found wrong with one of the header's two
	// copies and rewrote from the other ("the header fails its checksum",
	// "the header's copy is zero"); "" when both were sound.
	Header string
}

func (r Recovery) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s log", r.Format)
	if r.Members > 0 {
		fmt.Fprintf(&b, " (set member %d of %d)", r.Member, r.Members)
	}
	fmt.Fprintf(&b, ": %d entries", r.Entries)
	switch {
	case r.Entries == 0:
	case r.Members > 0:
		fmt.Fprintf(&b, " (set-wide seq %d to %d; other members hold numbers between)", r.FirstSeq, r.LastSeq)
	default:
		fmt.Fprintf(&b, " (seq %d..%d)", r.FirstSeq, r.LastSeq)
	}
	fmt.Fprintf(&b, ", tail at %d, next seq %d", r.Tail, r.NextSeq)
	if r.Members > 0 {
		b.WriteString(" (set-wide)")
	}
	if r.Discarded > 0 {
		fmt.Fprintf(&b, ", completed an interrupted reset (%d entries discarded)", r.Discarded)
	}
	switch {
	case r.Salvaged:
		fmt.Fprintf(&b, ", SALVAGED: discarded everything from offset %d: %v", r.StopOffset, r.Stop)
	case r.Stop != nil:
		fmt.Fprintf(&b, ", dropped a torn append at offset %d: %v", r.StopOffset, r.Stop)
	}
	if r.Scrubbed > 0 {
		fmt.Fprintf(&b, ", %d bytes past the tail made clean", r.Scrubbed)
	}
	if r.Closed {
		b.WriteString(", closed cleanly")
	}
	if r.Header != "" {
		fmt.Fprintf(&b, ", repaired the header (%s)", r.Header)
	}
	return b.String()
}

// ent is a decoded entry header.
type ent struct {
	n, fp int // data bytes, footprint
	seq   uint64
	idx   int  // index in its append, modulo 128
	more  bool // another entry of the same AppendBatch follows
}

// decode checks the entry at off, which must end by limit. At clean bytes
// it returns errEnd; for an entry that fails its check, an error wrapping
// ErrCorrupt (the fields it could read are set).
func (l *Log) decode(off, limit int) (ent, error) {
	if off+entryHeader > limit {
		return ent{}, errEnd
	}
	switch l.format {
	case PopLog:
		return l.decodePop(off, limit)
	case RAWL:
		return l.decodeRAWL(off, limit)
	}
	return l.decodeClassic(off, limit)
}

// checkLen checks the length field lf of the entry at off.
func (l *Log) checkLen(off, limit int, lf uint32) (ent, error) {
	if lf&lenReserved != 0 {
		return ent{}, fmt.Errorf("%w: %s entry at offset %d: length field %#x has reserved bits set", ErrCorrupt, l.format, off, lf)
	}
	e := ent{n: int(lf & lenMask), more: lf&moreFlag != 0}
	if e.n < 1 || e.n > l.maxEntry {
		return e, fmt.Errorf("%w: %s entry at offset %d: length %d outside 1..%d", ErrCorrupt, l.format, off, e.n, l.maxEntry)
	}
	e.fp = l.format.footprint(e.n)
	if e.fp > limit-off {
		return e, fmt.Errorf("%w: %s entry at offset %d: %d bytes run past the prepared end %d", ErrCorrupt, l.format, off, e.fp, limit)
	}
	return e, nil
}

// data returns the data of the valid entry at off (n bytes), appended to
// dst[:0].
func (l *Log) data(off, n int, dst []byte) ([]byte, error) {
	if l.format == RAWL {
		return l.rawlData(off, n, dst, true)
	}
	return append(dst[:0], l.mem[off+entryHeader:off+entryHeader+n]...), nil
}

// seqFollows reports whether seq may follow the last of count entries.
// Along a standalone log the numbers are consecutive (Truncate hands the
// discarded ones out again); along a set member they grow, with gaps.
func (l *Log) seqFollows(count int, last, seq uint64) bool {
	switch {
	case seq == 0 || seq >= maxSeq:
		return false
	case count == 0:
		return true
	case l.set != nil:
		return seq > last
	}
	return seq == last+1
}

// scan is what the walk over the entries found.
type scan struct {
	end         int // where the valid entries end
	count       int
	first, last uint64
	lastMore    bool   // the last valid entry has the more flag
	lastIdx     int    // its index in its append
	appendSeq   uint64 // the first sequence number of the last valid entry's append
	stop        error  // the failed check of the entry at end; nil at clean bytes
	order       bool   // stop is a sequence number or an append index out of order
	media       bool   // stop is a media error: the entry at end is unreadable
}

// scan walks the valid entries from the start of the log. An entry it
// cannot read (poisoned media) ends them, as corruption (s.media).
func (l *Log) scan() scan {
	var s scan
	off := l.start
	if err := l.guardRead(func() error { l.scanFrom(&s, &off); return nil }); err != nil {
		s.stop = unreadable(err, "%s entry at offset %d is unreadable", l.format, off)
		s.media = true
	}
	s.end = off
	return s
}

// scanFrom walks the valid entries from *at, leaving *at at the first
// that is not one.
func (l *Log) scanFrom(s *scan, at *int) {
	off := *at
	defer func() { *at = off }()
	for off < l.hi {
		e, err := l.decode(off, l.hi)
		if err == nil {
			err = l.followsIn(*s, off, e)
			s.order = err != nil
		}
		if err != nil {
			if !errors.Is(err, errEnd) {
				s.stop = err
			}
			break
		}
		if s.count == 0 {
			s.first = e.seq
		}
		if e.idx == 0 {
			s.appendSeq = e.seq
		}
		s.last, s.lastMore, s.lastIdx = e.seq, e.more, e.idx
		s.count++
		off = l.alignUp(off + e.fp)
	}
}

// followsIn checks that the valid entry e at off may follow the entries
// of s: its number follows the last one's, and an entry that is not the
// first of its append (index not 0) follows the one before it in the same
// batch, which has the more flag. (The first entry of an append may
// follow an entry with the more flag: Truncate can cut a batch short.)
func (l *Log) followsIn(s scan, off int, e ent) error {
	switch {
	case !l.seqFollows(s.count, s.last, e.seq):
		return fmt.Errorf("%w: %s entry at offset %d: sequence number %d after %d", ErrCorrupt, l.format, off, e.seq, s.last)
	case e.idx != 0 && (s.count == 0 || !s.lastMore || e.idx != (s.lastIdx+1)&idxMask || e.seq != s.last+1):
		return fmt.Errorf("%w: %s entry at offset %d: entry %d of its append (seq %d), but the entry before it is not entry %d of the same batch", ErrCorrupt, l.format, off, e.idx, e.seq, e.idx-1)
	}
	return nil
}

// recover scans the log from the start, decides whether what ends the
// valid entries is a crash's doing or corruption, completes an
// interrupted reset and scrubs what lies past the valid entries.
// extFloor is a set's floor.
//
// Where the valid entries end, a crash can have left only the leftovers
// of the one operation it interrupted:
//
//   - An Append or AppendBatch writes from the tail, at most MaxBatch
//     bytes and the alignment gap after them. Every word it writes is
//     either what it wrote or what was there before — clean free space —
//     so a failed entry of it is torn in a way the format can tell from
//     bits flipped in place (tornPop, tornClassic, tornRAWL). When the
//     entry before the end has the more flag, the end lies inside a batch
//     and its leftovers reach MaxBatch further at most; when not, the end
//     is where the interrupted append began, and if its first word is
//     there, its length and more flag say how far it wrote.
//   - Reset, Truncate and a salvaging Open record the range they leave
//     leftovers in (the header's dirty range) before they begin, and
//     clear it when the leftovers are gone.
//
// So the end is a crash's doing when the entry that ends the log (if one
// does) has a torn shape, every word past the reach of the interrupted
// operation is clean, and no valid entry within the reach belongs to a
// later append: its number and its index in its append must name the
// interrupted append's first number (laterAppend; checksummed logs only:
// only a checksum makes such a find trustworthy). A log closed cleanly
// must instead end exactly at the tail Close recorded (checkClosed).
// Anything else is corruption: Open fails with ErrCorrupt and writes
// nothing, unless Options.Salvage asks to cut the log there. fromCopy says
// which copy of the header readHeader found unsound: it is rewritten at
// the end, with the clean-shutdown word cleared.
func (l *Log) recover(extFloor uint64, salvage bool, fromCopy string) error {
	rep := Recovery{Format: l.format, Member: l.Member()}
	if l.set != nil {
		rep.Members = len(l.set.logs)
	}
	floor := max(l.floor, extFloor)
	s := l.scan()
	l.tail = s.end
	canWrite := l.r.Writable()
	mustWrite := func(why string) error {
		if canWrite == nil {
			return nil
		}
		return regionErr(canWrite, fmt.Sprintf("recovery of the %s log at offset %d must %s", l.format, l.base, why))
	}
	count, err := l.settle(s, floor, salvage, &rep, mustWrite)
	if err != nil {
		return err
	}
	if rep.Discarded == 0 {
		if err := l.cleanTail(&rep, mustWrite); err != nil {
			return err
		}
	}
	l.floor = floor
	l.count, l.first, l.last = count, s.first, s.last
	l.next = floor
	if count > 0 {
		l.next = max(floor, s.last+1)
		rep.FirstSeq, rep.LastSeq = s.first, s.last
	}
	// The header last: the clean-shutdown word is cleared (the log is
	// open now, and a crash from here on is not a clean close), and a
	// copy that was damaged, or that a crash left apart from the other,
	// is rewritten. On a read-only region, where nothing is appended,
	// neither is written: the next writable Open does it.
	if canWrite == nil {
		if l.variant != variantNoClearClosed {
			l.closedTail = 0
		}
		if _, err := l.syncHeader(); err != nil {
			return err
		}
		rep.Header = fromCopy
	}
	l.loadMirror(l.tail)
	rep.Entries, rep.Tail, rep.NextSeq = count, l.tail, l.next
	l.rec = rep
	return nil
}

// settle judges what the scan s found against the floor and the log's
// state (closed cleanly or not) and returns how many entries the log
// keeps; with salvage a problem is recorded in rep instead of returned.
func (l *Log) settle(s scan, floor uint64, salvage bool, rep *Recovery, mustWrite func(string) error) (int, error) {
	count := s.count
	switch {
	case s.media:
		// An unreadable entry: corruption, whatever the log's state.
		if !salvage {
			return 0, s.stop
		}
		rep.Stop, rep.StopOffset, rep.Salvaged = s.stop, s.end, true
		if count > 0 && s.first < floor {
			rep.StopOffset, count, l.tail = l.start, 0, l.start
		}
	case l.closedTail != 0:
		// Closed cleanly: the entries must end exactly at the recorded
		// tail, and nothing may follow them.
		if err := l.checkClosed(s, floor); err != nil {
			if !salvage {
				return 0, err
			}
			rep.Stop, rep.StopOffset, rep.Salvaged = err, s.end, true
			if count > 0 && s.first < floor {
				// Nothing below the floor survives a salvage.
				rep.StopOffset, count, l.tail = l.start, 0, l.start
			}
		} else {
			rep.Closed = true
		}
	case count > 0 && s.first < floor:
		if err := l.completeReset(s, floor, salvage, rep, mustWrite); err != nil {
			return 0, err
		}
		count = 0
	default:
		if s.stop != nil {
			rep.Stop, rep.StopOffset = s.stop, s.end
		}
		// The judge reads past the end, as far as the interrupted append
		// may have written: a fault there is corruption too.
		err := l.guardRead(func() error { return l.judge(s, floor) })
		if isMedia(err) {
			err = unreadable(err, "the %s log ends at offset %d, and the bytes after it, which the append a crash interrupted may have written, are unreadable", l.format, s.end)
		}
		if err != nil {
			if !salvage {
				return 0, err
			}
			rep.Stop, rep.StopOffset, rep.Salvaged = err, s.end, true
		}
	}
	return count, nil
}

// completeReset finishes a reset that was committed (the floor is above
// the entries s found) but not finished. Entries of one log are never on
// both sides of the floor: that is corruption (salvaged: all discarded).
func (l *Log) completeReset(s scan, floor uint64, salvage bool, rep *Recovery, mustWrite func(string) error) error {
	if s.last >= floor {
		err := l.corruption(s, fmt.Sprintf("entries %d to %d straddle the log's floor %d", s.first, s.last, floor))
		if !salvage {
			return err
		}
		rep.Stop, rep.StopOffset, rep.Salvaged = err, l.start, true
	}
	if err := mustWrite("complete an interrupted reset"); err != nil {
		return err
	}
	rep.Discarded = s.count
	if floor > l.floor {
		if err := l.storeWord(offFloor, floor); err != nil {
			return err
		}
		l.floor = floor
	}
	return l.cleanup(l.start)
}

// cleanTail makes clean what lies past the valid entries up to the
// prepared end, when anything there is not (the leftovers of a torn
// append or of an unfinished Reset, Truncate or salvage, or the damage a
// salvage cuts off), recording the range as dirty first when salvaging.
func (l *Log) cleanTail(rep *Recovery, mustWrite func(string) error) error {
	pending := l.dirtyFrom != 0 || l.dirtyTo != 0
	if !pending && !rep.Salvaged && l.firstDirty(l.tail, l.hi) < 0 {
		return nil
	}
	if err := mustWrite("clean the bytes past the end of the log"); err != nil {
		return err
	}
	if rep.Salvaged {
		if err := l.setDirty(l.tail, l.hi); err != nil {
			return err
		}
	}
	if l.variant != variantNoScrub {
		n, err := l.scrub(l.tail, l.hi)
		if err != nil {
			return err
		}
		rep.Scrubbed = n
	}
	if pending || rep.Salvaged {
		return l.clearDirty()
	}
	return nil
}

// checkClosed checks a cleanly closed log against the tail its header
// recorded: the valid entries, none below the floor, end exactly there at
// clean bytes, no dirty range is pending, and every word from there to the
// prepared end is clean free space.
func (l *Log) checkClosed(s scan, floor uint64) error {
	t := l.closedTail
	var why string
	switch x := l.firstDirty(t, l.hi); {
	case s.end < t && s.stop != nil:
		why = fmt.Sprintf("the entries end at offset %d: %s", s.end, bare(s.stop))
	case s.end < t:
		why = fmt.Sprintf("the entries end at offset %d, where the bytes read as clean free space", s.end)
	case s.end > t:
		why = fmt.Sprintf("valid entries run on to offset %d", s.end)
	case s.stop != nil:
		why = fmt.Sprintf("an entry follows it that fails its check: %s", bare(s.stop))
	case s.count > 0 && s.first < floor:
		why = fmt.Sprintf("entries %d to %d lie below the floor %d", s.first, s.last, floor)
	case l.dirtyFrom != 0 || l.dirtyTo != 0:
		why = fmt.Sprintf("the header holds a dirty range [%d, %d)", l.dirtyFrom, l.dirtyTo)
	case x >= 0:
		why = fmt.Sprintf("the word at offset %d, past it, is not clean free space", x)
	default:
		return nil
	}
	return l.corruption(s, fmt.Sprintf("the log was closed cleanly with its tail at offset %d, but %s", t, why))
}

// firstDirty returns the offset of the first word of [from, to) that is
// not clean free space, or -1.
// Ranges known to be unreadable are skipped (media.go).
func (l *Log) firstDirty(from, to int) int {
	x := -1
	l.spans(from, to, func(from, to int) bool {
		x = l.firstDirtyIn(from, to)
		return x >= 0
	})
	return x
}

func (l *Log) firstDirtyIn(from, to int) int {
	for off := from; off < to; {
		next := min(to, (off+BlockSize)&^(BlockSize-1))
		if !l.isClean(l.mem[off:next]) {
			for ; off < next; off += 8 {
				if !l.isClean(l.mem[off : off+8]) {
					return off
				}
			}
		}
		off = next
	}
	return -1
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
	if first := min(to, (from+BlockSize)&^(BlockSize-1)); l.isClean(l.mem[from:first]) {
		_, err := l.scrub(from, to)
		return err
	}
	var err error
	l.spans(from, to, func(lo, hi int) bool { // ranges known poisoned are skipped
		err = l.fill(l.mem[lo:hi], 0, persist.NoDrain)
		return err != nil
	})
	if err != nil {
		return err
	}
	return l.r.Drain()
}

// rewrite fills with c every 256-byte block of [from, to) for which ok is
// false — runs of such blocks with one streaming fill each — fences once
// if it wrote, and returns the bytes written. Ranges known to be
// unreadable are skipped (media.go).
func (l *Log) rewrite(from, to int, c byte, ok func([]byte) bool) (int, error) {
	done := 0
	var err error
	l.spans(from, to, func(from, to int) bool {
		err = l.rewriteIn(from, to, c, ok, &done)
		return err != nil
	})
	if err == nil && done > 0 {
		err = l.r.Drain()
	}
	return done, err
}

// rewriteIn is rewrite of one span, without the fence.
func (l *Log) rewriteIn(from, to int, c byte, ok func([]byte) bool, done *int) error {
	run := -1 // start of the current run of blocks to fill
	flush := func(end int) error {
		if run < 0 {
			return nil
		}
		err := l.fill(l.mem[run:end], c, persist.NoDrain)
		*done += end - run
		run = -1
		return err
	}
	for off := from; off < to; {
		next := min(to, (off+BlockSize)&^(BlockSize-1))
		if ok(l.mem[off:next]) {
			if err := flush(off); err != nil {
				return err
			}
		} else if run < 0 {
			run = off
		}
		off = next
	}
	return flush(to)
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
