package pagelog

import (
	"encoding/binary"
	"fmt"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
)

// writeCoW writes the new version of pid into its lane's spare slot and
// then makes that slot current (Packed, TwoWord). The caller holds the
// lane's lock.
//
// Ordering (package documentation, "Copy-on-write"): the payload, and its
// CRC word when the store keeps payload CRCs, are durable before the
// header names the slot; in the TwoWord header the page id is ordered
// before the version number, because a version number that reached the
// media first would make the slot's previous page id current with this
// page's payload.
func (s *Store) writeCoW(ln *lane, li int, pid uint64, page []byte) error {
	if ln.spareBad {
		return s.lostSpare(li)
	}
	if ln.logged > 0 {
		if err := s.beforeCoW(ln, li); err != nil {
			return err
		}
	}
	sp := int(ln.spare)
	h := s.hdr(sp)
	// The CRC word first, before the page table entry is read: that read
	// is a cache miss for a random page, and nothing that waits for it
	// should stand before the payload copy, which can overlap with it
	// (a call here, after the read, made every write slower:
	// BenchmarkPageWrite/cow-crc).
	if s.g.crc && s.broken != brokenLateCRC {
		if err := s.streamCRC(ln, h, pid, page); err != nil {
			return err
		}
	}
	pvn := s.pt[pid].ver + 1
	if s.g.layout == Packed {
		pvn &= s.g.verMask
	} else if pvn > s.maxVer {
		return fmt.Errorf("%w: page %d is at version %d of %d", ErrVersionExhausted, pid, pvn-1, s.maxVer)
	}
	cur := s.pt[pid].slot
	fl := persist.Flags(0)
	if s.broken == brokenNoPayloadFence {
		fl = persist.NoDrain
	}
	// Barrier 1: the payload (streaming stores + fence).
	if err := s.r.Copy(s.payload(sp), page, fl); err != nil {
		return err
	}
	if s.g.layout == Packed {
		// Barrier 2: one failure-atomic word names page and version.
		if err := s.commitPacked(ln, h, s.g.packedWord(pid, pvn)); err != nil {
			return err
		}
	} else {
		var err error
		if pvn, err = s.commitTwoWord(sp, h, pid, pvn); err != nil {
			return err
		}
	}
	if s.broken == brokenLateCRC && s.g.crc {
		if err := s.streamCRC(ln, h, pid, page); err != nil {
			return err
		}
		if err := s.r.Drain(); err != nil {
			return err
		}
	}
	ln.spare = cur
	// A slot on poisoned media (the page just relocated from it) is never
	// written again (media.go).
	ln.spareBad = s.slotPoisoned(int(cur)) && s.broken != brokenReuseSpare
	s.pt[pid].slot = uint32(sp)
	s.pt[pid].ver = pvn
	if invariants.Enabled && ln.spare == s.pt[pid].slot {
		panic("pagelog: spare slot is current")
	}
	return nil
}

// commitPacked makes w, the packed layout's commit word, durable in the
// slot header h.
func (s *Store) commitPacked(ln *lane, h []byte, w uint64) error {
	if s.ntHeader {
		// One aligned 8-byte streaming store (MOVNTI), then a fence. An
		// aligned 8-byte store is failure-atomic whether it is streamed
		// or not, so this is the same commit as Store64 + Persist, without
		// reading the header line into the cache and writing it back:
		// faster per page write (BenchmarkPageWrite: cow against
		// cow-store64).
		binary.LittleEndian.PutUint64(ln.word[:], w)
		return s.r.Copy(h[:8], ln.word[:], persist.NonTemporal)
	}
	persist.Store64(h, w)
	return s.r.Persist(h[:8])
}

// streamCRC computes the payload CRC word of a new version of page pid and
// streams it into the header h of the spare slot that will hold it,
// without a fence: nothing reads that header word until the commit word
// names the slot, and the payload's fence (barrier 1) makes it durable
// before that.
//
//go:noinline
func (s *Store) streamCRC(ln *lane, h []byte, pid uint64, page []byte) error {
	binary.LittleEndian.PutUint64(ln.crcw[:], seal(uint64(payloadCRC(pid, page))))
	return s.r.Copy(h[s.g.crcOff:s.g.crcOff+8], ln.crcw[:], persist.NonTemporal|persist.NoDrain)
}

// commitTwoWord stores pid, then pvn, into a TwoWord header and returns the
// version the slot ends up with. Between the two stores: a flush and a
// fence (three barriers in all, safe with 8-byte atomicity), or with
// FenceOnly just a fence — the paper's cheaper variant, which relies on the
// header line being written back whole: the fence keeps the compiler and
// the CPU from reordering the two stores, but under 8-byte atomicity the
// pvn word can still reach the media without the pid word.
//
// Two shortcuts save a barrier. When the spare already names pid (it held
// an older copy of this page), only the pvn is stored. When its old pvn is
// above the page's current one, the pid store alone makes the slot the
// page's newest version (the paper's remark on state 3), and that pvn is
// kept.
//
// Both words are sealed (format.go), each written with one store.
func (s *Store) commitTwoWord(sp int, h []byte, pid, pvn uint64) (uint64, error) {
	pw := seal(usedBit | pid)
	if s.broken == brokenPVNFirst {
		persist.Store64(h[8:], seal(verMark|pvn))
		if err := s.r.Persist(h[8:16]); err != nil {
			return 0, err
		}
		persist.Store64(h, pw)
		return pvn, s.r.Persist(h[:8])
	}
	if persist.Load64(h) != pw {
		persist.Store64(h, pw)
		old, ok := unseal(persist.Load64(h[8:]))
		if !ok || old&verMark == 0 {
			return 0, corrupt("version word of spare slot %d fails its check", sp)
		}
		old &^= verMark
		if old >= pvn {
			return old, s.r.Persist(h[:8])
		}
		var err error
		if s.fenceOnly {
			err = s.r.Drain()
		} else {
			err = s.r.Persist(h[:8])
		}
		if err != nil {
			return 0, err
		}
	}
	persist.Store64(h[8:], seal(verMark|pvn))
	return pvn, s.r.Persist(h[8:16])
}
