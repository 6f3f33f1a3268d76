package walog

import (
	"fmt"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

// Limits and defaults.
const (
	// HeaderSize is the size of the log header at the start of a log's
	// area, where the first entry begins: two blocks of BlockSize bytes
	// (Optane's internal write unit), the header and its copy.
	HeaderSize = 2 * BlockSize
	// MinSize is the smallest log area: the header and one block of
	// entries.
	MinSize = HeaderSize + BlockSize
	// MaxEntryLimit is the largest MaxEntry a log can be created with.
	MaxEntryLimit = 1 << 26
	// DefaultMaxEntry is MaxEntry when Options leave it 0 (or the largest
	// entry that fits, for smaller logs).
	DefaultMaxEntry = 64 << 10
	// DefaultChunk is Options.Chunk when left 0.
	DefaultChunk = 1 << 20
	// DefaultMaxBatch is Options.MaxBatch when left 0 (raised to one
	// entry of MaxEntry when that is larger, lowered to the log's size).
	DefaultMaxBatch = 256 << 10
	// MaxBatchLimit is the largest MaxBatch a log can be created with.
	MaxBatchLimit = 1 << 30
)

// Options configure Create, Open and the sets. A nil *Options means the
// defaults. Format, MaxEntry and Align are recorded in the log header by
// Create; Open reads them from there, and when Options set them they must
// match (ErrBadFormat otherwise).
type Options struct {
	// Format is the entry encoding; 0 means PopLog.
	Format Format
	// Offset is where the log's area starts in the region: a multiple of
	// 256. Ignored by the sets, whose Parts say where each log lives.
	Offset int
	// Size is the byte length of the log's area, header included: a
	// multiple of 256, at least MinSize. 0 means the rest of the region
	// (rounded down to 256) for Create, and the size in the header for
	// Open.
	Size int
	// MaxEntry is the largest entry in bytes; 0 means DefaultMaxEntry, or
	// the largest entry that fits when the log is smaller.
	MaxEntry int
	// Align is the alignment of every entry's start: 8 (0 means 8), 64
	// (entries never share a cache line) or 256 (every append starts a
	// new Optane block, which helps real PMem at the cost of space).
	Align int
	// MaxBatch is the most bytes of the log one AppendBatch may occupy
	// (entries with their headers, padding and alignment); a larger batch
	// is ErrTooLarge. 0 means DefaultMaxBatch. It is at least one entry of
	// MaxEntry, at most the log. It bounds how far past the last valid
	// entry an interrupted append can have written, which is what lets
	// Open tell a torn tail from corruption (see Open): smaller is
	// stricter.
	MaxBatch int
	// NoChecksum creates a log whose entries carry no CRC-32C: the
	// paper's raw formats, for measuring what the checksum costs. Such a
	// log detects torn writes (popcount, validity bits, commit word) but
	// only some corruption: a bit flipped in an entry that still passes
	// its torn-write check is returned as data. Recorded in the header;
	// Open ignores the option.
	NoChecksum bool
	// Salvage lets Open (and OpenSet) recover a log whose entries are
	// corrupt: instead of failing with ErrCorrupt, it keeps the entries
	// before the first bad one and discards everything after it, as if a
	// crash had torn it, and says so in Report (Salvaged, Stop). Entries
	// after the bad one may have been acknowledged: use it when losing
	// them is better than not opening the log. Create ignores it.
	Salvage bool
	// Chunk is how many bytes the log prepares at a time ahead of its
	// tail: PopLog and Classic zero them, and every format records the
	// prepared end in the header (one extra barrier per chunk), which
	// bounds what recovery must scrub after a crash. 0 means DefaultChunk;
	// it is rounded up to 256 and clamped to the log.
	Chunk int
	// Wrap makes a full log start over instead of failing with ErrFull:
	// Checkpoint is called, then every entry is discarded (as by Reset)
	// and the append goes to the start of the log. Sequence numbers keep
	// growing.
	Wrap bool
	// Checkpoint, with Wrap, is called before a full log discards its
	// entries, with the log's lock held: it must make durable elsewhere
	// whatever the entries protect. It may call the log's Member, Format
	// and MaxEntry, but no other method (they would wait for the lock).
	// If it returns an error the append fails with it and the log is
	// unchanged.
	Checkpoint func(l *Log) error

	// variant selects a deliberately broken encoding (tests only).
	variant variant
}

// Validate reports the first problem with the options that does not
// depend on the region, wrapping ErrInvalid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	switch {
	case o.Format != 0 && !o.Format.valid():
		return fmt.Errorf("%w: unknown format %d: want 0 (the default, PopLog), PopLog (1), RAWL (2) or Classic (3)", ErrInvalid, o.Format)
	case o.Offset < 0 || o.Offset%BlockSize != 0:
		return fmt.Errorf("%w: Offset %d: want a multiple of %d, >= 0", ErrInvalid, o.Offset, BlockSize)
	case o.Size < 0 || o.Size%BlockSize != 0:
		return fmt.Errorf("%w: Size %d: want a multiple of %d", ErrInvalid, o.Size, BlockSize)
	case o.Size != 0 && o.Size < MinSize:
		return fmt.Errorf("%w: Size %d is below the minimum %d", ErrInvalid, o.Size, MinSize)
	case o.MaxEntry < 0 || o.MaxEntry > MaxEntryLimit:
		return fmt.Errorf("%w: MaxEntry %d: want 1..%d (0 for the default)", ErrInvalid, o.MaxEntry, MaxEntryLimit)
	case o.Align != 0 && o.Align != 8 && o.Align != 64 && o.Align != 256:
		return fmt.Errorf("%w: Align %d: want 8, 64 or 256", ErrInvalid, o.Align)
	case o.Chunk < 0:
		return fmt.Errorf("%w: Chunk %d is negative: want 0 (DefaultChunk) or a byte count", ErrInvalid, o.Chunk)
	case o.MaxBatch < 0 || o.MaxBatch > MaxBatchLimit:
		return fmt.Errorf("%w: MaxBatch %d: want 1..%d (0 for the default)", ErrInvalid, o.MaxBatch, MaxBatchLimit)
	case o.Checkpoint != nil && !o.Wrap:
		return fmt.Errorf("%w: Checkpoint without Wrap would never be called", ErrInvalid)
	}
	return nil
}

