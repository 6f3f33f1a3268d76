package pagelog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// Create formats a new store in r, overwriting whatever r holds, and returns
// it open. When Create returns nil, the empty store is durable: every page
// reads as zeros. A crash during Create leaves the area as it was (when it
// came before Create's first barrier), ErrNoStore ("a Create did not
// finish": run Create again) or the new store. A read-only region is
// ErrReadOnly, a closed one an error wrapping persist.ErrClosed.
func Create(r *persist.Region, opts *Options) (*Store, error) {
	return guardOpen(r, "create", func() (*Store, error) { return create(r, opts, correct) })
}

// guardOpen runs Create's or Open's fn under the guard of r: a fault is
// ErrCorrupt wrapping the media error (abandonOnError has released what
// fn had claimed).
func guardOpen(r *persist.Region, what string, fn func() (*Store, error)) (*Store, error) {
	var s *Store
	err := persist.Guard(func() (err error) {
		s, err = fn()
		return err
	}, r)
	if err != nil {
		return nil, unreadable(err, "%s met unreadable media", what)
	}
	return s, nil
}

func create(r *persist.Region, opts *Options, bk variant) (_ *Store, err error) {
	g, o, err := createGeometry(r, opts)
	if err != nil {
		return nil, err
	}
	s := newStore(r, g, o)
	if err := s.claim(); err != nil {
		return nil, err
	}
	defer s.abandonOnError(&err)
	// Both copies of the superblock are marked "being created" first (one
	// barrier): from here a crash leaves "a Create did not finish", never
	// an old superblock over half-formatted headers, nor a zeroed one over
	// the old store's bytes.
	invalid := creatingMagic
	if bk == brokenZeroSuper {
		invalid = 0
	}
	if err := s.storeMagics(invalid); err != nil {
		return nil, err
	}
	if err := s.formatHeaders(); err != nil {
		return nil, err
	}
	if err := s.createLogs(); err != nil {
		return nil, err
	}
	// The pages, zeroed, and everything before them durable.
	if err := r.Set(s.mem[g.slotOff:g.slotOff+g.pages*g.pageSize], 0, persist.NoDrain); err != nil {
		return nil, err
	}
	if err := r.Drain(); err != nil {
		return nil, err
	}
	if err := s.writeSupers(); err != nil {
		return nil, err
	}
	s.initTables()
	return s, nil
}

