package cow

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them (or an
// error of package persist), so callers test with errors.Is.
var (
	// ErrSize is returned for an object size outside 1..MaxSize, and for a
	// value or buffer whose length is not the object size.
	ErrSize = errors.New("cow: bad object size")
	// ErrIndex is returned for an object index outside [0, Len()).
	ErrIndex = errors.New("cow: object index out of range")
	// ErrTooSmall is returned when the region cannot hold the array.
	ErrTooSmall = errors.New("cow: region too small")
	// ErrInvalid is returned for a bad offset or count.
	ErrInvalid = errors.New("cow: invalid argument")
	// ErrNoArray is returned by Open when the header at the offset is
	// empty: nothing was created there, or a Create did not finish.
	ErrNoArray = errors.New("cow: no array at this offset")
	// ErrBadFormat is returned by Open for a header that is not a CoW
	// array's: another kind of array (fam.Array, fam.LogArray), a walog
	// log, a pagelog store or other bytes that are no array header at
	// all, and a header of a format version or with flags this build does
	// not read. It does not wrap persist.ErrCorrupt: the offset or the
	// kind is wrong, the media need not be. A header with the CoW magic
	// whose checksum fails is ErrCorrupt. (All zeros is ErrNoArray.)
	ErrBadFormat = errors.New("cow: not a CoW array")
	// ErrClosed is returned by Close of a closed Array and by every
	// operation on one.
	ErrClosed = errors.New("cow: array is closed")
	// ErrCorrupt marks a header that failed a check (checksum, a damaged
	// magic, impossible field), and with Options.Checksum a copy that
	// fails its check. It wraps persist.ErrCorrupt.
	ErrCorrupt = fmt.Errorf("cow: %w", persist.ErrCorrupt)
)

func errIndex(i, n int) error {
	return fmt.Errorf("%w: index %d, the array holds %d objects", ErrIndex, i, n)
}

func errLen(what string, got, want int) error {
	return fmt.Errorf("%w: %s is %d bytes, the object size is %d", ErrSize, what, got, want)
}

func errClosed() error {
	return fmt.Errorf("cow: %w", persist.ErrClosed)
}

func errReadOnly() error {
	return fmt.Errorf("cow: %w", persist.ErrReadOnly)
}
