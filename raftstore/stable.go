package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/braid-pm/braid/walog"
)

// The stable store is a log of Set records in one of two walog PopLogs
// (the meta object says which): each Set is one append (one barrier), and
// the keys are the latest record of each. A full log is compacted into
// the other one (every key's value, in batches), and the meta object is
// switched to it: a crash before the switch leaves the old log, whole.
//
//	record: key length u16, key, value
type stable struct {
	mu     sync.Mutex
	logs   [2]*walog.Log
	kv     map[string][]byte
	closed bool
	buf    []byte
}

// load reads the keys from the records of l.
func (st *stable) load(l *walog.Log) error {
	st.kv = map[string][]byte{}
	it := l.Iter()
	for it.Next() {
		b := it.Entry()
		if len(b) < 2 || int(binary.LittleEndian.Uint16(b)) > len(b)-2 || binary.LittleEndian.Uint16(b) == 0 {
			return fmt.Errorf("%w: stable record %d of %d bytes does not parse", ErrCorrupt, it.Seq(), len(b))
		}
		k := int(binary.LittleEndian.Uint16(b))
		st.kv[string(b[2:2+k])] = append([]byte(nil), b[2+k:]...)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("raftstore: stable log: %w", err)
	}
	return nil
}

func record(dst, key, val []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(key)))
	dst = append(dst, key...)
	return append(dst, val...)
}

// Set makes val the value of key; durable when it returns nil. Keys are 1
// to 65535 bytes; a record (2 bytes, key, value) is at most a quarter of
// Options.StableSize. A crash during Set leaves the old value or val.
func (s *Store) Set(key, val []byte) error {
	st := &s.stable
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return ErrClosed
	}
	if len(key) == 0 || len(key) > 65535 {
		return fmt.Errorf("%w: Set: a key of %d bytes (1 to 65535)", ErrInvalid, len(key))
	}
	if n, limit := 2+len(key)+len(val), s.geo.stableOptions(0).MaxEntry; n > limit {
		return fmt.Errorf("%w: Set(%q): a record of %d bytes; at most %d fit stable logs of %d bytes", ErrInvalid, key, n, limit, s.geo.stableSize)
	}
	st.buf = record(st.buf[:0], key, val)
	_, err := st.logs[s.m.stable].Append(st.buf)
	if errors.Is(err, walog.ErrFull) {
		err = s.compact(key, val)
	}
	if err != nil {
		return fmt.Errorf("raftstore: Set(%q): %w", key, err)
	}
	st.kv[string(key)] = append([]byte(nil), val...)
	return nil
}

// compact writes every key, with key set to val, into the other stable
// log, then switches the meta object to it.
func (s *Store) compact(key, val []byte) error {
	st := &s.stable
	to := 1 - s.m.stable
	l := st.logs[to]
	if s.v == variantFlipFirst {
		if err := s.updateMeta(func(m *meta) { m.stable = to }); err != nil {
			return err
		}
	}
	if err := l.Reset(); err != nil {
		return err
	}
	var recs [][]byte
	size, maxBatch := 0, s.geo.stableOptions(int(to)).MaxBatch
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		_, err := l.AppendBatch(recs)
		recs, size = recs[:0], 0
		return err
	}
	add := func(k, v []byte) error {
		r := record(nil, k, v)
		if size+l.Span(len(r)) > maxBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		recs, size = append(recs, r), size+l.Span(len(r))
		return nil
	}
	for k, v := range st.kv {
		if k != string(key) {
			if err := add([]byte(k), v); err != nil {
				return compactErr(err, len(st.kv), s.geo.stableSize)
			}
		}
	}
	if err := add(key, val); err != nil {
		return compactErr(err, len(st.kv), s.geo.stableSize)
	}
	if err := flush(); err != nil {
		return compactErr(err, len(st.kv), s.geo.stableSize)
	}
	if s.v == variantFlipFirst {
		return nil
	}
	return s.updateMeta(func(m *meta) { m.stable = to })
}

func compactErr(err error, keys, size int) error {
	if errors.Is(err, walog.ErrFull) {
		return fmt.Errorf("%w: %d keys do not fit a stable log of %d bytes", ErrFull, keys, size)
	}
	return err
}

// Get returns a copy of key's value; ErrKeyNotFound (text "not found")
// for a key never set.
func (s *Store) Get(key []byte) ([]byte, error) {
	st := &s.stable
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, ErrClosed
	}
	v, ok := st.kv[string(key)]
	if !ok {
		return nil, ErrKeyNotFound
	}
	return append([]byte(nil), v...), nil
}

// SetUint64 sets key to val, 8 bytes big-endian (as raft-boltdb stores
// it).
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns key's value set by SetUint64; ErrKeyNotFound for a
// key never set, ErrInvalid for a value that is not 8 bytes.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: GetUint64(%q): the value holds %d bytes, not 8", ErrInvalid, key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
