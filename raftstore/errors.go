package raftstore

import (
	"errors"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them, an error
// of walog or cow (the structures it is made of), or is one of
// hashicorp/raft's own: raft.ErrLogNotFound from GetLog, returned as it
// is because raft compares it with ==.
var (
	// ErrKeyNotFound is what StableStore.Get and GetUint64 return for a
	// key never set. Its text is exactly "not found": hashicorp/raft
	// recognises a missing key by that text (as raft-boltdb's error).
	ErrKeyNotFound = errors.New("not found")
	// ErrInvalid is returned for bad options and arguments: indexes that
	// do not grow, a DeleteRange that would leave a hole, a key or value
	// too long, a geometry that contradicts the store's.
	ErrInvalid = persist.NewError("raftstore: invalid argument", persist.ErrInvalid)
	// ErrFull is returned when the log's segments, or the stable store's
	// log, hold no room for more: raft compacts its log after snapshots,
	// so a full store is one too small for the snapshot interval.
	ErrFull = errors.New("raftstore: store is full")
	// ErrClosed is returned by every operation on a closed store. It
	// matches persist.ErrClosed.
	ErrClosed = persist.NewError("raftstore: store is closed", persist.ErrClosed)
	// ErrCorrupt marks persistent bytes that failed a check: a log entry
	// that does not decode, indexes out of order across segments, a
	// stable record that does not parse. It matches persist.ErrCorrupt.
	ErrCorrupt = persist.NewError("raftstore: corrupt store", persist.ErrCorrupt)
	// ErrBadFormat is returned by Open for a region that holds something
	// else or a format version this build does not read. It matches
	// persist.ErrBadFormat.
	ErrBadFormat = persist.NewError("raftstore: not a raft store of this format", persist.ErrBadFormat)
	// ErrTooSmall is returned when the region cannot hold the store.
	ErrTooSmall = persist.NewError("raftstore: region too small", persist.ErrTooSmall)
)
