package raftpeers

import (
	"io"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/raftstore"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
)

// Store is a log store and a stable store, with what closes them.
type Store interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// Peer opens a store of its kind in dir (created empty by the caller).
type Peer struct {
	Name string
	Open func(dir string) (Store, error)
	// NoReopen says why the store cannot be opened again in the process
	// that closed it ("" when it can).
	NoReopen string
}

// BraidOptions is the geometry of braid's stores here: 16 segments of 64
// MiB (1 GiB), room for what the benchmarks write between compactions.
var BraidOptions = raftstore.Options{Segments: 16, SegmentSize: 64 << 20, StableSize: 1 << 20}

// Peers are the stores compared: braid (raftstore on a file mapped with
// the PMem path forced, one persist barrier per StoreLogs), raft-boltdb
// v2 (bbolt, fsync per transaction) and raft-wal (fsync per append).
var Peers = []Peer{
	{"braid", func(dir string) (Store, error) {
		o := BraidOptions
		o.Region = &persist.Options{ForcePMem: true}
		return raftstore.Open(filepath.Join(dir, "raft.pm"), &o)
	}, ""},
	{"raft-boltdb", func(dir string) (Store, error) {
		return raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	}, ""},
	{"raft-wal", func(dir string) (Store, error) {
		if err := os.MkdirAll(filepath.Join(dir, "wal"), 0o755); err != nil {
			return nil, err
		}
		return wal.Open(filepath.Join(dir, "wal"))
	}, "raft-wal v0.4.0's Close leaves its bbolt meta database open (and flock'ed): Open in the same process waits for the lock forever"},
}
