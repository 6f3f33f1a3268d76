package pagelog

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/braid-pm/braid/persist"
)

// Store is a failure-atomic page store in a persist.Region. See the package
// documentation for what each operation guarantees.
type Store struct {
	r   *persist.Region
	mem []byte
	g   geometry

	fenceOnly bool
	ntHeader  bool // Packed: write the header word with a streaming store (default), not Store64+Persist
	microMax  int
	maxVer    uint64 // largest page version a header can hold

	// The DRAM page table, one entry per page, only touched under the lock
	// of the page's lane (one entry is one cache miss on a write).
	pt []entry

	lanes []lane
	rec   Recovery

	broken broken // deliberately wrong orderings, set by tests only
}

// entry is a page's row of the DRAM page table.
type entry struct {
	ver  uint64 // the current version's pvn (copy-on-write) or seq (Checksum)
	slot uint32 // the slot holding it (copy-on-write; page p's home is slot p otherwise)
	_    uint32
}

// lane serializes the page writes of the pages p with p mod lanes == its
// index, and owns one spare slot, one micro log (copy-on-write layouts) or
// one backup slot (Checksum).
type lane struct {
	mu     sync.Mutex
	closed bool
	spare  uint32
	word   [8]byte       // source of a streamed header word
	stage  []byte        // micro log: the dirty lines gathered, allocated on first use
	_      [64 - 48]byte // one lane per cache line
}

// Recovery reports what Open had to do.
type Recovery struct {
	// Replayed is the number of micro logs replayed into their pages.
	Replayed int
	// Restored is the number of torn pages repaired from their backup
	// (Checksum).
	Restored int
	// Renumbered reports that page versions were renumbered because they
	// had used half of the packed header's version bits.
	Renumbered bool
}

// Layout returns the store's persistent format.
func (s *Store) Layout() Layout { return s.g.layout }

// PageSize returns the page size in bytes.
func (s *Store) PageSize() int { return s.g.pageSize }

// Pages returns the number of logical pages; page ids are 0..Pages()-1.
func (s *Store) Pages() int { return s.g.pages }

// Slots returns the number of page-sized slots (Pages() plus the spares).
func (s *Store) Slots() int { return s.g.slots }

// Lanes returns the number of lanes (Slots()-Pages()): page p is written on
// lane p mod Lanes(), and writes on different lanes run in parallel.
func (s *Store) Lanes() int { return s.g.lanes }

// Recovery returns what Open did to recover the store.
func (s *Store) Recovery() Recovery { return s.rec }

func (s *Store) String() string {
	return fmt.Sprintf("pagelog %v: %d pages of %d B in %d slots (%d B) on %v", s.g.layout, s.g.pages, s.g.pageSize, s.g.slots, s.g.size, s.r)
}

func (s *Store) hdr(i int) []byte {
	o := s.g.hdrOff + i*s.g.hdrSize
	return s.mem[o : o+s.g.hdrSize : o+s.g.hdrSize]
}

func (s *Store) payload(i int) []byte {
	o := s.g.slotOff + i*s.g.pageSize
	return s.mem[o : o+s.g.pageSize : o+s.g.pageSize]
}

func (s *Store) logHeader(l int) []byte {
	o := s.g.logOff + l*s.g.logStride
	return s.mem[o : o+s.g.logHdr : o+s.g.logHdr]
}

func (s *Store) logData(l int) []byte {
	o := s.g.logOff + l*s.g.logStride + s.g.logHdr
	return s.mem[o : o+s.g.pageSize : o+s.g.pageSize]
}

// lock checks pid and the buffer and locks pid's lane.
func (s *Store) lock(pid uint64, buf []byte) (*lane, int, error) {
	if pid >= uint64(s.g.pages) {
		return nil, 0, fmt.Errorf("%w: page %d of %d", ErrPageID, pid, s.g.pages)
	}
	if len(buf) != s.g.pageSize {
		return nil, 0, fmt.Errorf("%w: %d-byte buffer, pages are %d bytes", ErrPageSize, len(buf), s.g.pageSize)
	}
	li := int(pid % uint64(s.g.lanes))
	ln := &s.lanes[li]
	ln.mu.Lock()
	if ln.closed {
		ln.mu.Unlock()
		return nil, 0, ErrClosed
	}
	return ln, li, nil
}

// Write replaces page pid with page (len(page) == PageSize()). When it
// returns nil the new version is durable; if a crash comes first, recovery
// finds the page either entirely as before or entirely as page.
func (s *Store) Write(pid uint64, page []byte) error {
	ln, li, err := s.lock(pid, page)
	if err != nil {
		return err
	}
	if s.g.layout == Checksum {
		err = s.writeChecksum(li, pid, page, nil)
	} else {
		err = s.writeCoW(ln, pid, page)
	}
	ln.mu.Unlock()
	return err
}

