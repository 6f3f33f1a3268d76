package walog

import (
	"encoding/binary"
	"fmt"
	"strings"
)

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
