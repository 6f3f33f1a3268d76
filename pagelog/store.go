package pagelog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// Store is a failure-atomic page store in a persist.Region. See the package
// documentation for what each operation guarantees.
//
// A Store refers to its region's memory: Close the store before the
// region. An operation that starts after the region was closed returns an
// error wrapping persist.ErrClosed; closing the region while an operation
// runs unmaps the memory under it (a fault, not an error).
type Store struct {
	r   *persist.Region
	off int // Options.Offset: where mem starts in the region
	mem []byte
	g   geometry

	ro        bool // the region is mapped read-only: Read and Check only
	fenceOnly bool
	ntHeader  bool // Packed: write the header word with a streaming store (default), not Store64+Persist
	microMax  int
	maxVer    uint64 // TwoWord: largest page version a header can hold

	// The DRAM page table, one entry per page, only touched under the lock
	// of the page's lane (one entry is one cache miss on a write).
	pt []entry

	lanes []lane
	rec   Recovery

	broken variant // deliberately wrong orderings, set by tests only

	relMu    sync.Mutex
	releases []func() // of the store's claims on the region
}

// entry is a page's row of the DRAM page table.
type entry struct {
	ver   uint64 // the current version's pvn (copy-on-write) or seq (Checksum)
	slot  uint32 // the slot holding it (copy-on-write; page p's home is slot p otherwise)
	older bool   // recovery (Packed): a slot with the previous version was seen
}

// lane serializes the page writes of the pages p with p mod lanes == its
// index, and owns one spare slot, one micro log (copy-on-write layouts) or
// one backup slot (Checksum).
type lane struct {
	mu     sync.Mutex
	closed bool
	// spareBad: the spare slot lies on poisoned media (media.go): the
	// lane's copy-on-write writes are refused.
	spareBad bool
	spare    uint32
	word     [8]byte // source of a streamed header word
	crcw     [8]byte // source of a streamed payload CRC word

	// The micro log (copy-on-write layouts; microlog.go).
	log      *walog.Log
	stage    []byte    // the entry being built, allocated on first use
	runs     []lineRun // its runs of dirty lines
	logged   int       // entries in the log
	cowSince uint64    // Packed: copy-on-write writes on the lane since the log held entries
	_        [64 - 40]byte
}

// Recovery reports what Open had to do.
type Recovery struct {
	// Replayed is the number of pages into which Open wrote lines from
	// their micro-log entries (pages already holding them are not
	// counted).
	Replayed int
	// Restored is the number of torn pages repaired from their backup
	// (Checksum).
	Restored int
	// Damaged lists the pages whose payload failed its checksum when Open
	// verified every page (payload CRCs, Checksum layout; not with
	// SkipScan): Read of one is ErrCorrupt, a Write of it repairs it; the
	// other pages read as usual. A page becomes damaged by media damage,
	// or by a WriteLines that left a changed line unmarked.
	Damaged []uint64
	// Unreadable lists the pages whose current slot lies on poisoned
	// media: known to the region (Store.Poisoned), or met by Open's scan.
	// Read of one is an error wrapping persist.ErrMedia; a Write of it
	// relocates it (copy-on-write layouts; media.go).
	Unreadable []uint64
	// Superblock says what Open found wrong with one of the superblock's
	// two copies and rewrote from the other ("" when both were sound).
	Superblock string
	// Logs says, for each micro log whose header walog repaired from its
	// copy, which lane and what (walog's Recovery().Header).
	Logs []string
}

