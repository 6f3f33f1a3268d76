package pagelog

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/braid-pm/braid/walog"
)

// Layout is the persistent format of a store, chosen at Create.
type Layout uint8

const (
	// Packed is copy-on-write with a one-word slot header: page id, page
	// version number and a check code packed into one 8-byte word, written
	// with one failure-atomic store. Two barriers per page write. The
	// default.
	Packed Layout = iota + 1
	// TwoWord is copy-on-write with the header of the paper: page id and
	// page version number in two words of one cache line, the page id
	// stored strictly before the version number. Three barriers per page
	// write, or two with Options.FenceOnly (which is only safe when cache
	// lines are written back whole; see the package documentation).
	TwoWord
	// Checksum writes pages in place, each guarded by a CRC32C, after a
	// backup copy of the new page has been made durable; recovery repairs
	// a torn page from its backup. Two barriers per page write, but every
	// page is written twice.
	Checksum
)

func (l Layout) String() string {
	switch l {
	case Packed:
		return "packed"
	case TwoWord:
		return "two-word"
	case Checksum:
		return "checksum"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// Defaults and limits.
const (
	DefaultPageSize = 4096
	// DefaultSpares is the number of slots beyond the page count when
	// Options.Slots is 0: the number of page writes that can be in flight
	// at once.
	DefaultSpares = 8
	// MaxSpares bounds Slots-Pages.
	MaxSpares   = 1024
	MinPageSize = 256
	MaxPageSize = 1 << 20
	// MaxSlots bounds the slot count: slot indexes are 32-bit in DRAM
	// (formatMaxSlots), and on a 32-bit platform a slot count is an int.
	// On either, the store's size must also fit in an int (Size): 2 GiB
	// on a 32-bit platform, which in practice is the tighter limit there.
	MaxSlots = min(formatMaxSlots, math.MaxInt)
)

// formatMaxSlots is the largest slot count the format allows, whatever
// the platform.
const formatMaxSlots = 1<<32 - 1

// Options configure Create and Open. A nil *Options means the defaults.
//
// Layout, PageSize, Pages, Slots, PIDBits, PayloadCRC and MicroLogBytes are
// persistent:
// Create writes them into the store's superblock. At Open they may be left
// 0 (false), which means "whatever the store has"; a non-zero value that
// differs from the store's is an error (so a caller can insist on its page
// size, or on payload checksums). Offset says where the store is;
// FenceOnly, MicroLogLines and SkipScan only affect the running process.
type Options struct {
	// Layout is the persistent format; 0 means Packed.
	Layout Layout
	// PageSize in bytes: a multiple of 256 from 256 to 1 MiB; 0 means 4096.
	PageSize int
	// Pages is the number of logical pages. 0 at Create means as many as
	// fit in the region.
	Pages int
	// Slots is the number of page-sized slots, more than Pages: the extra
	// ones ("spares") are where copy-on-write writes the next version of a
	// page (Packed, TwoWord), or the backup copies (Checksum). Each spare
	// is one lane: a page write is in flight on a lane, page p always on
	// lane p mod (Slots-Pages), so Slots-Pages page writes can run at once.
	// 0 means Pages+DefaultSpares.
	Slots int
	// PIDBits is, for Packed, how many of the header word's 47 data bits
	// hold the page id; the other 47-PIDBits (at least 2) hold the version
	// number, which counts modulo 2^(47-PIDBits) and so never runs out. 0
	// means as few as Pages needs. Larger values only make versions wrap
	// sooner (tests use that).
	PIDBits int
	// PayloadCRC, for the copy-on-write layouts, stores a CRC32C of every
	// page version (over the payload and the page id) in its slot header,
	// written before the header's commit word, and verifies it on every
	// Read, in Check and, unless SkipScan, for every page at Open: a page
	// whose bytes changed after they were written is then an error
	// wrapping ErrCorrupt, never data. Without it only the headers are
	// checked and a damaged payload is returned as it is. It costs a
	// CRC32C of the page on every write and read (BenchmarkPageWrite:
	// cow-crc against cow), which is why it is off by default. The Checksum layout always verifies pages;
	// for it PayloadCRC changes nothing.
	PayloadCRC bool
	// FenceOnly, for TwoWord, separates the page-id store from the
	// version-number store with a fence only, not a flush and a fence: the
	// cheaper barrier of the paper. It is correct only where a cache line
	// is written back as a whole; under the 8-byte failure-atomicity braid
	// assumes, a crash can persist the version without the page id.
	FenceOnly bool
	// Offset is where the store begins in the region: a multiple of 4096,
	// 0 by default. Several stores (or a store and other structures) can
	// share a region; Open must be given the same Offset.
	Offset int
	// MicroLogLines: WriteLines uses the micro log when at most this many
	// lines are dirty, and a full copy-on-write write otherwise. 0 means
	// DefaultMicroLogLines(PageSize); negative means never. Ignored by
	// Checksum.
	MicroLogLines int
	// MicroLogBytes is the size of each lane's micro log (a walog PopLog,
	// its 256-byte header included), copy-on-write layouts only: a
	// multiple of 256 that holds at least one entry of a whole page. 0
	// means DefaultMicroLogBytes(PageSize). When a log is full its
	// entries are made durable in place and it starts over (a few
	// barriers), so a larger log spreads that over more writes.
	MicroLogBytes int
	// SkipScan makes Open skip reading every page to verify its checksum
	// (PayloadCRC or the Checksum layout), which takes time in proportion
	// to the store's size. Read and Check still verify every page they
	// read, so a damaged page is still never returned; without the scan it
	// is found when it is read rather than at Open. Use it to open a large
	// store quickly, or to get at the intact pages of a store that Open
	// refuses because of a damaged one.
	SkipScan bool
}

// DefaultMicroLogLines is the dirty-line count up to which WriteLines uses
// the micro log by default: one line per 2 KiB of page (2 for 4 KiB pages,
// 8 for 16 KiB, none below 2 KiB). A micro-log write costs one barrier
// plus a fixed cost per dirty line (each line is written twice, once to
// the log, once in place at its page), a copy-on-write write two barriers
// and the whole page; measured here (README, pmbench -mode page) the micro
// log was faster up to 2 of 64 lines of a 4 KiB page and up to 8 of 256
// lines of a 16 KiB page.
func DefaultMicroLogLines(pageSize int) int {
	return pageSize / 2048
}

// DefaultMicroLogBytes is the size of a lane's micro log when
// Options.MicroLogBytes is 0: 64 KiB, or room for four entries of a whole
// page when that is more.
func DefaultMicroLogBytes(pageSize int) int {
	return roundUp(max(64<<10, walogHeader+4*microFootprint(microMax(pageSize))), areaAlign)
}

// minMicroLogBytes is the smallest micro log: its header and one entry of
// a whole page.
func minMicroLogBytes(pageSize int) int {
	return roundUp(walogHeader+microFootprint(microMax(pageSize)), walogBlock)
}

// Validate reports the first problem with the options, wrapping ErrInvalid
// (or ErrPageSize for a bad page size). Sizes that depend on the region are
// checked by Create.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	switch {
	case o.Layout > Checksum:
		return fmt.Errorf("%w: unknown layout %d: want 0 (the default, Packed), Packed (1), TwoWord (2) or Checksum (3)", ErrInvalid, o.Layout)
	case o.PageSize < 0 || o.PageSize != 0 && (o.PageSize < MinPageSize || o.PageSize > MaxPageSize || o.PageSize%MinPageSize != 0):
		return fmt.Errorf("%w: page size %d: want a multiple of %d from %d to %d", ErrPageSize, o.PageSize, MinPageSize, MinPageSize, MaxPageSize)
	case o.Pages < 0:
		return fmt.Errorf("%w: Pages %d is negative: want 0 (as many as fit) or more", ErrInvalid, o.Pages)
	case o.Offset < 0 || o.Offset%areaAlign != 0:
		return fmt.Errorf("%w: Offset %d: want a multiple of %d", ErrInvalid, o.Offset, areaAlign)
	case o.Slots < 0:
		return fmt.Errorf("%w: Slots %d is negative: want 0 (Pages+DefaultSpares) or more than Pages, at most %d", ErrInvalid, o.Slots, MaxSlots)
	case o.Slots > MaxSlots:
		return fmt.Errorf("%w: Slots %d exceeds %d", ErrInvalid, o.Slots, MaxSlots)
	case o.Pages > 0 && o.Slots > 0 && o.Slots <= o.Pages:
		return fmt.Errorf("%w: Slots %d must exceed Pages %d (copy-on-write needs a spare slot)", ErrInvalid, o.Slots, o.Pages)
	case o.Pages > 0 && o.Slots-o.Pages > MaxSpares:
		return fmt.Errorf("%w: Slots-Pages = %d spares exceeds %d", ErrInvalid, o.Slots-o.Pages, MaxSpares)
	case o.PIDBits < 0 || o.PIDBits > maxPIDBits:
		return fmt.Errorf("%w: PIDBits %d: want 0 (automatic) or 1..%d", ErrInvalid, o.PIDBits, maxPIDBits)
	case o.PIDBits > 0 && o.Layout != 0 && o.Layout != Packed:
		return fmt.Errorf("%w: PIDBits applies to the Packed layout only, not %v", ErrInvalid, o.Layout)
	case o.FenceOnly && o.Layout != 0 && o.Layout != TwoWord:
		return fmt.Errorf("%w: FenceOnly applies to the TwoWord layout only, not %v", ErrInvalid, o.Layout)
	case o.MicroLogBytes != 0 && o.Layout == Checksum:
		return fmt.Errorf("%w: MicroLogBytes: the Checksum layout has no micro log", ErrInvalid)
	case o.MicroLogBytes < 0 || o.MicroLogBytes%walogBlock != 0 || o.MicroLogBytes > maxMicroLogBytes:
		return fmt.Errorf("%w: MicroLogBytes %d: want a multiple of %d up to %d (0 for the default)", ErrInvalid, o.MicroLogBytes, walogBlock, maxMicroLogBytes)
	}
	if o.MicroLogBytes != 0 && o.PageSize != 0 && o.MicroLogBytes < minMicroLogBytes(o.PageSize) {
		return fmt.Errorf("%w: MicroLogBytes %d cannot hold an entry of a whole %d-byte page (need %d)", ErrInvalid, o.MicroLogBytes, o.PageSize, minMicroLogBytes(o.PageSize))
	}
	if o.Pages > 0 && o.PIDBits > 0 && o.PIDBits < pidBitsFor(o.Pages) {
		return fmt.Errorf("%w: PIDBits %d cannot hold %d page ids (need %d)", ErrInvalid, o.PIDBits, o.Pages, pidBitsFor(o.Pages))
	}
	return nil
}

