package raftstore

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// Defaults and limits.
const (
	// DefaultSegments is Options.Segments when left 0.
	DefaultSegments = 8
	// DefaultSegmentSize is Options.SegmentSize when left 0.
	DefaultSegmentSize = 32 << 20
	// DefaultStableSize is Options.StableSize when left 0.
	DefaultStableSize = 256 << 10
	// MinSegmentSize is the smallest segment (and stable log).
	MinSegmentSize = 4 << 10
	// MaxSegments is the most segments a store has.
	MaxSegments = 1 << 16
	// metaArea is the bytes before the first log: the meta array (cow),
	// padded to a page so that poison of a log page spares it.
	metaArea = 4 << 10
	// defaultMaxEntry bounds a record when the segment is large.
	defaultMaxEntry = 4 << 20
	maxInt          = int(^uint(0) >> 1)
)

// Options configure a store. A nil *Options means the defaults. The
// geometry (Segments, SegmentSize, StableSize) is recorded when the store
// is created; opening an existing store takes it from there, and a field
// set here that differs is ErrInvalid (Options that contradict the
// media, as in every braid structure).
type Options struct {
	// Segments is the number of log segments, 2 to MaxSegments; 0 means
	// DefaultSegments. The log holds at most Segments*SegmentSize bytes
	// of records: raft must compact it (snapshots) before that.
	Segments int
	// SegmentSize is the bytes of each segment, a multiple of 4096, at
	// least MinSegmentSize; 0 means DefaultSegmentSize. A record (34
	// bytes plus the entry's data and extensions) is at most a quarter of
	// a segment, and at most 4 MiB.
	SegmentSize int
	// StableSize is the bytes of each of the stable store's two logs, a
	// multiple of 4096, at least MinSegmentSize; 0 means
	// DefaultStableSize.
	StableSize int
	// Region configures the mapping Open makes (persist.Map): ForcePMem,
	// Flush and so on. Size and Create are Open's to set.
	Region *persist.Options

	variant variant
}

type geometry struct {
	segments, segSize, stableSize int
}

func (g geometry) footprint() int { return metaArea + 2*g.stableSize + g.segments*g.segSize }
func (g geometry) stableOff(i int) int {
	return metaArea + i*g.stableSize
}
func (g geometry) segOff(i int) int { return metaArea + 2*g.stableSize + i*g.segSize }

// maxEntry is the largest record of the log's segments.
func (g geometry) maxEntry() int { return min(defaultMaxEntry, g.segSize/4) }

func (g geometry) segOptions(i int) *walog.Options {
	body := g.segSize - walog.HeaderSize
	return &walog.Options{
		Format: walog.PopLog, Offset: g.segOff(i), Size: g.segSize,
		MaxEntry: g.maxEntry(), MaxBatch: min(body, walog.MaxBatchLimit),
		Chunk: min(walog.DefaultChunk, g.segSize/4),
	}
}

func (g geometry) stableOptions(i int) *walog.Options {
	body := g.stableSize - walog.HeaderSize
	return &walog.Options{
		Format: walog.PopLog, Offset: g.stableOff(i), Size: g.stableSize,
		MaxEntry: g.stableSize / 4, MaxBatch: min(body, walog.MaxBatchLimit),
		Chunk: min(walog.DefaultChunk, g.stableSize/4),
	}
}

// Validate reports the first problem with the options, wrapping
// ErrInvalid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Segments != 0 && (o.Segments < 2 || o.Segments > MaxSegments) {
		return fmt.Errorf("%w: Segments %d outside 2..%d", ErrInvalid, o.Segments, MaxSegments)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"SegmentSize", o.SegmentSize}, {"StableSize", o.StableSize}} {
		if f.v != 0 && (f.v < MinSegmentSize || f.v%4096 != 0 || int64(f.v) > 1<<40) {
			return fmt.Errorf("%w: %s %d: want a multiple of 4096 from %d to 2^40", ErrInvalid, f.name, f.v, MinSegmentSize)
		}
	}
	if g := o.geometry(); uint64(g.segments)*uint64(g.segSize)+2*uint64(g.stableSize) > uint64(maxInt-metaArea) {
		return fmt.Errorf("%w: %d segments of %d bytes and stable logs of %d do not fit this platform's address space", ErrInvalid, g.segments, g.segSize, g.stableSize)
	}
	if o.Region != nil {
		if err := o.Region.Validate(); err != nil {
			return fmt.Errorf("%w: Region: %w", ErrInvalid, err)
		}
	}
	return nil
}

// geometry returns the options' geometry with defaults for what they
// leave 0.
func (o *Options) geometry() geometry {
	g := geometry{DefaultSegments, DefaultSegmentSize, DefaultStableSize}
	if o == nil {
		return g
	}
	if o.Segments != 0 {
		g.segments = o.Segments
	}
	if o.SegmentSize != 0 {
		g.segSize = o.SegmentSize
	}
	if o.StableSize != 0 {
		g.stableSize = o.StableSize
	}
	return g
}

// match checks a recorded geometry against the fields the options set.
func (o *Options) match(g geometry) error {
	if o == nil {
		return nil
	}
	if (o.Segments != 0 && o.Segments != g.segments) || (o.SegmentSize != 0 && o.SegmentSize != g.segSize) || (o.StableSize != 0 && o.StableSize != g.stableSize) {
		return fmt.Errorf("%w: the store holds %d segments of %d bytes and stable logs of %d; the options ask %d, %d, %d",
			ErrInvalid, g.segments, g.segSize, g.stableSize, o.Segments, o.SegmentSize, o.StableSize)
	}
	return nil
}

// Footprint returns the bytes a store with these options occupies: the
// size of the file Open creates.
func Footprint(opts *Options) (int, error) {
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	return opts.geometry().footprint(), nil
}