// geometry is where a log lives and how its entries are laid out: what
// Create writes into the header and Open reads back.
type geometry struct {
	format     Format
	base       int // offset of the header in the region
	size       int // bytes of the area, header included
	maxEntry   int
	maxBatch   int
	align      int
	noChecksum bool
}

func (g geometry) start() int { return g.base + HeaderSize }
func (g geometry) end() int   { return g.base + g.size }

// checkRegion rejects regions a log cannot live in: nil, closed, and
// memory that is not 8-byte aligned (its 8-byte stores would not be
// failure-atomic).
func checkRegion(r *persist.Region) error {
	if r == nil {
		return fmt.Errorf("%w: nil region", ErrInvalid)
	}
	if err := r.Readable(); err != nil {
		return regionErr(err, "no log can be used there")
	}
	if b := r.Bytes(); len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))&7 != 0 {
		return fmt.Errorf("%w: the region's memory is not 8-byte aligned", ErrInvalid)
	}
	return nil
}

// createGeometry resolves the options for Create on r.
func createGeometry(r *persist.Region, o *Options, off, size int) (geometry, error) {
	if err := checkRegion(r); err != nil {
		return geometry{}, err
	}
	if err := r.Writable(); err != nil {
		return geometry{}, regionErr(err, "Create needs a writable region")
	}
	g := geometry{format: o.Format, base: off, size: size, maxEntry: o.MaxEntry, align: o.Align, noChecksum: o.NoChecksum}
	if g.format == 0 {
		g.format = PopLog
	}
	if g.align == 0 {
		g.align = 8
	}
	rs := r.Size()
	if off > rs {
		return g, fmt.Errorf("%w: Offset %d is beyond the region's %d bytes", ErrTooSmall, off, rs)
	}
	if g.size == 0 {
		g.size = (rs - off) &^ (BlockSize - 1)
		if g.size < MinSize {
			return g, fmt.Errorf("%w: %d bytes from offset %d: a log needs at least %d", ErrTooSmall, rs-off, off, MinSize)
		}
	}
	if g.size < MinSize {
		return g, fmt.Errorf("%w: Size %d: a log needs at least %d", ErrInvalid, g.size, MinSize)
	}
	if g.size > rs-off {
		return g, fmt.Errorf("%w: Size %d at Offset %d exceeds the region's %d bytes", ErrTooSmall, g.size, off, rs)
	}
	body := g.size - HeaderSize
	fit := maxFitting(g.format, body)
	switch {
	case g.maxEntry == 0:
		g.maxEntry = min(DefaultMaxEntry, fit)
	case g.maxEntry > fit:
		return g, fmt.Errorf("%w: MaxEntry %d does not fit in a %s log of %d bytes (at most %d)", ErrInvalid, g.maxEntry, g.format, g.size, fit)
	}
	one := g.format.footprint(g.maxEntry)
	switch g.maxBatch = o.MaxBatch; {
	case g.maxBatch == 0:
		g.maxBatch = min(max(DefaultMaxBatch, one), body)
	case g.maxBatch < one:
		return g, fmt.Errorf("%w: MaxBatch %d is less than one entry of MaxEntry %d (%d bytes in a %s log)", ErrInvalid, g.maxBatch, g.maxEntry, one, g.format)
	case g.maxBatch > body:
		return g, fmt.Errorf("%w: MaxBatch %d exceeds the log's %d bytes for entries", ErrInvalid, g.maxBatch, body)
	}
	return g, nil
}

// maxFitting is the longest entry of format f whose footprint fits in body
// bytes.
func maxFitting(f Format, body int) int {
	lo, hi := 0, min(body, MaxEntryLimit)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if f.footprint(mid) <= body {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// chunkSize resolves Options.Chunk for a log of body bytes.
func chunkSize(o *Options, body int) int {
	c := o.Chunk
	if c == 0 {
		c = DefaultChunk
	}
	c = (c + BlockSize - 1) &^ (BlockSize - 1)
	return min(c, body)
}