// maxPIDBits leaves at least 2 bits of version number in a packed header:
// the two slots of a page are then told apart modulo 4.
const maxPIDBits = sealData - 1 - 2

// pidBitsFor is the number of bits page ids 0..pages-1 need (at least 1).
func pidBitsFor(pages int) int {
	return max(1, bits.Len64(uint64(pages-1)))
}

// Sizes of the on-media areas (see the package documentation for the map).
const (
	lineSize         = 64
	superSize        = 2 * superCopyOff // superblock area: the superblock and its copy, a page each
	walogHeader      = walog.HeaderSize
	walogBlock       = walog.BlockSize
	maxMicroLogBytes = 1 << 30
	areaAlign        = 4096
	packedHdrSize    = 8  // commit word; +8 with payload CRCs
	twoWordHdrSize   = 16 // pid and pvn words; +16 with payload CRCs (one line)
	csumHdrSize      = 32
)

// geometry is where everything lives, derived from the superblock fields.
type geometry struct {
	layout    Layout
	pageSize  int
	lines     int // cache lines per page
	maskWords int // uint64 words of a dirty-line mask
	pages     int
	slots     int
	lanes     int // = slots - pages
	pidBits   uint
	verMask   uint64 // Packed: versions count modulo verMask+1
	crc       bool   // payload CRCs in the slot headers (copy-on-write)
	crcOff    int    // offset of the payload CRC word (or Checksum's CRC) in a slot header

	hdrSize   int // bytes per slot header
	hdrOff    int // slot header table
	logOff    int // micro logs (Packed, TwoWord): lanes x logStride
	logStride int // bytes of one lane's micro log (a walog area)
	logMax    int // the largest micro-log entry: every line of a page
	slotOff   int // payload slots: slots x pageSize
	size      int // bytes the store needs
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// newGeometry computes the layout; it fails when the numbers overflow.
func newGeometry(layout Layout, pageSize, pages, slots, pidBits int, crc bool, logBytes int) (geometry, error) {
	g := geometry{layout: layout, pageSize: pageSize, pages: pages, slots: slots}
	g.lines = pageSize / lineSize
	g.maskWords = (g.lines + 63) / 64
	g.lanes = slots - pages
	g.pidBits = uint(pidBits)
	g.crc = crc && layout != Checksum
	switch layout {
	case Packed:
		g.hdrSize, g.crcOff = packedHdrSize, packedHdrSize
		g.verMask = 1<<(sealData-1-g.pidBits) - 1
	case TwoWord:
		g.hdrSize, g.crcOff = twoWordHdrSize, twoWordHdrSize
	case Checksum:
		g.hdrSize, g.crcOff = csumHdrSize, 16
	}
	if g.crc {
		g.hdrSize *= 2
	}
	if slots <= 0 || slots > MaxSlots || pages <= 0 || pages >= slots || g.lanes > MaxSpares {
		return g, fmt.Errorf("%w: %d pages in %d slots", ErrInvalid, pages, slots)
	}
	if layout != Checksum {
		if logBytes == 0 {
			logBytes = DefaultMicroLogBytes(pageSize)
		}
		if logBytes%walogBlock != 0 || logBytes < minMicroLogBytes(pageSize) || logBytes > maxMicroLogBytes {
			return g, fmt.Errorf("%w: micro logs of %d bytes for %d-byte pages", ErrInvalid, logBytes, pageSize)
		}
		g.logStride = logBytes
		g.logMax = microMax(pageSize)
	}
	// The sizes in uint64, where nothing overflows (slots < 2^32, header
	// <= 64 B, lanes <= 2^10, a log <= 2^30 B, a page <= 2^20 B: < 2^53),
	// then checked against int, whose range is the address space.
	hdrs := roundUp64(uint64(slots)*uint64(g.hdrSize), areaAlign)
	logs := roundUp64(uint64(g.lanes)*uint64(g.logStride), areaAlign)
	need := superSize + hdrs + logs + uint64(slots)*uint64(pageSize)
	if need > math.MaxInt {
		return g, &tooLargeError{pages: pages, pageSize: pageSize, slots: slots, need: need}
	}
	g.hdrOff = superSize
	g.logOff = g.hdrOff + int(hdrs)
	g.slotOff = g.logOff + int(logs)
	g.size = int(need)
	return g, nil
}

func roundUp64(n, a uint64) uint64 { return (n + a - 1) / a * a }

// tooLargeError is a store larger than an int can count, and so than the
// address space: possible on a 32-bit platform only.
type tooLargeError struct {
	pages, pageSize, slots int
	need                   uint64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%v: %d pages of %d B in %d slots need %d bytes, more than a %d-bit process can map (%d)",
		ErrTooSmall, e.pages, e.pageSize, e.slots, e.need, bits.UintSize, math.MaxInt)
}

