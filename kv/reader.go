package kv

import (
	"bytes"
	"fmt"
)

// A Reader answers point reads of a store without loading its index: the
// one-shot lookup (pmkv get). It opens the store read-only (as
// Options.ReadOnly: it writes nothing), replays only what the metadata
// logs hold after the newest usable checkpoint (the tail) into the index,
// and leaves the checkpoint in its file, checked whole (its checksum, its
// directory, every entry in its bucket) but not loaded: a lookup probes
// the one bucket of the checkpoint's directory that its key hashes to,
// and the newer of that version and the tail's is the key's, exactly the
// version a full open's index holds. An open costs reading the checkpoint
// file and replaying the tail, not building an index of every key;
// checkpoints taken during long loads (Options.CheckpointEvery) keep the
// tail short.
type Reader struct {
	s *Store
}

// OpenReader opens the store on opts.Devices for point reads (opts as for
// Open; ReadOnly is implied). It returns what Open returns for the store:
// ErrBusy while a writer holds it, ErrCorrupt for damage recovery
// reports, and so on.
func OpenReader(opts *Options) (*Reader, error) {
	if opts == nil {
		return nil, fmt.Errorf("%w: nil Options (Devices and CheckpointDir are required)", ErrInvalid)
	}
	o := *opts
	o.ReadOnly = true
	s, err := openStore(&o, true)
	if err != nil {
		return nil, err
	}
	return &Reader{s: s}, nil
}

// Get is Store.Get: a copy of key's value, or ErrNotFound.
func (r *Reader) Get(key []byte) ([]byte, error) { return r.s.Get(key) }

// GetAt is Store.GetAt: key's value and its deadline (0: none).
func (r *Reader) GetAt(key []byte) ([]byte, int64, error) { return r.s.GetAt(key) }

// Recovery reports what the open found; its Keys counts the keys of the
// tail only (CheckpointKeys, the checkpoint's entries).
func (r *Reader) Recovery() RecoveryReport { return r.s.Recovery() }

// Close unmaps the store. Further calls return ErrClosed.
func (r *Reader) Close() error { return r.s.Close() }

// lookup returns key's latest version (h is key's hash): the index's,
// and under a lazy open the checkpoint's when that is the newer — the
// tie going to the checkpoint's, as a full open's build keeps the first
// of two copies of a version and files the checkpoint's first.
func (s *Store) lookup(h uint64, key []byte) (loc, bool) {
	l, ok := s.idx.lookupHash(h, key)
	if s.base == nil {
		return l, ok
	}
	if b, bok := s.base.find(s, key); bok && (!ok || !l.newer(b)) {
		return b, true
	}
	return l, ok
}

// find returns key's version in the checkpoint: the newest of the live
// entries (ckLive) of key's bucket, the first of equals (as the build
// keeps it).
func (v *ckView) find(s *Store, key []byte) (loc, bool) {
	var best loc
	found := false
	bk := ckBucket(key, v.bits)
	for p := v.span(bk, bk+1); len(p) > 0; {
		k, l, rest, _ := nextCkEntry(p) // (checked whole by decodeCheckpoint)
		p = rest
		if bytes.Equal(k, key) && s.ckLive(l) && (!found || l.newer(best)) {
			best, found = l, true
		}
	}
	return best, found
}
