package walog

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

// A Log is an append-only log of small entries in an area of a
// persist.Region. Its methods may be called from many goroutines at once:
// Append, AppendBatch, Reset, Truncate and Close are serialized by the
// log's lock, and the log's order is the order in which they took it.
//
// The log keeps the region's Bytes() for its lifetime: close the log
// before its region, and do not grow the region while the log is open.
// (Operations on a log whose region was closed or remapped return an
// error wrapping persist.ErrClosed or ErrInvalid, but only when the region
// is not closed while they run: Region.Close must not run concurrently
// with anything else on the region.)
type Log struct {
	mu sync.Mutex

	r       *persist.Region
	mem     []byte
	format  Format
	variant variant

	base, start, end int // header, first entry, end of the area (region offsets)
	alignMask        int
	maxEntry         int
	maxBatch         int
	noChecksum       bool
	wordStores       bool // entries are written word by word (see put)
	chunk            int
	wrap             bool
	checkpoint       func(*Log) error

	pass  uint64 // from the header
	v     uint64 // RAWL validity sense: pass&1
	clean byte   // fill byte of free space: 0, or 0xff for RAWL when v is 0
	gap   byte   // fill byte of alignment gaps: 0, or for RAWL ^clean
	hi    int    // prepared end (region offset): every byte written lies below it
	floor uint64 // entries with a smaller sequence number are discarded

	dirtyFrom, dirtyTo int // the header's dirty range (region offsets; 0: none)

	tail        int    // where the next entry goes
	count       int    // entries in the log
	first, last uint64 // their first and last sequence numbers
	next        uint64 // next sequence number of a standalone log

	set    *Set // nil for a standalone log
	member int

	stage    []byte // see emit.go
	eLo, eN  int
	lastLine int

	epoch   uint64 // changes on Reset and Truncate (iterators check it)
	wraps   int
	closed  bool
	release func()          // of the area's claim on the region
	err     error           // a write failed: the log refuses further writes
	faults  []persist.Range // faults recovery met that the region does not list (media.go)
	rec     Recovery

	// Cold: written by Create, Open, Close and Set.Reset only.
	closedTail int    // the header's clean-shutdown tail (region offset; 0: open)
	setFloor   uint64 // member 0 of a set: the header's set floor
	hdr        header // the header's fixed fields, as Create wrote them
}

// Stats describes a log at one moment.
type Stats struct {
	Format   Format
	Entries  int    // entries in the log
	FirstSeq uint64 // sequence number of the first entry (0 when empty)
	NextSeq  uint64 // sequence number the next Append gets
	Used     int    // bytes from the first entry to the tail
	Capacity int    // bytes for entries (the area minus the header)
	MaxEntry int
	Align    int
	MaxBatch int
	Checksum bool   // entries carry a CRC-32C (not Options.NoChecksum)
	Pass     uint64 // passes over the log (RAWL's sense flips)
	Wraps    int    // times the log wrapped since Create or Open
}

// errEnd is what the decoders return at clean bytes: the end of the log.
var errEnd = errors.New("walog: end of log")

// Create formats a new, empty log in the area Options.Offset/Size of r
// (by default the whole region) and returns it open. Whatever the area
// held is discarded. Create marks both copies of the header "being
// created" first, so a crash during Create leaves the area as it was
// (when the crash came before that mark was durable), no log (Open
// returns ErrNoLog: a Create did not finish) or the new empty log — never
// the old header over the new area, nor a zeroed header over old entries.
// PopLog and Classic zero the first Options.Chunk bytes; RAWL zeroes the
// whole area once. A closed or read-only region is an error wrapping
// persist.ErrClosed or persist.ErrReadOnly; an area that an open log or
// other structure has claimed on r (persist.Region.Claim), one wrapping
// persist.ErrBusy: Create, like Open, claims the area until Close.
func Create(r *persist.Region, opts *Options) (*Log, error) {
	o := opts
	if o == nil {
		o = &Options{}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	g, err := createGeometry(r, o, o.Offset, o.Size)
	if err != nil {
		return nil, err
	}
	var l *Log
	err = guard(func() (err error) {
		l, err = create(r, o, header{geometry: g})
		return err
	}, r)
	if err != nil {
		return nil, unreadable(err, "create of a log at offset %d", g.base)
	}
	return l, nil
}

func create(r *persist.Region, o *Options, h header) (l *Log, err error) {
	h.pass, h.floor, h.hi = 1, 1, HeaderSize
	l = newLog(r, o, h)
	if err := l.claim(); err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done || err != nil { // an error, or a fault (Create's guard)
			l.release()
		}
	}()
	// Mark both copies "being created" (one barrier): from here a crash
	// leaves "a Create did not finish", whatever the area held.
	invalid := creatingMagic
	if l.variant == variantCreateZeroMagic {
		invalid = 0
	}
	p, c := l.mem[l.base:l.base+BlockSize], l.mem[l.base+BlockSize:l.base+HeaderSize]
	if err := l.storeMagics(invalid); err != nil {
		return nil, err
	}
	// Zeroes (only where the area is not zero already), the fields of
	// both copies, and the magics last, alone.
	prep := l.start + l.chunk
	if l.format == RAWL {
		prep = l.end
	}
	if err := l.zeroAhead(l.start, prep); err != nil {
		return nil, err
	}
	l.hi = min(l.start+l.chunk, l.end)
	h.hi = l.hi - l.base
	var b [BlockSize]byte
	for role, blk := range [][]byte{p, c} {
		h.encode(b[:], byte(role))
		if err := r.Copy(blk[8:], b[8:], persist.NoDrain); err != nil {
			return nil, err
		}
	}
	if err := r.Drain(); err != nil {
		return nil, err
	}
	if err := l.storeMagics(magic); err != nil {
		return nil, err
	}
	l.loadMirror(l.tail)
	l.rec = Recovery{Format: l.format, Member: -1, Tail: l.tail, NextSeq: l.nextSeq()}
	if h.setCount > 0 {
		l.rec.Member, l.rec.Members = int(h.setIndex), int(h.setCount)
	}
	done = true
	return l, nil
}

