package pagelog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/braid-pm/braid/persist"
)

// Create formats a new store in r, overwriting whatever r holds, and returns
// it open. When Create returns nil, the empty store is durable: every page
// reads as zeros. A crash during Create leaves a region that Open rejects
// (ErrBadFormat or ErrCorrupt); run Create again.
func Create(r *persist.Region, opts *Options) (*Store, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	avail := r.Size() - o.Offset
	if avail < 0 {
		return nil, fmt.Errorf("%w: offset %d is beyond the %d-byte region", ErrTooSmall, o.Offset, r.Size())
	}
	if o.Pages == 0 {
		n, err := o.fit(avail)
		if err != nil {
			return nil, err
		}
		o.fillPages(n)
		if err := o.Validate(); err != nil {
			return nil, err
		}
	}
	g, err := newGeometry(o.Layout, o.PageSize, o.Pages, o.Slots, o.PIDBits)
	if err != nil {
		return nil, err
	}
	if g.size > avail {
		return nil, fmt.Errorf("%w: %d pages of %d B in %d slots need %d bytes, the region has %d from offset %d", ErrTooSmall, g.pages, g.pageSize, g.slots, g.size, avail, o.Offset)
	}
	s := newStore(r, g, o)
	mem := s.mem

	// The old superblock goes first, so a crash below cannot leave an old
	// superblock over half-formatted headers.
	if persist.Load64(mem) != 0 {
		persist.Store64(mem, 0)
		if err := r.Persist(mem[:8]); err != nil {
			return nil, err
		}
	}

	clear(mem[g.hdrOff:g.logOff])
	le := binary.LittleEndian
	var zeroCRC uint32
	if g.layout == Checksum {
		zeroCRC = crc32.Update(0, castagnoli, make([]byte, g.pageSize))
	}
	for i := 0; i < g.slots; i++ {
		h := s.hdr(i)
		switch {
		case g.layout == Packed && i < g.pages:
			le.PutUint64(h, 1<<g.pidBits|uint64(i))
		case g.layout == TwoWord && i < g.pages:
			le.PutUint64(h, uint64(i))
			le.PutUint64(h[8:], 1)
		case g.layout == TwoWord:
			le.PutUint64(h, noPID)
		case g.layout == Checksum && i < g.pages:
			le.PutUint64(h, uint64(i))
			le.PutUint64(h[16:], uint64(crcTail(zeroCRC, uint64(i), 0)))
		case g.layout == Checksum:
			le.PutUint64(h, noPID)
		}
	}
	if err := r.Flush(mem[g.hdrOff:g.logOff]); err != nil {
		return nil, err
	}
	for l := 0; l < g.lanes; l++ {
		if h := s.logHeader(l); g.logStride > 0 && !allZero(h) {
			clear(h)
			if err := r.Flush(h); err != nil {
				return nil, err
			}
		}
	}
	if err := r.Set(mem[g.slotOff:g.slotOff+g.pages*g.pageSize], 0, persist.NoDrain); err != nil {
		return nil, err
	}
	if err := r.Drain(); err != nil {
		return nil, err
	}
	encodeSuper(mem, super{layout: g.layout, pageSize: g.pageSize, pidBits: int(g.pidBits), pages: g.pages, slots: g.slots})
	if err := r.Persist(mem[:superUsed]); err != nil {
		return nil, err
	}

	if g.layout != Checksum {
		for p := range s.pt {
			s.pt[p] = entry{ver: 1, slot: uint32(p)}
		}
	}
	for l := range s.lanes {
		s.lanes[l].spare = uint32(g.pages + l)
	}
	return s, nil
}