// WriteLines is Write for a page of which only the lines set in dirty have
// changed since the store last saw it: bit i of dirty[i/64] stands for the
// 64 bytes at 64*i, len(dirty) is (PageSize()/64+63)/64 and no bit beyond
// the page may be set. page is the whole new page; the lines not marked
// must equal the stored ones (they may not be written). The guarantee is
// Write's. Up to Options.MicroLogLines dirty lines go through the micro
// log (logged, then written in place: four barriers, but only the dirty
// lines are written, twice); more take the copy-on-write path. A mask with
// no bit set writes nothing.
func (s *Store) WriteLines(pid uint64, page []byte, dirty []uint64) error {
	if len(dirty) != s.g.maskWords {
		return fmt.Errorf("%w: dirty mask of %d words, a %d-byte page needs %d", ErrInvalid, len(dirty), s.g.pageSize, s.g.maskWords)
	}
	n := 0
	for _, w := range dirty {
		n += bits.OnesCount64(w)
	}
	if extra := s.g.maskWords*64 - s.g.lines; extra > 0 && dirty[len(dirty)-1]>>(64-extra) != 0 {
		return fmt.Errorf("%w: dirty mask marks lines beyond the page's %d", ErrInvalid, s.g.lines)
	}
	ln, li, err := s.lock(pid, page)
	if err != nil {
		return err
	}
	switch {
	case n == 0:
	case s.g.layout == Checksum:
		err = s.writeChecksum(li, pid, page, dirty)
	case n > s.microMax:
		err = s.writeCoW(ln, pid, page)
	default:
		err = s.writeMicro(ln, li, pid, page, dirty, n)
	}
	ln.mu.Unlock()
	return err
}

// Read copies page pid into buf (len(buf) == PageSize()). It sees the last
// Write or WriteLines of pid that returned before it, or one running
// concurrently, whole. On a Checksum store the page's CRC32C is verified: a
// mismatch is an error wrapping ErrCorrupt.
func (s *Store) Read(pid uint64, buf []byte) error {
	_, li, err := s.lock(pid, buf)
	if err != nil {
		return err
	}
	ln := &s.lanes[li]
	if s.g.layout != Checksum {
		copy(buf, s.payload(int(s.pt[pid].slot)))
		ln.mu.Unlock()
		return nil
	}
	copy(buf, s.payload(int(pid)))
	h := s.hdr(int(pid))
	seq, c := binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint32(h[16:])
	ln.mu.Unlock()
	if got := pageCRC(pid, seq, buf); got != c {
		return corrupt("page %d version %d: CRC32C %#08x, header says %#08x", pid, seq, got, c)
	}
	return nil
}

// Close waits for the writes in flight and makes every later call return
// ErrClosed. Everything acknowledged is already durable; Close writes
// nothing and leaves the region open (it belongs to the caller).
func (s *Store) Close() error {
	already := true
	for i := range s.lanes {
		ln := &s.lanes[i]
		ln.mu.Lock()
		if !ln.closed {
			already = false
			ln.closed = true
		}
		ln.mu.Unlock()
	}
	if already {
		return ErrClosed
	}
	return nil
}

// Check verifies the whole store against its invariants: every page has
// exactly one current slot and every spare is owned by one lane
// (copy-on-write), every page's CRC32C matches (Checksum), and the DRAM
// page table agrees with the headers in the region. It reads every header
// (and, for Checksum, every page) and must not run concurrently with
// writes. Errors wrap ErrCorrupt.
func (s *Store) Check() error {
	for i := range s.lanes {
		s.lanes[i].mu.Lock()
		defer s.lanes[i].mu.Unlock()
		if s.lanes[i].closed {
			return ErrClosed
		}
	}
	if s.g.layout == Checksum {
		for p := 0; p < s.g.pages; p++ {
			h, err := s.g.decodeHeader(p, s.hdr(p))
			if err != nil {
				return err
			}
			if h.ver != s.pt[p].ver {
				return corrupt("page %d: header version %d, table says %d", p, h.ver, s.pt[p].ver)
			}
			if c := pageCRC(uint64(p), h.ver, s.payload(p)); c != h.crc {
				return corrupt("page %d version %d: CRC32C %#08x, header says %#08x", p, h.ver, c, h.crc)
			}
		}
		return nil
	}
	owner := make([]int, s.g.slots) // 0 free, p+1 current slot of page p, -1 spare
	for p := 0; p < s.g.pages; p++ {
		sl := int(s.pt[p].slot)
		if owner[sl] != 0 {
			return corrupt("slot %d is current for pages %d and %d", sl, owner[sl]-1, p)
		}
		owner[sl] = p + 1
		h, err := s.g.decodeHeader(sl, s.hdr(sl))
		if err != nil {
			return err
		}
		if !h.used || h.pid != uint64(p) || h.ver != s.pt[p].ver {
			return corrupt("slot %d: header (page %d, version %d), table says (page %d, version %d)", sl, int64(h.pid), h.ver, p, s.pt[p].ver)
		}
	}
	for l := range s.lanes {
		sp := int(s.lanes[l].spare)
		if owner[sp] != 0 {
			return corrupt("spare slot %d of lane %d is also in use", sp, l)
		}
		owner[sp] = -1
		h, err := s.g.decodeHeader(sp, s.hdr(sp))
		if err != nil {
			return err
		}
		if h.used && h.ver > s.pt[h.pid].ver {
			return corrupt("spare slot %d holds version %d of page %d, newer than the current %d", sp, h.ver, h.pid, s.pt[h.pid].ver)
		}
		if c := binary.LittleEndian.Uint64(s.logHeader(l)); c != 0 {
			return corrupt("micro log of lane %d is still valid (%#x)", l, c)
		}
	}
	return nil
}
