package server

import (
	"errors"

	"github.com/braid-pm/braid/kv"
)

// Backend is what the server executes commands against: a key-value
// store whose values may carry a deadline. The server serializes
// conflicting commands itself (lock.go), so a Backend needs only
// durable single reads and atomic-on-success batches; a replicated
// backend (a raft FSM in front of kv) fits here.
type Backend interface {
	// Get returns key's live value and deadline, or kv.ErrNotFound.
	Get(key []byte) (Entry, error)
	// Apply makes every op durable before it returns nil.
	Apply(ops []Op) error
	// Scan calls fn for the live keys from from (inclusive) in key
	// order until fn returns false. key is valid only during the call.
	Scan(from []byte, fn func(key []byte) bool) error
	// Stats is the store's counters for INFO and /metrics.
	Stats() Stats
}

// Deferred is a Backend whose reads may leave their check to a write
// that commits after them (a raft leader: the commit, in the same term,
// proves the leadership the reads relied on). A run of commands that
// writes reads with GetDeferred; when it ends up writing nothing,
// commit calls Confirm, whose error replaces its replies.
type Deferred interface {
	GetDeferred(key []byte) (Entry, error)
	Confirm() error
}

// Stats are a Backend's counters: kv's, and expiry's.
type Stats struct {
	kv.Stats
	Expires int64  // live keys with a deadline
	Expired uint64 // keys dropped at their deadline
	// Recovery is what the store's open found and did (nil: unknown).
	Recovery *kv.RecoveryReport
}

// Entry is a stored value and its deadline (Unix milliseconds, 0: none).
type Entry struct {
	Value    []byte
	Deadline int64
}

// Op is one write of an Apply: a put of Value with Deadline, or a delete.
type Op struct {
	Key, Value []byte
	Deadline   int64
	Del        bool
}

// ErrNoExpiry is a deadline given to a backend that cannot keep one.
var ErrNoExpiry = errors.New("server: this store keeps no deadlines")

// KVStore is what the kv backend uses of a *kv.Store.
type KVStore interface {
	GetAt(key []byte) ([]byte, int64, error)
	Apply(b *kv.Batch) error
	Scan(from, to []byte, fn func(key, value []byte) bool) error
	Stats() kv.Stats
}

// KV is the Backend over a kv store.
type KV struct{ S KVStore }

// Get implements Backend.
func (k KV) Get(key []byte) (Entry, error) {
	v, dl, err := k.S.GetAt(key)
	return Entry{Value: v, Deadline: dl}, err
}

// Apply implements Backend.
func (k KV) Apply(ops []Op) error {
	var b kv.Batch
	for _, o := range ops {
		switch {
		case o.Del:
			b.Delete(o.Key)
		case o.Deadline != 0:
			b.PutAt(o.Key, o.Value, o.Deadline)
		default:
			b.Put(o.Key, o.Value)
		}
	}
	return k.S.Apply(&b)
}

// Scan implements Backend.
func (k KV) Scan(from []byte, fn func(key []byte) bool) error {
	return k.S.Scan(from, nil, func(key, _ []byte) bool { return fn(key) })
}

// Stats implements Backend.
func (k KV) Stats() Stats {
	st := Stats{Stats: k.S.Stats()}
	st.Expires, st.Expired = st.Stats.Expires, st.Stats.ExpiredKeys
	if r, ok := k.S.(interface{ Recovery() kv.RecoveryReport }); ok {
		rep := r.Recovery()
		st.Recovery = &rep
	}
	return st
}