// String says what recovery did: "nothing to repair", or the pages it
// replayed from micro logs and restored from backups, the superblock copy
// it rewrote and the damaged pages it found.
func (r Recovery) String() string {
	var parts []string
	if r.Replayed > 0 {
		parts = append(parts, fmt.Sprintf("replayed the micro-log lines of %d pages", r.Replayed))
	}
	if r.Restored > 0 {
		parts = append(parts, fmt.Sprintf("restored %d torn pages from their backups", r.Restored))
	}
	if r.Superblock != "" {
		parts = append(parts, fmt.Sprintf("repaired the superblock (%s)", r.Superblock))
	}
	for _, l := range r.Logs {
		parts = append(parts, "repaired the header of "+l)
	}
	if n := len(r.Damaged); n > 0 {
		list := fmt.Sprint(r.Damaged[:min(n, 8)])
		if n > 8 {
			list = list[:len(list)-1] + " ...]"
		}
		parts = append(parts, fmt.Sprintf("%d damaged pages %s (their Read is ErrCorrupt; a Write repairs one)", n, list))
	}
	if n := len(r.Unreadable); n > 0 {
		list := fmt.Sprint(r.Unreadable[:min(n, 8)])
		if n > 8 {
			list = list[:len(list)-1] + " ...]"
		}
		parts = append(parts, fmt.Sprintf("%d pages on poisoned media %s (their Read is ErrMedia; a Write relocates one)", n, list))
	}
	if len(parts) == 0 {
		return "recovery: nothing to repair"
	}
	return "recovery: " + strings.Join(parts, ", ")
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

// Verified reports whether Read verifies a checksum of every page it
// returns: a store with payload CRCs, or the Checksum layout.
func (s *Store) Verified() bool { return s.g.crc || s.g.layout == Checksum }

// Recovery returns what Open did to recover the store.
func (s *Store) Recovery() Recovery { return s.rec }

func (s *Store) String() string {
	crc := ""
	if s.g.crc {
		crc = " with payload CRCs"
	}
	return fmt.Sprintf("pagelog %v%s: %d pages of %d B in %d slots (%d B) on %v", s.g.layout, crc, s.g.pages, s.g.pageSize, s.g.slots, s.g.size, s.r)
}

func (s *Store) hdr(i int) []byte {
	o := s.g.hdrOff + i*s.g.hdrSize
	return s.mem[o : o+s.g.hdrSize : o+s.g.hdrSize]
}

func (s *Store) payload(i int) []byte {
	o := s.g.slotOff + i*s.g.pageSize
	return s.mem[o : o+s.g.pageSize : o+s.g.pageSize]
}

// slotOf is the slot holding page pid's current version.
func (s *Store) slotOf(pid uint64) int {
	if s.g.layout == Checksum {
		return int(pid)
	}
	return int(s.pt[pid].slot)
}

// lock checks pid and the buffer and locks pid's lane. A write also needs
// a writable region.
func (s *Store) lock(pid uint64, buf []byte, write bool) (*lane, int, error) {
	if pid >= uint64(s.g.pages) {
		return nil, 0, fmt.Errorf("%w: page %d of %d", ErrPageID, pid, s.g.pages)
	}
	if len(buf) != s.g.pageSize {
		return nil, 0, fmt.Errorf("%w: %d-byte buffer, pages are %d bytes", ErrPageSize, len(buf), s.g.pageSize)
	}
	if write && s.ro {
		return nil, 0, fmt.Errorf("%w: the region is mapped read-only", ErrReadOnly)
	}
	// A failed sync is final (persist.ErrSyncFailed): a write after it
	// would still store into memory — into a spare slot whose header the
	// failed write may have left naming another page — and the file,
	// mapped again, could show that page with this one's payload. So
	// nothing is written at all.
	if write {
		if err := s.r.Failed(); err != nil {
			return nil, 0, err
		}
	}
	// The region's memory is gone once it is closed: check before touching
	// it (closing it during the operation is the caller's bug).
	if err := s.r.Readable(); err != nil {
		return nil, 0, regionErr(err, "the store cannot be used")
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
	ln, li, err := s.lock(pid, page, true)
	if err != nil {
		return err
	}
	err = s.guardWrite(ln, li, pid, func() error {
		if s.g.layout == Checksum {
			return s.writeChecksum(li, pid, page, nil)
		}
		return s.writeCoW(ln, li, pid, page)
	})
	ln.mu.Unlock()
	return err
}

// WriteLines is Write for a page of which only the lines set in dirty have
// changed since the store last saw it: bit i of dirty[i/64] stands for the
// 64 bytes at 64*i, len(dirty) is (PageSize()/64+63)/64 and no bit beyond
// the page may be set. page is the whole new page; the lines not marked
// must equal the stored ones (they may not be written). The guarantee is
// Write's. Up to Options.MicroLogLines dirty lines go through the micro
// log (a redo entry appended to the lane's walog with one barrier, then
// the lines stored in place, written back later); more take the
// copy-on-write path. A mask with no bit set writes nothing.
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
	ln, li, err := s.lock(pid, page, true)
	if err != nil {
		return err
	}
	if invariants.Enabled {
		if msg := s.checkUnmarked(pid, page, dirty); msg != "" {
			ln.mu.Unlock()
			panic(msg)
		}
	}
	err = s.guardWrite(ln, li, pid, func() error {
		switch {
		case n == 0:
			return nil
		case s.g.layout == Checksum:
			return s.writeChecksum(li, pid, page, dirty)
		case n > s.microMax || s.slotPoisoned(s.slotOf(pid)):
			// A poisoned page is relocated, not written in place.
			return s.writeCoW(ln, li, pid, page)
		}
		return s.writeMicro(ln, li, pid, page, dirty)
	})
	ln.mu.Unlock()
	return err
}

// checkUnmarked checks WriteLines' precondition, that every line of page
// that dirty leaves unmarked equals the stored one, and returns what
// breaks it ("" when nothing does): the invariants build panics with it.
// The caller holds the page's lane.
func (s *Store) checkUnmarked(pid uint64, page []byte, dirty []uint64) string {
	stored := s.payload(s.slotOf(pid))
	for i := range s.g.lines {
		if dirty[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		lo, hi := i*lineSize, (i+1)*lineSize
		if !bytes.Equal(page[lo:hi], stored[lo:hi]) {
			return fmt.Sprintf("pagelog: WriteLines of page %d: line %d (bytes %d..%d) changed but is not marked dirty; the unmarked lines must equal the stored ones", pid, i, lo, hi)
		}
	}
	return ""
}

// Read copies page pid into buf (len(buf) == PageSize()). It sees the last
// Write or WriteLines of pid that returned before it, or one running
// concurrently, whole. On a store with payload CRCs or the Checksum layout
// the page's CRC32C is verified: a mismatch is an error wrapping
// ErrCorrupt, and buf must then not be used.
func (s *Store) Read(pid uint64, buf []byte) error {
	ln, _, err := s.lock(pid, buf, false)
	if err != nil {
		return err
	}
	sl := s.slotOf(pid)
	verified := s.Verified()
	var seq, c uint64
	err = s.guard(func() error {
		copy(buf, s.payload(sl))
		if verified {
			// The header words are read under the lock, with the
			// payload; the CRC is computed after, from buf.
			h := s.hdr(sl)
			seq, c = binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[s.g.crcOff:])
		}
		return nil
	})
	ln.mu.Unlock()
	if err != nil {
		clear(buf)
		return unreadable(err, "page %d (slot %d) is unreadable", pid, sl)
	}
	if !verified {
		return nil
	}
	return s.verifyWord(pid, sl, seq, c, buf)
}

// verify checks the checksum of page pid, whose current version is in slot
// sl and whose bytes are in page.
func (s *Store) verify(pid uint64, sl int, page []byte) error {
	h := s.hdr(sl)
	return s.verifyWord(pid, sl, binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[s.g.crcOff:]), page)
}

