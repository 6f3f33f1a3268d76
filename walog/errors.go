package walog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them (or is an
// error of package persist, returned as it is), so callers test with
// errors.Is. The sentinels of braid's common vocabulary match persist's
// too: errors.Is(err, persist.ErrCorrupt) holds for ErrCorrupt, and so on
// for ErrBadFormat, ErrNoLog (persist.ErrEmpty), ErrInvalid, ErrEmpty,
// ErrTooLarge (persist.ErrInvalid), ErrTooSmall and ErrReadOnly.
var (
	// ErrEmpty is returned by Append and AppendBatch for an entry of zero
	// bytes: entries are 1 byte to Options.MaxEntry long.
	ErrEmpty = persist.NewError("walog: empty entry", persist.ErrInvalid)
	// ErrTooLarge is returned for an entry longer than the log's MaxEntry,
	// and for a batch that would not fit even in the empty log.
	ErrTooLarge = persist.NewError("walog: entry too large", persist.ErrInvalid)
	// ErrFull is returned by Append and AppendBatch when the entry does not
	// fit in the space left and the log does not wrap (Options.Wrap).
	ErrFull = errors.New("walog: log is full")
	// ErrClosed is returned by every operation on a closed log or set. It
	// matches persist.ErrClosed.
	ErrClosed = persist.NewError("walog: log is closed", persist.ErrClosed)
	// ErrInvalid is returned for bad options, offsets and arguments.
	ErrInvalid = persist.NewError("walog: invalid argument", persist.ErrInvalid)
	// ErrTooSmall is returned when the region is shorter than the log its
	// header describes (a truncated file, a smaller mapping).
	ErrTooSmall = persist.NewError("walog: region too small", persist.ErrTooSmall)
	// ErrReadOnly is returned by Create on a read-only region, by every
	// write of a log opened on one, and by Open when recovery must write.
	ErrReadOnly = persist.NewError("walog: the log's region is read-only", persist.ErrReadOnly)
	// ErrNoLog is returned by Open when the area holds nothing: no header
	// and no data, or a Create that did not finish. It is never returned
	// for an area whose header is damaged over a live log (that is
	// ErrCorrupt). It matches persist.ErrEmpty.
	ErrNoLog = persist.NewError("walog: no log here", persist.ErrEmpty)
	// ErrBadFormat is returned by Open for a header that is not a walog
	// header (another kind of structure, or no braid structure), a format
	// version this build does not read, and a log whose format or geometry
	// differs from what the options ask.
	ErrBadFormat = persist.NewError("walog: not a log of this format", persist.ErrBadFormat)
	// ErrChanged is returned by an iterator whose log was reset or
	// truncated while it iterated.
	ErrChanged = errors.New("walog: log was reset or truncated during iteration")
	// ErrCorrupt marks persistent bytes that failed a check: a header
	// whose checksum or fields are impossible, or an entry that fails its
	// popcount, validity bits or commit marker. errors.Is(err,
	// persist.ErrCorrupt) holds for it.
	ErrCorrupt = persist.NewError("walog: corrupt log", persist.ErrCorrupt)

	// errRegionClosed is what the operations of a log whose region was
	// closed return.
	errRegionClosed = persist.NewError("walog: the log's region is closed", persist.ErrClosed)
)

// regionErr translates an error of the region's Readable or Writable
// (persist.ErrClosed, persist.ErrReadOnly) into this package's words,
// saying what needed the region (persist.RegionError).
func regionErr(err error, what string) error {
	return persist.RegionError(err, errRegionClosed, ErrReadOnly, what)
}

// memberErr says which member of a set an error is about, in front of
// its text but after the package name: "walog: set member 2: corrupt
// log: ...". errors.Is and errors.As see err.
func memberErr(i int, err error) error {
	if err == nil {
		return nil
	}
	return &prefixed{prefix: fmt.Sprintf("walog: set member %d: ", i), err: err}
}

type prefixed struct {
	prefix string
	err    error
}

func (e *prefixed) Error() string {
	msg := e.err.Error()
	for _, pkg := range []string{"walog: ", "persist: "} {
		msg = strings.TrimPrefix(msg, pkg)
	}
	return e.prefix + msg
}
func (e *prefixed) Unwrap() error { return e.err }
