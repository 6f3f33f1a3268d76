package walog

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them (or an
// error of package persist), so callers test with errors.Is.
var (
	// ErrEmpty is returned by Append and AppendBatch for an entry of zero
	// bytes: entries are 1 byte to Options.MaxEntry long.
	ErrEmpty = errors.New("walog: empty entry")
	// ErrTooLarge is returned for an entry longer than the log's MaxEntry,
	// and for a batch that would not fit even in the empty log.
	ErrTooLarge = errors.New("walog: entry too large")
	// ErrFull is returned by Append and AppendBatch when the entry does not
	// fit in the space left and the log does not wrap (Options.Wrap).
	ErrFull = errors.New("walog: log is full")
	// ErrClosed is returned by every operation on a closed log or set.
	ErrClosed = errors.New("walog: log is closed")
	// ErrInvalid is returned for bad options, offsets and arguments.
	ErrInvalid = errors.New("walog: invalid argument")
	// ErrNoLog is returned by Open when the header at the offset is empty:
	// nothing was created there, or Create did not finish.
	ErrNoLog = errors.New("walog: no log at this offset")
	// ErrBadFormat is returned by Open for a header that is not a walog
	// header (foreign magic), a version this build does not read, and a
	// log whose format or geometry differs from what the options ask.
	ErrBadFormat = errors.New("walog: not a log of this format")
	// ErrChanged is returned by an iterator whose log was reset or
	// truncated while it iterated.
	ErrChanged = errors.New("walog: log was reset or truncated during iteration")
	// ErrCorrupt marks persistent bytes that failed a check: a header
	// whose checksum or fields are impossible, or an entry that fails its
	// popcount, validity bits or commit marker. It wraps
	// persist.ErrCorrupt, so errors.Is(err, persist.ErrCorrupt) holds.
	ErrCorrupt = fmt.Errorf("walog: %w", persist.ErrCorrupt)
)