// Open opens the store in r and recovers it: it reads every slot header,
// maps each page to its newest complete version, replays a micro log that
// was committed but not finished, and repairs a checksummed page torn by
// a crash from its backup. Recovery writes only what it repairs; a crash
// during Open leaves a store that the next Open recovers the same way.
//
// opts may be nil. Its persistent fields (Layout, PageSize, Pages, Slots,
// PIDBits), when not zero, must match the store's: a different page size is
// ErrPageSize, any other difference ErrInvalid. A region without a store is
// ErrBadFormat; headers that no crash can produce are ErrCorrupt.
func Open(r *persist.Region, opts *Options) (*Store, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	avail := r.Size() - o.Offset
	if avail < superUsed {
		return nil, fmt.Errorf("%w: %d-byte region, offset %d", ErrBadFormat, r.Size(), o.Offset)
	}
	sb, err := decodeSuper(r.Bytes()[o.Offset:])
	if err != nil {
		return nil, err
	}
	switch {
	case o.PageSize != 0 && o.PageSize != sb.pageSize:
		return nil, fmt.Errorf("%w: the store has %d-byte pages, %d asked", ErrPageSize, sb.pageSize, o.PageSize)
	case o.Layout != 0 && o.Layout != sb.layout:
		return nil, fmt.Errorf("%w: the store's layout is %v, %v asked", ErrInvalid, sb.layout, o.Layout)
	case o.Pages != 0 && o.Pages != sb.pages:
		return nil, fmt.Errorf("%w: the store has %d pages, %d asked", ErrInvalid, sb.pages, o.Pages)
	case o.Slots != 0 && o.Slots != sb.slots:
		return nil, fmt.Errorf("%w: the store has %d slots, %d asked", ErrInvalid, sb.slots, o.Slots)
	case o.PIDBits != 0 && o.PIDBits != sb.pidBits:
		return nil, fmt.Errorf("%w: the store has %d pid bits, %d asked", ErrInvalid, sb.pidBits, o.PIDBits)
	case o.FenceOnly && sb.layout != TwoWord:
		return nil, fmt.Errorf("%w: FenceOnly applies to the TwoWord layout only, the store is %v", ErrInvalid, sb.layout)
	}
	g, err := newGeometry(sb.layout, sb.pageSize, sb.pages, sb.slots, sb.pidBits)
	if err != nil {
		return nil, corrupt("superblock: %v", err)
	}
	if g.size > avail {
		return nil, fmt.Errorf("%w: the store needs %d bytes, the region has %d from offset %d: %w", ErrTooSmall, g.size, avail, o.Offset, ErrCorrupt)
	}
	o.Layout, o.PageSize = sb.layout, sb.pageSize
	s := newStore(r, g, o)
	if g.layout == Checksum {
		err = s.recoverChecksum()
	} else {
		err = s.recoverCoW()
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func newStore(r *persist.Region, g geometry, o Options) *Store {
	mem := r.Bytes()[o.Offset : o.Offset+g.size : o.Offset+g.size]
	s := &Store{r: r, mem: mem, g: g, fenceOnly: o.FenceOnly, ntHeader: true}
	s.microMax = o.MicroLogLines
	if s.microMax == 0 {
		s.microMax = DefaultMicroLogLines(g.pageSize)
	}
	s.maxVer = ^uint64(0) - 1
	if g.layout == Packed {
		s.maxVer = 1<<(64-g.pidBits) - 1
	}
	s.pt = make([]entry, g.pages)
	s.lanes = make([]lane, g.lanes)
	return s
}

// recoverCoW rebuilds the page table of a copy-on-write store: for each
// page the slot with the highest version. Then it replays committed micro
// logs and, when versions have used half their bits, renumbers them.
func (s *Store) recoverCoW() error {
	const none = ^uint32(0)
	g := &s.g
	for p := range s.pt {
		s.pt[p].slot = none
	}
	free := make([]uint32, 0, g.lanes)
	var ties []uint32 // TwoWord slots that won a tie
	maxVer := uint64(0)
	for i := 0; i < g.slots; i++ {
		h, err := g.decodeHeader(i, s.hdr(i))
		if err != nil {
			return err
		}
		if !h.used {
			free = append(free, uint32(i))
			continue
		}
		maxVer = max(maxVer, h.ver)
		cur := s.pt[h.pid].slot
		switch {
		case cur == none:
			s.pt[h.pid] = entry{ver: h.ver, slot: uint32(i)}
		case h.ver > s.pt[h.pid].ver:
			free = append(free, cur)
			s.pt[h.pid] = entry{ver: h.ver, slot: uint32(i)}
		case h.ver < s.pt[h.pid].ver:
			free = append(free, uint32(i))
		case g.layout == Packed:
			return corrupt("slots %d and %d both hold version %d of page %d", cur, i, h.ver, h.pid)
		default:
			// TwoWord: a crash between the pid and the pvn store can leave
			// the new version with the pvn of the slot's previous page,
			// equal to the page's current one. Both slots hold a complete
			// version; keep the lower slot, and make the choice durable
			// below, before the other one can be reused.
			free = append(free, uint32(i))
			ties = append(ties, cur)
		}
		if len(free) > g.lanes {
			break
		}
	}
	for p, e := range s.pt {
		if e.slot == none {
			return corrupt("page %d has no slot", p)
		}
	}
	if len(free) != g.lanes {
		return corrupt("%d free slots, want %d", len(free), g.lanes)
	}
	for l := range s.lanes {
		s.lanes[l].spare = free[l]
	}
	for _, sl := range ties {
		h, _ := g.decodeHeader(int(sl), s.hdr(int(sl)))
		if s.pt[h.pid].slot != sl {
			continue // it lost to a later slot after all
		}
		s.pt[h.pid].ver = h.ver + 1
		b := s.hdr(int(sl))
		persist.Store64(b[8:], h.ver+1)
		if err := s.r.Persist(b[8:16]); err != nil {
			return err
		}
	}

	mask := make([]uint64, g.maskWords)
	for l := range s.lanes {
		lh := s.logHeader(l)
		pid, ok, err := g.decodeLog(l, lh, mask)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := s.applyLines(s.payload(int(s.pt[pid].slot)), s.logData(l), mask, true); err != nil {
			return err
		}
		persist.Store64(lh, 0)
		if err := s.r.Persist(lh[:8]); err != nil {
			return err
		}
		s.rec.Replayed++
	}

	if g.layout == Packed && maxVer > s.maxVer/2 {
		return s.renumber()
	}
	return nil
}

// renumber restarts every page's version at 1 (Packed). First every slot
// that is not current is marked unused and that is made durable; only then
// are the current slots' headers rewritten, each with one store. A crash
// in the first step leaves the old numbering; in the second, each page
// still has exactly one slot, whatever its version.
func (s *Store) renumber() error {
	g := &s.g
	for l := range s.lanes {
		persist.Store64(s.hdr(int(s.lanes[l].spare)), 0)
		if err := s.r.Flush(s.hdr(int(s.lanes[l].spare))); err != nil {
			return err
		}
	}
	if err := s.r.Drain(); err != nil {
		return err
	}
	for p, e := range s.pt {
		h := s.hdr(int(e.slot))
		persist.Store64(h, 1<<g.pidBits|uint64(p))
		if err := s.r.Flush(h); err != nil {
			return err
		}
		s.pt[p].ver = 1
	}
	s.rec.Renumbered = true
	return s.r.Drain()
}

// recoverChecksum reads the page versions from the home headers and
// repairs every page torn by a crash from its lane's backup.
func (s *Store) recoverChecksum() error {
	g := &s.g
	for p := 0; p < g.pages; p++ {
		h, err := g.decodeHeader(p, s.hdr(p))
		if err != nil {
			return err
		}
		s.pt[p].ver = h.ver
	}
	for l := range s.lanes {
		b := g.pages + l
		s.lanes[l].spare = uint32(b)
		bh, err := g.decodeHeader(b, s.hdr(b))
		if err != nil {
			return err
		}
		if !bh.used || pageCRC(bh.pid, bh.ver, s.payload(b)) != bh.crc {
			continue // empty, or torn while it was written: the home page is intact
		}
		p := int(bh.pid)
		hh := s.hdr(p)
		if pageCRC(bh.pid, s.pt[p].ver, s.payload(p)) == binary.LittleEndian.Uint32(hh[16:]) {
			continue
		}
		if err := s.r.Copy(s.payload(p), s.payload(b), persist.NoDrain); err != nil {
			return err
		}
		if binary.LittleEndian.Uint64(hh[8:]) != bh.ver || binary.LittleEndian.Uint64(hh[16:]) != uint64(bh.crc) {
			binary.LittleEndian.PutUint64(hh[8:], bh.ver)
			binary.LittleEndian.PutUint64(hh[16:], uint64(bh.crc))
			if err := s.r.Flush(hh[8:24]); err != nil {
				return err
			}
		}
		if err := s.r.Drain(); err != nil {
			return err
		}
		s.pt[p].ver = bh.ver
		s.rec.Restored++
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