// verifyWord checks page against the checksum word c of its header (and,
// for Checksum, the seq word).
func (s *Store) verifyWord(pid uint64, sl int, seq, c uint64, page []byte) error {
	if s.g.layout == Checksum {
		if got := pageCRC(pid, seq, page); uint64(got) != c {
			return corrupt("page %d version %d: CRC32C %#08x, header says %#08x (%s)", pid, seq, got, c, payloadMismatch)
		}
		return nil
	}
	want, ok := unseal(c)
	if !ok || want>>32 != 0 {
		return corrupt("page %d (slot %d): payload CRC word %#016x fails its check", pid, sl, c)
	}
	if got := payloadCRC(pid, page); uint64(got) != want {
		return corrupt("page %d (slot %d): payload CRC32C %#08x, header says %#08x (%s)", pid, sl, got, want, payloadMismatch)
	}
	return nil
}

// payloadMismatch says what makes a page's payload fail its checksum.
const payloadMismatch = "the page was damaged, or a WriteLines changed a line it did not mark dirty: its unmarked lines must equal the stored ones; a Write of the page repairs it"

// Close waits for the writes in flight and makes every later call return
// ErrClosed. Everything acknowledged is already durable; Close records
// each micro log's tail (walog's clean-shutdown word: one barrier per
// lane), so that damage to the end of a log is reported at the next Open,
// and leaves the region open (it belongs to the caller, who closes it
// after the store).
func (s *Store) Close() error {
	already := true
	var err error
	for i := range s.lanes {
		ln := &s.lanes[i]
		ln.mu.Lock()
		if !ln.closed {
			already = false
			ln.closed = true
			if ln.log != nil {
				if e := ln.log.Close(); e != nil && err == nil && !errors.Is(e, walog.ErrClosed) {
					err = logError(i, e)
				}
			}
		}
		ln.mu.Unlock()
	}
	if already {
		return ErrClosed
	}
	s.unclaim()
	return err
}

