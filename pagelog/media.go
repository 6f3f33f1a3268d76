package pagelog

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Poisoned media (issue 18). Every operation runs under persist.Guard: a
// load or store of poisoned media (or of a file truncated under its
// mapping) is an error wrapping ErrCorrupt and a *persist.MediaError
// (errors.Is persist.ErrMedia) naming the range, not a dead process.
//
//   - A poisoned page (its current slot's payload): Read of it is the
//     media error (buf zeroed); every other page reads. A Write of it
//     (copy-on-write layouts) relocates it: the new version goes to the
//     lane's spare slot as always, and the poisoned slot, which would
//     become the lane's spare, is never written again. That lane is left
//     without a spare: its later copy-on-write writes are the media error,
//     naming the slot, and write nothing (the lane's pages still read; a
//     store rebuilt elsewhere gets its slots back). A WriteLines of a
//     poisoned page takes the copy-on-write path (its micro log would
//     write the lines in place). On the Checksum layout pages live in
//     place: a Write of a poisoned page is the media error.
//   - Open reads the slot headers and micro logs, and with payload CRCs
//     (or on the Checksum layout, unless SkipScan) every page: a poisoned
//     page it meets is listed in Recovery().Unreadable, and the store
//     opens. Pages on ranges the region knows to be poisoned are listed
//     there too (said up front). A poisoned slot-header page or micro log
//     is damage to the structure: Open is the media error, and writes
//     nothing.
//   - The superblock is kept twice, 4 KiB apart (two pages): one copy
//     poisoned, Open reads the other (Recovery().Superblock says which was
//     unreadable) and does not rewrite the poisoned one; both poisoned,
//     Open is the media error.
//   - Micro-log entries for a page on poisoned media are not replayed (the
//     page reads as the media error; its next Write relocates it, and
//     they become stale). A poisoned page of a micro log past its entries
//     is walog's poisoned free space: skipped until an append reaches it,
//     which fails, and the lane's log takes no more writes.
//   - Check reports the first poisoned range it meets.

// Poisoned returns the ranges of the store's bytes that its region knows
// to be unreadable, clipped to them: the bad blocks the device listed when
// the file was mapped (persist.Info.Poisoned) and pages poisoned by a test
// (persist.Region.Poison). A nil result does not promise that the rest
// reads.
func (s *Store) Poisoned() []persist.Range { return s.r.PoisonedIn(s.off, s.g.size) }

// guard runs fn under persist.Guard.
func (s *Store) guard(fn func() error) error { return persist.Guard(fn, s.r) }

// unreadable turns a media error met at what into corruption of the store
// (ErrCorrupt, wrapping the *persist.MediaError); any other error, or one
// that says so already, is returned as it is.
func unreadable(err error, format string, args ...any) error {
	if !isMedia(err) || errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: "+format+": %w", append(append([]any{ErrCorrupt}, args...), err)...)
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

// slotOff is the region offset of slot sl's payload.
func (s *Store) slotOff(sl int) int { return s.off + s.g.slotOff + sl*s.g.pageSize }

// slotPoisoned reports whether slot sl's payload lies on media the region
// knows to be unreadable.
func (s *Store) slotPoisoned(sl int) bool {
	return len(s.r.PoisonedIn(s.slotOff(sl), s.g.pageSize)) > 0
}

// faultIn reports whether the media error err covers slot sl's payload.
func (s *Store) faultIn(err error, sl int) bool {
	if err == nil {
		return false
	}
	var me *persist.MediaError
	if !errors.As(err, &me) {
		return false
	}
	lo, hi := me.Range()
	o := int64(s.slotOff(sl))
	return lo < o+int64(s.g.pageSize) && o < hi
}

// lostSpare is the error of a write on lane li, whose spare slot is on
// poisoned media.
func (s *Store) lostSpare(li int) error {
	sl := int(s.lanes[li].spare)
	o := s.slotOff(sl)
	return fmt.Errorf("%w: lane %d has lost its spare slot %d (bytes %d to %d) to poisoned media: its pages read, but copy-on-write writes of them are refused: %w", ErrCorrupt, li, sl, o, o+s.g.pageSize, persist.ErrMedia)
}

// markSpares marks every lane whose spare slot lies on poisoned media
// (Open, after the spares are assigned).
func (s *Store) markSpares() {
	if s.broken == brokenReuseSpare {
		return
	}
	for i := range s.lanes {
		s.lanes[i].spareBad = s.slotPoisoned(int(s.lanes[i].spare))
	}
}

// unreadablePages returns the pages whose current slot lies on poisoned
// media the region knows of, in order.
func (s *Store) unreadablePages() []uint64 {
	if len(s.Poisoned()) == 0 {
		return nil
	}
	var out []uint64
	for p := range s.g.pages {
		if s.slotPoisoned(s.slotOf(uint64(p))) {
			out = append(out, uint64(p))
		}
	}
	return out
}

// guardWrite runs fn, a write of page pid on lane ln (index li), under the
// guard. The caller holds the lane. A fault stops the write midway: when
// it hit the lane's spare slot, the lane loses the spare (lostSpare).
func (s *Store) guardWrite(ln *lane, li int, pid uint64, fn func() error) error {
	err := s.guard(fn)
	if !isMedia(err) {
		return err
	}
	if s.faultIn(err, int(ln.spare)) {
		ln.spareBad = true
	}
	return unreadable(err, "a write of page %d met unreadable media", pid)
}

// mergePages merges two sorted lists of page ids, without duplicates.
func mergePages(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var x uint64
		switch {
		case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
			x, a = a[0], a[1:]
		case len(a) == 0 || b[0] < a[0]:
			x, b = b[0], b[1:]
		default:
			x, a, b = a[0], a[1:], b[1:]
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
