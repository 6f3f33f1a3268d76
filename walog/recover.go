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
}

// scan walks the valid entries from the start of the log.
func (l *Log) scan() scan {
	var s scan
	off := l.start
	for off < l.hi {
		e, err := l.decode(off, l.hi)
		if err == nil {
			err = l.followsIn(s, off, e)
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
	s.end = off
	return s
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
// operation is clean, and within the reach no two valid entries in a row,
// the first closing its append (no more flag), show that an append began
// after the interrupted one (checksummed logs only: only a checksum makes
// such a find trustworthy). Anything else is corruption: Open fails with
// ErrCorrupt and writes nothing, unless Options.Salvage asks to cut the
// log there.
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
	count := s.count
	switch {
	case l.closedTail != 0:
		// Closed cleanly: the entries must end exactly at the recorded
		// tail, and nothing may follow them.
		if err := l.checkClosed(s, floor); err != nil {
			if !salvage {
				return err
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
		// A reset was committed (the floor is above the entries) but not
		// finished: finish it. Entries of one log are never on both sides
		// of the floor.
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
		rep.Discarded = count
		if floor > l.floor {
			if err := l.storeWord(offFloor, floor); err != nil {
				return err
			}
			l.floor = floor
		}
		if err := l.cleanup(l.start); err != nil {
			return err
		}
		count = 0
	default:
		if s.stop != nil {
			rep.Stop, rep.StopOffset = s.stop, s.end
		}
		if err := l.judge(s, floor); err != nil {
			if !salvage {
				return err
			}
			rep.Stop, rep.StopOffset, rep.Salvaged = err, s.end, true
		}
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

// judge returns nil when the end of the valid entries, s, is what a crash
// can leave (see recover), and an error wrapping ErrCorrupt otherwise.
func (l *Log) judge(s scan, floor uint64) error {
	end := s.end
	permitted := l.dirtyFrom != 0 && l.dirtyTo != 0 && end >= l.dirtyFrom
	if s.stop != nil && !permitted && (s.order || !l.torn(end)) {
		return l.corruption(s, fmt.Sprintf("%s; a crash does not leave an entry like that", bare(s.stop)))
	}
	if s.stop == nil && !permitted && l.format == RAWL && l.rawlFlippedHead(end, func(seq uint64) bool {
		return l.seqFollows(s.count, s.last, seq) && (s.count > 0 || seq >= floor)
	}) {
		return l.corruption(s, fmt.Sprintf("rawl entry at offset %d is complete but the validity bit of its first word is flipped", end))
	}
	reach := l.reach(s)
	if permitted {
		reach = max(reach, l.dirtyTo)
	}
	what := fmt.Sprintf("the log ends at offset %d (clean bytes)", end)
	if s.stop != nil {
		what = fmt.Sprintf("the log ends at offset %d (%s)", end, bare(s.stop))
	}
	if x := l.firstDirty(reach, l.hi); x >= 0 {
		return l.corruption(s, fmt.Sprintf("%s, but the word at offset %d is not clean free space, and it lies past offset %d, the furthest the append a crash may have interrupted could have written: data follows the damage", what, x, reach))
	}
	if !permitted && (s.stop != nil || l.firstDirty(end, reach) >= 0) {
		if x, seq := l.laterAppend(s, floor, reach); x >= 0 {
			return l.corruption(s, fmt.Sprintf("%s, but the entry at offset %d (seq %d) was written by an append after the one a crash may have interrupted: data follows the damage", what, x, seq))
		}
	}
	return nil
}

// laterAppend looks past s.end, below lim, for entries that an append
// after the one a crash may have interrupted wrote, and returns the offset
// and sequence number of the first it finds, or -1.
//
// The interrupted append began at s.end, or, when the last valid entry has
// the more flag, earlier, at the start of that entry's batch. An entry of
// it past s.end has the index in its append that its number says: its
// number minus its index is the append's first number — s.appendSeq, or
// the number after the last valid entry (a standalone log's numbers are
// consecutive). A valid entry past s.end numbered after the valid ones
// whose number and index say otherwise was written by a later append: the
// damage lies before it. When the interrupted append is known to be a
// single entry at s.end (its first word is there, without the more flag,
// and the entry before it closed its own append), every such entry is
// from a later append. A set member's numbers have gaps, so there (and in
// a log without valid entries) the entries past s.end must all give one
// first number, and a complete entry without the more flag followed by
// another proves a later append, as before. (Entry data that happens to
// hold such entries, checksums and numbers right, would fool it: it runs
// only on checksummed logs.)
func (l *Log) laterAppend(s scan, floor uint64, lim int) (int, uint64) {
	if l.noChecksum {
		return -1, 0
	}
	newer := func(seq uint64) bool {
		if s.count > 0 {
			return seq > s.last && seq < maxSeq
		}
		return seq >= floor && seq < maxSeq
	}
	single := false
	if lf, ok := l.lenFieldAt(s.end); ok && lf&moreFlag == 0 && !(s.count > 0 && s.lastMore) {
		single = true
	}
	// The first numbers the interrupted append may have had, modulo the
	// index's 128 (firsts known: a standalone log with valid entries).
	known := l.set == nil && s.count > 0
	var firsts []uint64
	if known {
		firsts = append(firsts, s.last+1)
		if s.lastMore {
			firsts = append(firsts, s.appendSeq)
		}
	}
	fromInterrupted := func(e ent) bool {
		for _, f := range firsts {
			if (e.seq-f)&idxMask == uint64(e.idx) {
				return true
			}
		}
		return false
	}
	var base uint64 // the first number the entries past s.end give (modulo 128), when not known
	haveBase := false
	step := l.alignMask + 1
	for off := s.end + step; off+entryHeader <= lim; off += step {
		w1 := binary.LittleEndian.Uint64(l.mem[off+8:])
		if l.format == RAWL {
			if w1&1 != l.v {
				continue
			}
			w1 >>= 1
		}
		if !newer(w1 & seqMask) {
			continue // a cheap filter before the checks
		}
		e, err := l.decode(off, l.hi)
		if err != nil || !newer(e.seq) {
			continue
		}
		switch first := e.seq - uint64(e.idx); {
		case single:
			return off, e.seq
		case known:
			if !fromInterrupted(e) {
				return off, e.seq
			}
		case !haveBase:
			base, haveBase = first, true
		case (first-base)&idxMask != 0:
			return off, e.seq
		}
		if e.more || known {
			continue
		}
		next := l.alignUp(off + e.fp)
		if e2, err := l.decode(next, l.hi); err == nil && l.seqFollows(1, e.seq, e2.seq) {
			return next, e2.seq
		}
	}
	return -1, 0
}

// torn reports whether the entry at off, which failed its check, has the
// shape of an append torn by a crash.
func (l *Log) torn(off int) bool {
	switch l.format {
	case PopLog:
		return l.tornPop(off)
	case RAWL:
		return l.tornRAWL(off)
	}
	return l.tornClassic(off)
}

// reach returns the region offset up to which the operation a crash
// interrupted can have written, when the valid entries end at s.end.
func (l *Log) reach(s scan) int {
	end := s.end
	wide := end + l.maxBatch + l.alignMask + 1
	if l.variant == variantNarrowBound {
		wide = end + l.alignUp(l.format.footprint(l.maxEntry))
	} else if s.count > 0 && s.lastMore {
		return l.roundReach(wide) // the end lies inside a batch
	}
	// The end is where the interrupted append began: its first word, when
	// it is there, says how long the entry is and whether more follow.
	if lf, ok := l.lenFieldAt(end); ok && (lf&moreFlag == 0 || l.variant == variantNarrowBound) {
		if e, err := l.checkLen(end, l.hi, lf); err == nil {
			return l.roundReach(end + l.alignUp(e.fp))
		}
	}
	return l.roundReach(wide)
}

func (l *Log) roundReach(x int) int { return min(l.hi, (x+7)&^7) }

// lenFieldAt returns the length field of the entry at off when its first
// word is present (not clean).
func (l *Log) lenFieldAt(off int) (uint32, bool) {
	if off+8 > l.hi {
		return 0, false
	}
	w0 := binary.LittleEndian.Uint64(l.mem[off:])
	switch l.format {
	case RAWL:
		if w0&1 != l.v || uint32(w0)>>29 != 0 {
			return 0, false
		}
		return rawlLenField(uint32(w0)), true
	}
	return uint32(w0), w0 != 0
}

// corruption is the error of Open for a corrupt log.
func (l *Log) corruption(s scan, what string) error {
	kept := "no entry before it is sound"
	if s.count > 0 {
		kept = fmt.Sprintf("the %d entries before offset %d (seq %d to %d) are sound", s.count, s.end, s.first, s.last)
	}
	return fmt.Errorf("%w: %s log at offset %d: %s; %s. Nothing was changed; Options.Salvage keeps those entries and discards the rest", ErrCorrupt, l.format, l.base, what, kept)
}

// bare is the message of an error of this package without the corruption
// marker's prefix.
func bare(err error) string {
	return strings.TrimPrefix(err.Error(), ErrCorrupt.Error()+": ")
}

// firstDirty returns the offset of the first word of [from, to) that is
// not clean free space, or -1.
func (l *Log) firstDirty(from, to int) int {
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
		next := min(to, (off+BlockSize)&^(BlockSize-1))
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