// Check verifies the whole store against its invariants: every slot header
// passes its check, every page has exactly one current slot and every
// spare is owned by one lane and holds nothing newer than its page
// (copy-on-write), every page's checksum matches (payload CRCs, Checksum),
// and the DRAM page table agrees with the headers in the region. It reads
// every header (and, with checksums, every page) and must not run
// concurrently with writes. Errors wrap ErrCorrupt.
func (s *Store) Check() error {
	if err := s.r.Readable(); err != nil {
		return regionErr(err, "the store cannot be used")
	}
	return unreadable(s.guard(s.check), "check met unreadable media")
}

func (s *Store) check() error {
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
		}
		for l := range s.lanes {
			if _, err := s.g.decodeHeader(s.g.pages+l, s.hdr(s.g.pages+l)); err != nil {
				return err
			}
		}
		return s.checkPages()
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
		switch {
		case !h.used:
		case s.g.layout == Packed && (int(h.pid%uint64(s.g.lanes)) != l || s.g.verStep(s.pt[h.pid].ver, h.ver) != 1):
			return corrupt("spare slot %d of lane %d holds version %d of page %d, whose current version is %d", sp, l, h.ver, h.pid, s.pt[h.pid].ver)
		case s.g.layout == TwoWord && h.ver > s.pt[h.pid].ver:
			return corrupt("spare slot %d holds version %d of page %d, newer than the current %d", sp, h.ver, h.pid, s.pt[h.pid].ver)
		}
	}
	if err := s.checkLogs(); err != nil {
		return err
	}
	return s.checkPages()
}

// checkPages returns the first page whose payload fails its checksum
// (payload CRCs, Checksum layout), and whether either copy of the
// superblock is not what the store's geometry says.
func (s *Store) checkPages() error {
	for i, at := range []int{0, superCopyOff} {
		if c := decodeSuper(s.mem[at:], byte(i)); c.state != superSound || c.s != s.super() {
			return corrupt("the superblock's %s is not the store's: %s", [2]string{"first copy", "copy"}[i], c.why)
		}
	}
	if s.g.layout != Checksum && !s.g.crc {
		return nil
	}
	for p := range s.g.pages {
		sl := s.slotOf(uint64(p))
		if err := s.verify(uint64(p), sl, s.payload(sl)); err != nil {
			return err
		}
	}
	return nil
}