func (e *tooLargeError) Unwrap() error { return ErrTooSmall }

// Size is Footprint under its older name (Footprint is the name every
// braid structure uses).
func Size(opts *Options) (int, error) { return Footprint(opts) }

// Footprint returns the number of bytes a store with these options needs
// (Pages must be set). Use it to size the region before Create.
func Footprint(opts *Options) (int, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	if o.Pages == 0 {
		return 0, fmt.Errorf("%w: Footprint needs Pages", ErrInvalid)
	}
	g, err := newGeometry(o.Layout, o.PageSize, o.Pages, o.Slots, o.PIDBits, o.PayloadCRC, o.MicroLogBytes)
	if err != nil {
		return 0, err
	}
	return g.size, nil
}

// withDefaults validates o and fills in what can be filled without knowing
// the region: layout, page size, slots (when Pages is known), PIDBits.
func (o *Options) withDefaults() (Options, error) {
	var d Options
	if o != nil {
		d = *o
	}
	if err := d.Validate(); err != nil {
		return d, err
	}
	if d.Layout == 0 {
		d.Layout = Packed
	}
	if d.PageSize == 0 {
		d.PageSize = DefaultPageSize
	}
	if d.Pages > 0 {
		d.fillPages(d.Pages)
	}
	return d, nil
}

