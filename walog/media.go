package walog

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Poisoned media (issue 18). Every operation that touches the log's
// persistent memory runs under persist.Guard: a load or store of poisoned
// media (or of a file truncated under its mapping) is an error wrapping
// ErrCorrupt and a *persist.MediaError (errors.Is persist.ErrMedia), which
// names the range, instead of a dead process.
//
//   - The header and its copy share the area's first page (they are 256
//     bytes apart; poison comes in pages), so a poisoned header page costs
//     the log: Open is ErrMedia, and writes nothing. The copy guards
//     against damage to one block, not against poison.
//   - A poisoned entry ends the valid entries there: Open fails with
//     ErrCorrupt wrapping the media error, writes nothing, and
//     Options.Salvage opens the log cut before that entry (its contract:
//     Recovery().Stop is the media error, everything from StopOffset on
//     is discarded), with the poisoned pages left as they are — a salvage
//     neither reads nor writes them.
//   - Free space past the entries that the region knows to be poisoned
//     (Region.Poisoned: Region.Poison, or a bad block its device listed)
//     is not read by recovery or Check, and not rewritten: poison alone
//     cannot hide entries there (they would have to be wiped out by other
//     damage before it), so Open opens such a log with every entry.
//     Poison the region does not list is met by the check of free space:
//     Open fails with ErrMedia, and Salvage cuts there.
//   - An append (or Reset, Truncate) that meets a poisoned range fails
//     with the media error, acknowledges nothing, and the log takes no
//     more writes (as after any failed write); what it acknowledged before
//     stays readable. Appends do not route around poison: a log with a
//     poisoned page in its free space is usable up to it.
//   - An iterator reaching a poisoned entry ends with ErrCorrupt wrapping
//     the media error, after every entry before it.

// Poisoned returns the ranges of the log's area (header and entries) that
// its region knows to be unreadable, clipped to it: the bad blocks the
// device listed when the file was mapped (persist.Info.Poisoned) and pages
// poisoned by a test (persist.Region.Poison). A nil result does not
// promise that the rest reads.
func (l *Log) Poisoned() []persist.Range { return l.r.PoisonedIn(l.base, l.end-l.base) }

// guard runs fn under persist.Guard, locating a fault in rs.
func guard(fn func() error, rs ...*persist.Region) error { return persist.Guard(fn, rs...) }

// unreadable turns a media error met while reading what into corruption
// of the log (ErrCorrupt, wrapping the *persist.MediaError); any other
// error, or one that already says so, is returned as it is.
func unreadable(err error, format string, args ...any) error {
	if !isMedia(err) || errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: "+format+": %w", append(append([]any{ErrCorrupt}, args...), err)...)
}

// faultRange returns the range a media error covers, in region offsets.
func faultRange(err error) (persist.Range, bool) {
	if err == nil {
		return persist.Range{}, false
	}
	var me *persist.MediaError
	if !errors.As(err, &me) {
		return persist.Range{}, false
	}
	lo, hi := me.Range()
	return persist.Range{Lo: lo, Hi: hi}, lo >= 0
}

// spans calls fn for each part of [from, to) outside the ranges known to
// be unreadable (the region's Poisoned, and the faults this log's
// recovery met), in order, until fn returns true; it reports whether one
// did. Poisoned ranges are whole pages, so the parts keep the 8-byte and
// 256-byte alignment of from and to.
func (l *Log) spans(from, to int, fn func(lo, hi int) bool) bool {
	if from >= to {
		return false
	}
	if l.variant == variantPoisonBlind {
		return fn(from, to)
	}
	bad := l.r.PoisonedIn(from, to-from)
	for _, g := range l.faults {
		if g.Overlaps(int64(from), int64(to)) {
			bad = append(bad, persist.Range{Lo: max(g.Lo, int64(from)), Hi: min(g.Hi, int64(to))})
		}
	}
	if len(bad) == 0 {
		return fn(from, to)
	}
	at := from
	for at < to {
		next, skip := to, to
		for _, g := range bad {
			if int(g.Hi) > at && int(g.Lo) < next {
				next, skip = max(at, int(g.Lo)), int(g.Hi)
			}
		}
		if next > at && fn(at, next) {
			return true
		}
		at = max(skip, next)
	}
	return false
}

// readHeaderGuarded is readHeader under the guard: a poisoned header page
// is ErrCorrupt wrapping the media error.
func readHeaderGuarded(r *persist.Region, base, size int) (h header, note string, err error) {
	err = guard(func() (err error) {
		h, note, err = readHeader(r, base, size)
		return err
	}, r)
	return h, note, unreadable(err, "the log header at offset %d is unreadable (the header and its copy share its page)", base)
}

// recoverGuarded is recover under the guard: a fault that the scan did
// not meet (checking or cleaning free space the region does not list as
// poisoned) fails Open with ErrCorrupt wrapping the media error.
func (l *Log) recoverGuarded(extFloor uint64, salvage bool, fromCopy string) error {
	err := guard(func() error { return l.recover(extFloor, salvage, fromCopy) }, l.r)
	return unreadable(err, "recovery of the %s log at offset %d met unreadable media", l.format, l.base)
}

// guardWrite runs fn, a write of the log, under the guard. A fault stops
// the write midway: the log fails (it takes no more writes, as after any
// failed write), and the error is ErrCorrupt wrapping the media error.
func (l *Log) guardWrite(fn func() error) error {
	err := guard(fn, l.r)
	if !isMedia(err) {
		return err
	}
	err = unreadable(err, "a write of the %s log at offset %d met unreadable media", l.format, l.base)
	return l.fail(err)
}

// isMedia reports whether err holds a media error. (The variable errors.As
// fills escapes: declared only for an error, it costs the operations that
// succeed no allocation.)
func isMedia(err error) bool {
	if err == nil {
		return false
	}
	var me *persist.MediaError
	return errors.As(err, &me)
}

// guardRead runs fn, a read of recovery, under the guard; the range of a
// fault the region does not list is remembered, so that the rest of the
// recovery (a salvage's scrub) does not touch it either.
func (l *Log) guardRead(fn func() error) error {
	err := guard(fn, l.r)
	if g, ok := faultRange(err); ok && len(l.r.PoisonedIn(int(g.Lo), int(g.Len()))) == 0 {
		l.faults = append(l.faults, g)
	}
	return err
}