// storeMagics stores m as the magic of both copies of the header and
// persists them (one barrier).
func (l *Log) storeMagics(m uint64) error {
	p, c := l.mem[l.base:l.base+8], l.mem[l.base+BlockSize:l.base+BlockSize+8]
	persist.Store64(p, m)
	persist.Store64(c, m)
	if err := l.r.Flush(p); err != nil {
		return err
	}
	if err := l.r.Flush(c); err != nil {
		return err
	}
	return l.r.Drain()
}

// Open opens the log at Options.Offset of r and recovers it: it finds the
// valid entries, completes a Reset a crash interrupted, and makes clean
// (zero, or invalid for RAWL) every byte past the last valid entry that a
// crashed append may have written, so that a later append torn by another
// crash cannot be completed by stale bytes. Recovery says what it found.
//
// An area that holds nothing (or a Create that did not finish) is
// ErrNoLog, another kind of structure or another format version
// ErrBadFormat. The header is read from whichever of its two copies is
// sound, and a damaged copy rewritten from the other (Recovery().Header);
// both damaged is ErrCorrupt. A log closed cleanly must end exactly at the
// tail Close recorded; Open clears that record before the log takes
// appends. An append torn by a crash is not an error: it ends the log, and
// Recovery().Stop describes it. Damage a crash cannot cause — an entry
// whose bits were flipped in place, data after the end of the log beyond
// what the append a crash interrupted could have written, or a closed
// log's entries ending before its recorded tail — is ErrCorrupt, and Open
// writes nothing; Options.Salvage opens such a log anyway, cut before the
// damage (see recover.go for the rules).
//
// On a read-only region Open succeeds when recovery has nothing to write
// (the log was closed cleanly): the log can be read, and every write
// returns an error wrapping persist.ErrReadOnly. When recovery must write,
// Open fails with that error.
func Open(r *persist.Region, opts *Options) (*Log, error) {
	o := opts
	if o == nil {
		o = &Options{}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := checkRegion(r); err != nil {
		return nil, err
	}
	h, fromCopy, err := readHeaderGuarded(r, o.Offset, o.Size)
	if err != nil {
		return nil, err
	}
	if h.setCount != 0 {
		return nil, fmt.Errorf("%w: the log at offset %d is member %d of a set of %d: open it with OpenSet", ErrBadFormat, h.base, h.setIndex, h.setCount)
	}
	if err := h.match(o); err != nil {
		return nil, err
	}
	l := newLog(r, o, h)
	if err := l.claim(); err != nil {
		return nil, err
	}
	if err := l.recoverGuarded(0, o.Salvage, fromCopy); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// claim claims the log's area on its region (persist.Region.Claim): a
// second Log, Set member or other structure opened on the same bytes
// while this one is open is an error wrapping persist.ErrBusy, instead of
// two writers overwriting each other's acknowledged entries.
func (l *Log) claim() error {
	rel, err := l.r.Claim(l.base, l.end-l.base, fmt.Sprintf("walog %s log", l.format))
	if err != nil {
		return err // persist.ErrBusy, naming both structures
	}
	l.release = rel
	return nil
}

func newLog(r *persist.Region, o *Options, h header) *Log {
	l := &Log{
		r: r, mem: r.Bytes(), format: h.format, variant: o.variant,
		base: h.base, start: h.start(), end: h.end(),
		alignMask: h.align - 1, maxEntry: h.maxEntry,
		maxBatch: h.maxBatch, noChecksum: h.noChecksum,
		chunk: chunkSize(o, h.size-HeaderSize),
		wrap:  o.Wrap, checkpoint: o.Checkpoint,
		hi: h.base + h.hi, floor: h.floor, next: h.floor,
		wordStores: r.Info().Mode == persist.ModeMsync,
	}
	l.tail = l.start
	if h.dirtyTo != 0 {
		l.dirtyFrom, l.dirtyTo = h.base+h.dirtyFrom, h.base+h.dirtyTo
	}
	if h.closed != 0 {
		l.closedTail = h.base + h.closed
	}
	l.setFloor = h.setFloor
	l.hdr = h
	l.setPass(h.pass)
	return l
}

func (l *Log) setPass(p uint64) {
	l.pass = p
	if l.format == RAWL {
		l.v = p & 1
		l.clean = byte(0xff * (1 - l.v))
		l.gap = ^l.clean
	}
}

// cleanWord is an 8-byte word of free space.
func (l *Log) cleanWord() uint64 { return uint64(l.clean) * 0x0101010101010101 }

func (l *Log) alignUp(x int) int { return (x + l.alignMask) &^ l.alignMask }

func (l *Log) usable() error {
	if l.closed || l.err != nil || l.r.Writable() != nil || unsafe.SliceData(l.r.Bytes()) != unsafe.SliceData(l.mem) {
		return l.unusable()
	}
	return nil
}

func (l *Log) unusable() error {
	switch {
	case l.closed:
		return ErrClosed
	case l.err != nil:
		return l.err
	}
	return l.regionOK(l.r.Writable())
}

// regionOK checks the region under the log: err is what Writable or
// Readable said.
func (l *Log) regionOK(err error) error {
	if err != nil {
		return regionErr(err, "the log cannot be used")
	}
	if unsafe.SliceData(l.r.Bytes()) != unsafe.SliceData(l.mem) {
		return fmt.Errorf("%w: the log's region was grown or remapped under it: open the log again", ErrInvalid)
	}
	return nil
}

// fail makes a write error sticky: after a failed write the stage and the
// media may disagree, so the log refuses further writes (Open it again).
func (l *Log) fail(err error) error {
	if l.err == nil {
		l.err = &prefixed{prefix: "walog: log unusable after a failed write (open it again): ", err: err}
	}
	return err
}

// Close closes the log and releases its area's claim on the region; the
// region stays open (close the log first, then the region). Everything
// appended is durable already; Close records the tail in the header (the
// clean-shutdown word: one 8-byte store into each copy and one barrier),
// so that the next Open knows exactly where the log ends and reports
// damage to its end instead of taking it for a torn append. It records
// nothing for a log on a read-only region, or one whose last write failed
// (its next Open recovers it as after a crash). A second Close returns
// ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.closed = true
	defer l.release()
	if l.err != nil || l.r.Writable() != nil || unsafe.SliceData(l.r.Bytes()) != unsafe.SliceData(l.mem) {
		return nil
	}
	l.closedTail = l.tail
	if err := l.guardWrite(func() error { _, err := l.syncHeader(); return err }); err != nil {
		return &prefixed{prefix: "walog: close: recording the tail: ", err: err}
	}
	return nil
}

// Format returns the log's format.
func (l *Log) Format() Format { return l.format }

// MaxEntry returns the longest entry the log takes, in bytes.
func (l *Log) MaxEntry() int { return l.maxEntry }

// Member returns the log's index in its Set, or -1 for a standalone log.
func (l *Log) Member() int {
	if l.set == nil {
		return -1
	}
	return l.member
}

// Recovery returns what Open found and repaired, as it was when Open
// returned (for a log from Create: an empty log); Stats describes the log
// now.
func (l *Log) Recovery() Recovery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// Stats describes the log now.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{
		Format: l.format, Entries: l.count, NextSeq: l.nextSeq(),
		Used: l.tail - l.start, Capacity: l.end - l.start,
		MaxEntry: l.maxEntry, Align: l.alignMask + 1, MaxBatch: l.maxBatch,
		Checksum: !l.noChecksum, Pass: l.pass, Wraps: l.wraps,
	}
	if l.count > 0 {
		s.FirstSeq = l.first
	}
	return s
}

func (l *Log) String() string {
	s := l.Stats()
	return fmt.Sprintf("walog %s at offset %d: %d entries, %d of %d bytes used, next seq %d", s.Format, l.base, s.Entries, s.Used, s.Capacity, s.NextSeq)
}
