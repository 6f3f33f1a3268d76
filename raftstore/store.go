package raftstore

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// Store is hashicorp/raft's LogStore and StableStore on one braid region.
// Its methods may be called from many goroutines.
type Store struct {
	r   *persist.Region
	own bool // Close closes r
	geo geometry
	v   variant

	metaMu sync.Mutex
	meta   *cow.Array
	m      meta // what the meta object holds

	mu      sync.RWMutex // the log: segs, ents, active, err, closed
	segs    []segment
	ents    []loc // the live entries, oldest first
	active  int   // the segment appends go to
	err     error // a write failed: the log takes no more
	closed  bool
	scratch []byte
	batch   [][]byte
	bufs    sync.Pool // of *[]byte, for GetLog

	stable stable
}

// segment is one walog PopLog of the log.
type segment struct {
	log   *walog.Log
	n     int    // entries it holds, deleted ones below the floor included
	live  int    // of those, the entries in ents
	first uint64 // raft index of its first entry (n > 0)
}

// loc says where a live entry is.
type loc struct {
	index uint64
	seq   uint64 // its walog sequence number
	off   int    // its region offset
	seg   int
}

// Open opens the store in the file at path, creating the file (of
// Footprint bytes) and the store when the file does not exist.
func Open(path string, opts *Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var po persist.Options
	if opts != nil && opts.Region != nil {
		po = *opts.Region
	}
	po.Size, po.Create = 0, false
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		po.Size, po.Create = int64(opts.geometry().footprint()), true
	}
	r, err := persist.Map(path, &po)
	if err != nil {
		return nil, fmt.Errorf("raftstore: %w", err)
	}
	s, err := OpenRegion(r, opts)
	if err != nil {
		r.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// OpenRegion opens the store at the start of r, creating it when r holds
// none (all zeros, or a Create that did not finish). The store keeps r;
// close the store before r.
func OpenRegion(r *persist.Region, opts *Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Store{r: r}
	if opts != nil {
		s.v = opts.variant
	}
	a, m, err := readMeta(r)
	switch {
	case errors.Is(err, errNoStore):
		if a != nil {
			a.Close()
		}
		err = s.create(opts.geometry())
	case err == nil:
		s.meta, s.m, s.geo = a, m, m.geo
		if err = opts.match(m.geo); err == nil {
			err = s.open()
		}
	}
	if err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// Create makes a new, empty store at the start of r, whatever r held
// (an existing store is lost), and returns it open. A crash during Create
// leaves no store (OpenRegion then creates one) or the empty store.
func Create(r *persist.Region, opts *Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Store{r: r}
	if opts != nil {
		s.v = opts.variant
	}
	if err := s.create(opts.geometry()); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// create zeroes the meta object, formats the logs, then writes the meta
// object: the store exists once that last update is durable.
func (s *Store) create(g geometry) error {
	s.geo = g
	if n := g.footprint(); s.r.Size() < n {
		return fmt.Errorf("%w: %d bytes hold no store of %d segments of %d bytes and stable logs of %d (%d bytes)", ErrTooSmall, s.r.Size(), g.segments, g.segSize, g.stableSize, n)
	}
	// The meta object goes zero first: a crash before the last update
	// leaves no store (errNoStore), never an old meta over new logs.
	a, err := cow.Create(s.r, metaOptions())
	if err != nil {
		return fmt.Errorf("raftstore: meta: %w", err)
	}
	s.meta = a
	s.stable.kv = map[string][]byte{}
	for i := range 2 {
		l, err := walog.Create(s.r, g.stableOptions(i))
		if err != nil {
			return fmt.Errorf("raftstore: stable log %d: %w", i, err)
		}
		s.stable.logs[i] = l
	}
	s.segs = make([]segment, g.segments)
	for i := range s.segs {
		l, err := walog.Create(s.r, g.segOptions(i))
		if err != nil {
			return fmt.Errorf("raftstore: segment %d: %w", i, err)
		}
		s.segs[i].log = l
	}
	return s.updateMeta(func(m *meta) { *m = meta{geo: g} })
}

// open recovers the logs (walog.Open each), rebuilds the stable keys and
// the index of the live entries.
func (s *Store) open() error {
	g := s.geo
	if n := g.footprint(); s.r.Size() < n {
		return fmt.Errorf("%w: the store needs %d bytes, the region has %d", ErrTooSmall, n, s.r.Size())
	}
	for i := range 2 {
		l, err := walog.Open(s.r, g.stableOptions(i))
		if err != nil {
			return fmt.Errorf("raftstore: stable log %d: %w", i, err)
		}
		s.stable.logs[i] = l
	}
	if err := s.stable.load(s.stable.logs[s.m.stable]); err != nil {
		return err
	}
	s.segs = make([]segment, g.segments)
	for i := range s.segs {
		l, err := walog.Open(s.r, g.segOptions(i))
		if err != nil {
			return fmt.Errorf("raftstore: segment %d: %w", i, err)
		}
		s.segs[i].log = l
	}
	return s.recoverLog()
}

// release closes what open or create opened.
func (s *Store) release() {
	for _, l := range s.stable.logs {
		if l != nil {
			l.Close()
		}
	}
	for _, sg := range s.segs {
		if sg.log != nil {
			sg.log.Close()
		}
	}
	if s.meta != nil {
		s.meta.Close()
	}
}

// Close closes the logs, the meta array and, for a store from Open, its
// file (unmapped and closed: the store holds no file after Close). Every
// acknowledged write is durable already; Close records the logs' tails.
// Every method of a closed store returns ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stable.mu.Lock()
	defer s.stable.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed, s.stable.closed = true, true
	var errs []error
	for _, l := range s.stable.logs {
		errs = append(errs, l.Close())
	}
	for _, sg := range s.segs {
		errs = append(errs, sg.log.Close())
	}
	errs = append(errs, s.meta.Close())
	if s.own {
		errs = append(errs, s.r.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("raftstore: close: %w", err)
	}
	return nil
}

// Region returns the region the store lives in.
func (s *Store) Region() *persist.Region { return s.r }
