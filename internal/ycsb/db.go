package ycsb

import "errors"

// DB is what the driver needs of an engine: the adapter interface every
// engine of the comparison implements (package kv's in cmd/pmkv, the peers'
// in bench/kvpeers). Insert and update are both Put (one field per key).
// Methods are called from many goroutines at once.
type DB interface {
	// Put stores value under key; durable (in the engine's durability
	// mode, Info().Durability) when it returns nil.
	Put(key, value []byte) error
	// Get returns the value of key, or an error wrapping ErrNotFound.
	// The caller may keep the slice.
	Get(key []byte) ([]byte, error)
	// Delete removes key (absent keys are no error).
	Delete(key []byte) error
	// Scan calls fn for up to n records in key order from the first key
	// at or after from, until fn returns false; an engine without an
	// ordered index returns an error wrapping ErrNoScan. fn must not keep
	// key or value.
	Scan(from []byte, n int, fn func(key, value []byte) bool) error
	// Close releases the engine (and makes what it acknowledged durable
	// on the way, where it needs that).
	Close() error
}

// Info describes an engine for the report: each result line carries it.
type Info struct {
	Engine     string `json:"engine"`     // "kv", "badger", ...
	Durability string `json:"durability"` // what "acknowledged" means: "fence per batch", "SyncWrites", ...
	Device     string `json:"device"`     // where its files are (and what kind of file system)
}

// The errors an adapter wraps.
var (
	ErrNotFound = errors.New("ycsb: key not found")
	ErrNoScan   = errors.New("ycsb: this engine has no ordered scan")
)