// createGeometry checks the region and the options of a Create and
// computes the store's geometry: with Pages 0, as many pages as fit.
func createGeometry(r *persist.Region, opts *Options) (geometry, Options, error) {
	if r == nil {
		return geometry{}, Options{}, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	if err := r.Writable(); err != nil {
		return geometry{}, Options{}, regionErr(err, "Create needs a writable region")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return geometry{}, o, err
	}
	avail := r.Size() - o.Offset
	if avail < 0 {
		return geometry{}, o, fmt.Errorf("%w: offset %d is beyond the %d-byte region", ErrTooSmall, o.Offset, r.Size())
	}
	if o.Pages == 0 {
		n, err := o.fit(avail)
		if err != nil {
			return geometry{}, o, err
		}
		o.fillPages(n)
		if err := o.Validate(); err != nil {
			return geometry{}, o, err
		}
	}
	g, err := newGeometry(o.Layout, o.PageSize, o.Pages, o.Slots, o.PIDBits, o.PayloadCRC, o.MicroLogBytes)
	if err != nil {
		return g, o, err
	}
	if g.size > avail {
		return g, o, fmt.Errorf("%w: %d pages of %d B in %d slots need %d bytes, the region has %d from offset %d", ErrTooSmall, g.pages, g.pageSize, g.slots, g.size, avail, o.Offset)
	}
	return g, o, nil
}

// formatHeaders writes the slot header table of a new store and flushes it
// (no fence): page p current in slot p at version 1, the spares unused
// (Checksum: the homes at seq 0 with the CRC of a zero page, the backups
// empty). No header word is zero (format.go says why).
func (s *Store) formatHeaders() error {
	g := &s.g
	clear(s.mem[g.hdrOff:g.logOff])
	le := binary.LittleEndian
	var zeroCRC uint32
	if g.layout == Checksum || g.crc {
		zeroCRC = persist.CRC32C(make([]byte, g.pageSize))
	}
	for i := 0; i < g.slots; i++ {
		h := s.hdr(i)
		p := uint64(i)
		switch {
		case g.layout == Packed && i < g.pages:
			le.PutUint64(h, g.packedWord(p, 1))
		case g.layout == Packed:
			le.PutUint64(h, seal(unusedMark))
		case g.layout == TwoWord && i < g.pages:
			le.PutUint64(h, seal(usedBit|p))
			le.PutUint64(h[8:], seal(verMark|1))
		case g.layout == TwoWord:
			le.PutUint64(h, seal(unusedMark))
			le.PutUint64(h[8:], seal(verMark))
		case g.layout == Checksum && i < g.pages:
			le.PutUint64(h, p)
			le.PutUint64(h[16:], uint64(crcTail(zeroCRC, p, 0)))
		case g.layout == Checksum:
			le.PutUint64(h, noPID)
		}
		if g.crc && i < g.pages {
			le.PutUint64(h[g.crcOff:], seal(uint64(crcWord(zeroCRC, p))))
		}
	}
	return s.r.Flush(s.mem[g.hdrOff:g.logOff])
}

// createLogs creates every lane's micro log (copy-on-write layouts).
func (s *Store) createLogs() error {
	if s.g.layout == Checksum {
		return nil
	}
	for l := range s.lanes {
		wl, err := walog.Create(s.r, s.logOptions(l))
		if err != nil {
			return logError(l, err)
		}
		s.lanes[l].log = wl
	}
	return nil
}

// initTables sets the DRAM state of a new store: page p in slot p at
// version 1, lane l's spare slot Pages()+l.
func (s *Store) initTables() {
	if s.g.layout != Checksum {
		for p := range s.pt {
			s.pt[p] = entry{ver: 1, slot: uint32(p)}
		}
	}
	for l := range s.lanes {
		s.lanes[l].spare = uint32(s.g.pages + l)
	}
}

// Open opens the store in r and recovers it: it reads and checks every
// slot header, maps each page to its newest complete version, replays the
// micro-log entries of every page's current version (writing only lines
// that differ from what they log), and repairs a checksummed
// page torn by a crash from its backup. Then, for a store with payload
// CRCs or the Checksum layout, it verifies every page's checksum unless
// opts.SkipScan. Recovery writes only what it repairs; a crash during Open
// leaves a store that the next Open recovers the same way.
//
// opts may be nil. Its persistent fields (Layout, PageSize, Pages, Slots,
// PIDBits, PayloadCRC), when not zero, must match the store's: a different
// page size is ErrPageSize, any other difference ErrInvalid. A region
// without a store is ErrBadFormat; bytes that fail a check are ErrCorrupt.
//
// A region mapped read-only can be opened for Read and Check as long as
// recovery has nothing to write (the store was closed cleanly, or the
// crash left nothing to repair); otherwise Open returns ErrReadOnly.
// Writes to a store on a read-only region return ErrReadOnly. A closed
// region is an error wrapping persist.ErrClosed.
func Open(r *persist.Region, opts *Options) (*Store, error) {
	return guardOpen(r, "open", func() (*Store, error) { return open(r, opts, correct) })
}

func open(r *persist.Region, opts *Options, bk variant) (_ *Store, err error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	if err := r.Readable(); err != nil {
		return nil, regionErr(err, "Open")
	}
	ro := errors.Is(r.Writable(), persist.ErrReadOnly)
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	avail := r.Size() - o.Offset
	if avail < 0 {
		return nil, fmt.Errorf("%w: offset %d is beyond the %d-byte region", ErrBadFormat, o.Offset, r.Size())
	}
	sb, note, err := readSuper(r, r.Bytes()[o.Offset:], o.Offset)
	if err != nil {
		return nil, err
	}
	if err := sb.match(&o); err != nil {
		return nil, err
	}
	g, err := newGeometry(sb.layout, sb.pageSize, sb.pages, sb.slots, sb.pidBits, sb.payloadCRC, sb.logBytes)
	var tl *tooLargeError
	switch {
	case errors.As(err, &tl):
		// A store no region of this (32-bit) process can hold.
		return nil, err
	case err != nil:
		return nil, corrupt("superblock: %v", err)
	}
	if g.size > avail {
		// The superblock's checksum holds: the region is short (a
		// truncated file, a smaller mapping), not the superblock damaged.
		return nil, fmt.Errorf("%w: the store needs %d bytes, the region has %d from offset %d: map the whole file (is it truncated?): %w", ErrTooSmall, g.size, avail, o.Offset, persist.ErrTooSmall)
	}
	o.Layout, o.PageSize = sb.layout, sb.pageSize
	s := newStore(r, g, o)
	if err := s.claim(); err != nil {
		return nil, err
	}
	defer s.abandonOnError(&err)
	s.ro, s.broken = ro, bk
	if g.layout == Checksum {
		err = s.recoverChecksum()
	} else {
		err = s.recoverCoW()
	}
	if err == nil && !o.SkipScan {
		s.rec.Damaged, s.rec.Unreadable, err = s.scan()
	}
	if err == nil {
		s.rec.Unreadable = mergePages(s.rec.Unreadable, s.unreadablePages())
	}
	if err == nil && !ro {
		// The superblock's copies last: one that was damaged, or left
		// "being created" by a crash at the end of Create, is rewritten.
		// (On a read-only region the next writable Open does it.)
		if _, err = s.syncSuper(); err == nil {
			s.rec.Superblock = note
		}
	}
	if err != nil {
		return nil, err
	}
	s.broken = correct
	return s, nil
}

// match checks the persistent fields Options set at Open against the
// store's (0 and false match anything).
func (sb super) match(o *Options) error {
	switch {
	case o.PageSize != 0 && o.PageSize != sb.pageSize:
		return fmt.Errorf("%w: the store has %d-byte pages, %d asked", ErrPageSize, sb.pageSize, o.PageSize)
	case o.Layout != 0 && o.Layout != sb.layout:
		return fmt.Errorf("%w: the store's layout is %v, %v asked", ErrInvalid, sb.layout, o.Layout)
	case o.Pages != 0 && o.Pages != sb.pages:
		return fmt.Errorf("%w: the store has %d pages, %d asked", ErrInvalid, sb.pages, o.Pages)
	case o.Slots != 0 && o.Slots != sb.slots:
		return fmt.Errorf("%w: the store has %d slots, %d asked", ErrInvalid, sb.slots, o.Slots)
	case o.PIDBits != 0 && o.PIDBits != sb.pidBits:
		return fmt.Errorf("%w: the store has %d pid bits, %d asked", ErrInvalid, sb.pidBits, o.PIDBits)
	case o.PayloadCRC && !sb.payloadCRC && sb.layout != Checksum:
		return fmt.Errorf("%w: the store keeps no payload CRCs, PayloadCRC asked", ErrInvalid)
	case o.FenceOnly && sb.layout != TwoWord:
		return fmt.Errorf("%w: FenceOnly applies to the TwoWord layout only, the store is %v", ErrInvalid, sb.layout)
	case o.MicroLogBytes != 0 && o.MicroLogBytes != sb.logBytes:
		return fmt.Errorf("%w: the store has micro logs of %d bytes, %d asked", ErrInvalid, sb.logBytes, o.MicroLogBytes)
	}
	return nil
}

func newStore(r *persist.Region, g geometry, o Options) *Store {
	mem := r.Bytes()[o.Offset : o.Offset+g.size : o.Offset+g.size]
	s := &Store{r: r, off: o.Offset, mem: mem, g: g, fenceOnly: o.FenceOnly, ntHeader: true}
	s.microMax = o.MicroLogLines
	if s.microMax == 0 {
		s.microMax = DefaultMicroLogLines(g.pageSize)
	}
	s.maxVer = verMark - 2 // TwoWord: a pvn word holds 47 bits; one left for a tie
	s.pt = make([]entry, g.pages)
	s.lanes = make([]lane, g.lanes)
	return s
}

// claim claims the store's areas on its region (persist.Region.Claim) but
// the micro logs', which their walog logs claim: a second Store (or any
// other structure) opened on the same bytes while this one is open is an
// error wrapping persist.ErrBusy, instead of two writers overwriting each
// other's acknowledged pages.
func (s *Store) claim() error {
	g := &s.g
	areas := [][2]int{{0, g.logOff}, {g.slotOff, g.size}}
	if g.layout == Checksum {
		areas = [][2]int{{0, g.size}}
	}
	for _, a := range areas {
		if a[1] <= a[0] {
			continue
		}
		rel, err := s.r.Claim(s.off+a[0], a[1]-a[0], "pagelog store")
		if err != nil {
			s.unclaim()
			return err // persist.ErrBusy, naming both structures
		}
		s.releases = append(s.releases, rel)
	}
	return nil
}

func (s *Store) unclaim() {
	s.relMu.Lock()
	defer s.relMu.Unlock()
	for _, rel := range s.releases {
		rel()
	}
	s.releases = nil
}

// abandonOnError closes the micro logs opened so far and releases the
// store's claims when Create or Open fails, or faults (the fault goes on
// to guardOpen).
func (s *Store) abandonOnError(err *error) {
	if p := recover(); p != nil {
		s.abandon()
		panic(p)
	}
	if *err == nil {
		return
	}
	s.abandon()
}

func (s *Store) abandon() {
	for i := range s.lanes {
		if wl := s.lanes[i].log; wl != nil {
			wl.Close()
		}
	}
	s.unclaim()
}

// mustWrite fails recovery on a read-only region: what has to be written
// is described by what.
func (s *Store) mustWrite(what string, args ...any) error {
	if s.ro {
		return fmt.Errorf("%w: recovery must %s; map the region read-write", ErrReadOnly, fmt.Sprintf(what, args...))
	}
	return nil
}

// readSlots decodes every slot header into the page table (each page's
// newest slot) and returns the unused slots, the slots holding old
// versions and the TwoWord slots that won a version tie (recoverCoW).
func (s *Store) readSlots() (unused, stale, ties []uint32, err error) {
	const none = ^uint32(0)
	g := &s.g
	for p := range s.pt {
		s.pt[p] = entry{slot: none}
	}
	for i := 0; i < g.slots; i++ {
		h, err := g.decodeHeader(i, s.hdr(i))
		if err != nil {
			return nil, nil, nil, err
		}
		if !h.used {
			unused = append(unused, uint32(i))
			if len(unused) > g.lanes {
				return nil, nil, nil, corrupt("more than %d unused slots: a page lost its slot", g.lanes)
			}
			continue
		}
		e := &s.pt[h.pid]
		cur := e.slot
		switch {
		case cur == none:
			*e = entry{ver: h.ver, slot: uint32(i)}
			continue
		case g.layout == Packed:
			if e.older {
				return nil, nil, nil, corrupt("page %d has three slots (%d is the third)", h.pid, i)
			}
			switch g.verStep(h.ver, e.ver) {
			case 1:
				stale = append(stale, cur)
				e.ver, e.slot = h.ver, uint32(i)
			case -1:
				stale = append(stale, uint32(i))
			default:
				return nil, nil, nil, corrupt("slots %d and %d hold versions %d and %d of page %d: not consecutive", cur, i, e.ver, h.ver, h.pid)
			}
			e.older = true
		case h.ver > e.ver:
			stale = append(stale, cur)
			e.ver, e.slot = h.ver, uint32(i)
		case h.ver < e.ver:
			stale = append(stale, uint32(i))
		default:
			// TwoWord: a crash between the pid and the pvn store can leave
			// the new version with the pvn of the slot's previous page,
			// equal to the page's current one. Both slots hold a complete
			// version; keep the lower slot, and make the choice durable
			// below, before the other one can be reused.
			stale = append(stale, uint32(i))
			ties = append(ties, cur)
		}
		if len(stale) > g.lanes {
			return nil, nil, nil, corrupt("more than %d slots hold old versions", g.lanes)
		}
	}
	return unused, stale, ties, nil
}

// recoverCoW rebuilds the page table of a copy-on-write store: for each
// page the slot with its newest version; gives each lane a spare; then
// replays the micro logs.
//
// Packed versions count modulo 2^(47-pidBits), which is sound because a
// page never has more than two slots naming it, one version apart: its
// current slot, and the slot it left on its last write, which became the
// spare of the page's lane (page p is always written on lane p mod lanes)
// and stays there until that lane's next write overwrites it. Recovery
// keeps that true by handing each stale slot back to the lane of the page
// it names; a slot with nothing, or with nothing this recovery can tell,
// (unused) goes to a lane without one. So a crash leaves, per page, one
// slot, or two with consecutive versions, whichever write it interrupted;
// anything else is corruption.
func (s *Store) recoverCoW() error {
	const none = ^uint32(0)
	g := &s.g
	unused, stale, ties, err := s.readSlots()
	if err != nil {
		return err
	}
	for p, e := range s.pt {
		if e.slot == none {
			return corrupt("page %d has no slot", p)
		}
	}
	if len(stale)+len(unused) != g.lanes {
		return corrupt("%d free slots, want %d", len(stale)+len(unused), g.lanes)
	}
	if err := s.assignSpares(stale, unused); err != nil {
		return err
	}
	s.markSpares()
	// Replay before a tie is settled: the entries name the version as the
	// headers have it now.
	if err := s.replayLogs(); err != nil {
		return err
	}
	for _, sl := range ties {
		h, _ := g.decodeHeader(int(sl), s.hdr(int(sl)))
		if s.pt[h.pid].slot != sl {
			continue // it lost to a later slot after all
		}
		if err := s.mustWrite("settle a version tie of page %d", h.pid); err != nil {
			return err
		}
		s.pt[h.pid].ver = h.ver + 1
		b := s.hdr(int(sl))
		persist.Store64(b[8:], seal(verMark|(h.ver+1)))
		if err := s.r.Persist(b[8:16]); err != nil {
			return err
		}
	}
	return nil
}

// assignSpares gives every lane one free slot. For Packed, a slot that
// holds an old version of page p goes back to p's lane (recoverCoW says
// why); unused slots fill the other lanes. TwoWord versions only grow, so
// any assignment does.
func (s *Store) assignSpares(stale, unused []uint32) error {
	const none = ^uint32(0)
	g := &s.g
	free := append(stale, unused...)
	if g.layout != Packed || s.broken == brokenNoLaneAffinity {
		for l := range s.lanes {
			s.lanes[l].spare = free[l]
		}
		return nil
	}
	for l := range s.lanes {
		s.lanes[l].spare = none
	}
	for _, sl := range stale {
		h, _ := g.decodeHeader(int(sl), s.hdr(int(sl)))
		l := int(h.pid % uint64(g.lanes))
		if o := s.lanes[l].spare; o != none {
			return corrupt("slots %d and %d both hold old versions of pages of lane %d", o, sl, l)
		}
		s.lanes[l].spare = sl
	}
	k := 0
	for l := range s.lanes {
		if s.lanes[l].spare == none {
			s.lanes[l].spare = unused[k]
			k++
		}
	}
	return nil
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
		if err := s.mustWrite("repair page %d from its backup", p); err != nil {
			return err
		}
		if err := s.r.Copy(s.payload(p), s.payload(b), persist.NoDrain); err != nil {
			return err
		}
		if binary.LittleEndian.Uint64(hh[8:]) != bh.ver || binary.LittleEndian.Uint64(hh[16:]) != uint64(bh.crc) {
			persist.Store64(hh[8:], bh.ver)
			persist.Store64(hh[16:], uint64(bh.crc))
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

// scan verifies the checksum of every page (payload CRCs, Checksum
// layout; other stores have none) and returns the pages that fail it, in
// order: one damaged page does not refuse the store (Read of it is
// ErrCorrupt, a Write of it repairs it).
//
// A page it cannot read (poisoned media) is returned in lost, and
// the scan goes on after it.
func (s *Store) scan() (damaged, lost []uint64, err error) {
	if s.g.layout != Checksum && !s.g.crc {
		return nil, nil, nil
	}
	p := 0
	for p < s.g.pages {
		// One guard for the run of pages up to the next fault.
		err := s.guard(func() error {
			for ; p < s.g.pages; p++ {
				sl := s.slotOf(uint64(p))
				if err := s.verify(uint64(p), sl, s.payload(sl)); err != nil {
					damaged = append(damaged, uint64(p))
				}
			}
			return nil
		})
		if err != nil {
			lost = append(lost, uint64(p))
			p++
		}
	}
	return damaged, lost, nil
}
