package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// The meta object: one 64-byte object of a checksummed cow.Array at
// offset 0, updated failure-atomically (two barriers):
//
//	0   magic        u64 "braidRFT"
//	8   version      u32
//	12  segments     u32
//	16  segment size u64
//	24  stable size  u64
//	32  floor        u64 log entries with smaller indexes are deleted
//	40  stable       u64 which stable log (0 or 1) holds the keys
//	48  reserved     16 zero bytes
//
// All zeros means a Create that did not finish (the meta object is the
// last thing Create writes): Open creates the store again.
const (
	metaMagic   = 0x5446_5244_4941_5242 // "BRAIDRFT" little-endian
	metaVersion = 1
	metaSize    = 64
)

type meta struct {
	geo    geometry
	floor  uint64
	stable uint64
}

func (m *meta) encode() []byte {
	b := make([]byte, metaSize)
	binary.LittleEndian.PutUint64(b[0:], metaMagic)
	binary.LittleEndian.PutUint32(b[8:], metaVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(m.geo.segments))
	binary.LittleEndian.PutUint64(b[16:], uint64(m.geo.segSize))
	binary.LittleEndian.PutUint64(b[24:], uint64(m.geo.stableSize))
	binary.LittleEndian.PutUint64(b[32:], m.floor)
	binary.LittleEndian.PutUint64(b[40:], m.stable)
	return b
}

// errNoStore says the meta object is zero: no store was created here.
var errNoStore = errors.New("raftstore: no store")

func decodeMeta(b []byte) (meta, error) {
	if binary.LittleEndian.Uint64(b) == 0 && isZero(b) {
		return meta{}, errNoStore
	}
	if magic := binary.LittleEndian.Uint64(b); magic != metaMagic {
		return meta{}, fmt.Errorf("%w: meta object's magic %#x (want %#x)", ErrBadFormat, magic, uint64(metaMagic))
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != metaVersion {
		return meta{}, fmt.Errorf("%w: format version %d (this build reads %d)", ErrBadFormat, v, metaVersion)
	}
	m := meta{
		geo: geometry{
			segments:   int(binary.LittleEndian.Uint32(b[12:])),
			segSize:    int(min(binary.LittleEndian.Uint64(b[16:]), 1<<41)),
			stableSize: int(min(binary.LittleEndian.Uint64(b[24:]), 1<<41)),
		},
		floor:  binary.LittleEndian.Uint64(b[32:]),
		stable: binary.LittleEndian.Uint64(b[40:]),
	}
	o := Options{Segments: m.geo.segments, SegmentSize: m.geo.segSize, StableSize: m.geo.stableSize}
	if err := o.Validate(); err != nil || m.stable > 1 || o.Segments == 0 || o.SegmentSize == 0 || o.StableSize == 0 || !isZero(b[48:]) {
		return meta{}, fmt.Errorf("%w: meta object holds impossible fields (%d segments of %d bytes, stable logs of %d, stable %d)", ErrCorrupt, m.geo.segments, m.geo.segSize, m.geo.stableSize, m.stable)
	}
	return m, nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func metaOptions() *cow.Options {
	return &cow.Options{Offset: 0, ObjectSize: metaSize, Count: 1, Checksum: true}
}

// readMeta opens the meta array of r and reads the meta object; a missing
// array or a zero object is errNoStore (the array, if any, is returned
// open). Another kind of structure at offset 0, or a CoW array that is
// not a meta array, is ErrBadFormat naming what is there.
func readMeta(r *persist.Region) (*cow.Array, meta, error) {
	a, err := cow.Open(r, metaOptions())
	switch {
	case errors.Is(err, cow.ErrNoArray):
		return nil, meta{}, errNoStore
	case errors.Is(err, persist.ErrBadFormat) || errors.Is(err, persist.ErrInvalid):
		b := r.Bytes()[:min(8, r.Size())]
		if len(b) == 8 && binary.LittleEndian.Uint64(b) == pmheader.Magic("braidCOW") {
			return nil, meta{}, fmt.Errorf("%w: offset 0 holds %s that is not a raft store's meta array (%v)", ErrBadFormat, pmheader.Identify(b), err)
		}
		return nil, meta{}, fmt.Errorf("%w: offset 0 holds %s, not a raft store", ErrBadFormat, pmheader.Identify(b))
	case err != nil:
		return nil, meta{}, fmt.Errorf("raftstore: meta: %w", err)
	}
	b := make([]byte, metaSize)
	if err := a.Read(0, b); err != nil {
		a.Close()
		return nil, meta{}, fmt.Errorf("raftstore: meta: %w", err)
	}
	m, err := decodeMeta(b)
	if err != nil && !errors.Is(err, errNoStore) {
		a.Close()
		return nil, meta{}, err
	}
	return a, m, err
}

// updateMeta changes the meta object with fn (durable when it returns).
func (s *Store) updateMeta(fn func(*meta)) error {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	m := s.m
	fn(&m)
	if err := s.meta.Update(0, m.encode()); err != nil {
		return fmt.Errorf("raftstore: meta: %w", err)
	}
	s.m = m
	return nil
}