// fillPages sets Pages and the fields that depend on it.
func (d *Options) fillPages(pages int) {
	d.Pages = pages
	if d.Slots == 0 {
		d.Slots = pages + DefaultSpares
	}
	if d.Layout == Packed && d.PIDBits == 0 {
		d.PIDBits = pidBitsFor(pages)
	}
}

// fit finds the largest page count whose store fits in size bytes (the
// size grows with the page count: binary search).
func (d Options) fit(size int) (int, error) {
	if d.Slots > 0 {
		return 0, fmt.Errorf("%w: Slots %d given without Pages", ErrInvalid, d.Slots)
	}
	fits := func(pages int) bool {
		t := d
		t.fillPages(pages)
		g, err := newGeometry(t.Layout, t.PageSize, t.Pages, t.Slots, t.PIDBits, t.PayloadCRC, t.MicroLogBytes)
		return err == nil && g.size <= size
	}
	lo, hi := 0, min(size/d.PageSize, MaxSlots-DefaultSpares)+1 // fits(lo), !fits(hi)
	for hi-lo > 1 {
		if m := lo + (hi-lo)/2; fits(m) {
			lo = m
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, fmt.Errorf("%w: %d bytes hold no page of %d bytes with %d spares", ErrTooSmall, size, d.PageSize, DefaultSpares)
	}
	return lo, nil
}
