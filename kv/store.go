package kv

import (
	"errors"
	"sync"
)

// Token is the location of a value as a put left it: which worker's data
// log, where, and the put's serial number. GetWithToken takes it back to
// skip the index lookup (the paper's fast path); the store validates it
// (the record there must hold the key, its checksum must hold, and it must
// still be the key's latest version), so a stale or forged token costs a
// slow-path Get, never a wrong value. Tokens are small and comparable; the
// zero Token is no location.
type Token struct {
	dev    uint16
	klen   uint16
	seg    uint32
	off    uint32
	vlen   uint32
	crc    uint32
	epoch  uint64
	serial uint64
}

// Store is an open key-value store. Its methods are safe for concurrent
// use by many goroutines.
type Store struct {
	mu sync.Mutex
}

var errNotImplemented = errors.New("kv: not implemented yet")

// Open opens the store on opts.Devices, creating it when every device
// directory is empty of segment files, recovering it otherwise (see the
// package comment). Another process holding the store is ErrBusy.
func Open(opts *Options) (*Store, error) {
	if _, err := opts.resolve(); err != nil {
		return nil, err
	}
	return nil, errNotImplemented
}

// Put stores key = value; durable when it returns nil.
func (s *Store) Put(key, value []byte) error { return errNotImplemented }

// Get returns a copy of key's value, or ErrNotFound.
func (s *Store) Get(key []byte) ([]byte, error) { return nil, errNotImplemented }

// Delete removes key (a durable tombstone when it returns nil). Deleting
// an absent key is not an error.
func (s *Store) Delete(key []byte) error { return errNotImplemented }

// Apply makes every operation of b durable before it returns.
func (s *Store) Apply(b *Batch) error { return errNotImplemented }

// PutAsync queues a put and returns; done is called once, from a worker,
// when the put is durable (with its token) or failed. done must be quick
// and must not call the store. key and value are copied.
func (s *Store) PutAsync(key, value []byte, done func(Token, error)) error {
	return errNotImplemented
}

// PutToken is Put that also returns the value's location token.
func (s *Store) PutToken(key, value []byte) (Token, error) { return Token{}, errNotImplemented }

// GetWithToken is Get through the fast path: t (from PutToken or
// PutAsync) names the worker and place to read, validated as Token says.
func (s *Store) GetWithToken(key []byte, t Token) ([]byte, error) { return nil, errNotImplemented }

// Scan calls fn for every key in [from, to) in key order (to nil: no
// upper bound) with its value, until fn returns false. It needs
// Options.OrderedIndex (else ErrNoOrder). The slices passed to fn are
// valid only during the call.
func (s *Store) Scan(from, to []byte, fn func(key, value []byte) bool) error {
	return errNotImplemented
}

// Checkpoint writes the index and the log positions to CheckpointDir
// (temp file, fsync, rename); recovery then replays only what follows.
func (s *Store) Checkpoint() error { return errNotImplemented }

// GC runs one cleaning pass now: it picks sealed data segments by
// cost-benefit score, moves their live entries, and frees them once no
// reader can use them.
func (s *Store) GC() (GCReport, error) { return GCReport{}, errNotImplemented }

// Stats returns the store's counters.
func (s *Store) Stats() Stats { return Stats{} }

// Recovery returns what Open found and did.
func (s *Store) Recovery() RecoveryReport { return RecoveryReport{} }

// Check verifies every checksum of the logs and that the index agrees
// with them; the first bad entry is named in an ErrCorrupt error.
func (s *Store) Check() error { return errNotImplemented }

// Close writes a checkpoint, stops the workers and unmaps the devices.
// Further calls return ErrClosed.
func (s *Store) Close() error { return errNotImplemented }
