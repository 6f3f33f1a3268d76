package pagelog

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// writeChecksum writes page pid in place, guarded by a CRC32C, after a
// backup copy of the new version has been made durable in lane li's backup
// slot. The caller holds the lane's lock. mask, when not nil, limits the
// in-place write to the dirty lines (the backup is always the whole page).
//
//  1. Copy the page to the backup slot; store (pid, seq, crc) in its header;
//     flush; fence. The backup is now a complete, checksummed version.
//  2. Copy the page (or its dirty lines) to its home slot; store (seq, crc)
//     in the home header; flush; fence.
//
// A crash during 1 leaves the home page intact (its CRC matches) and the
// backup torn (its CRC does not): recovery ignores the backup. A crash
// during 2 may tear the home page: its CRC fails and recovery copies the
// backup back. The backup of page p is only overwritten by the next write
// on p's lane, after this one has finished, so the backup of a torn page
// is always there and always the newest version of that page.
func (s *Store) writeChecksum(li int, pid uint64, page []byte, mask []uint64) error {
	if s.lanes[li].spareBad {
		return s.lostSpare(li)
	}
	if s.slotPoisoned(int(pid)) {
		o := s.slotOff(int(pid))
		return fmt.Errorf("%w: page %d (bytes %d to %d) is on poisoned media, and the Checksum layout keeps pages in place: it cannot be written: %w", ErrCorrupt, pid, o, o+s.g.pageSize, persist.ErrMedia)
	}
	seq := s.pt[pid].ver + 1
	crc := pageCRC(pid, seq, page)
	b := s.g.pages + li

	if err := s.r.Copy(s.payload(b), page, persist.NoDrain); err != nil {
		return err
	}
	// Each header word in one failure-atomic store: a crash leaves every
	// word old or new, never a torn pid that no write stored (the CRC,
	// which covers pid and seq, tells an old backup from a new one).
	bh := s.hdr(b)
	persist.Store64(bh[0:], pid)
	persist.Store64(bh[8:], seq)
	persist.Store64(bh[16:], uint64(crc))
	if err := s.r.Flush(bh[:24]); err != nil {
		return err
	}
	if s.broken != brokenNoBackupFence {
		if err := s.r.Drain(); err != nil { // barrier 1
			return err
		}
	}

	// From here the new version is durable in the backup, and recovery
	// restores it if the in-place write does not finish. When a sync fails
	// (persist.ErrSyncFailed) the write goes on in memory all the same —
	// the page and its header words, nothing made durable — so that Read
	// sees the new version whole, as recovery would, not a page that
	// fails its checksum; the write still returns the error.
	home := s.payload(int(pid))
	var err error
	if mask == nil {
		if err = s.r.Copy(home, page, persist.NoDrain); err != nil {
			copy(home, page)
		}
	} else {
		for lo, hi := nextRun(mask, 0); lo >= 0; lo, hi = nextRun(mask, hi) {
			d, p := home[lo*lineSize:hi*lineSize], page[lo*lineSize:hi*lineSize]
			if err != nil {
				copy(d, p)
			} else if err = s.r.Copy(d, p, persist.NoDrain); err != nil {
				copy(d, p)
			}
		}
	}
	hh := s.hdr(int(pid))
	persist.Store64(hh[8:], seq)
	persist.Store64(hh[16:], uint64(crc))
	if err == nil {
		err = s.r.Persist(hh[8:24]) // barrier 2
	}
	s.pt[pid].ver = seq
	return err
}
