package cow

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them or is an
// error of package persist returned as it is (persist.ErrClosed for a
// closed region, persist.ErrBusy for a claimed area), so callers test with
// errors.Is. Those made with persist.NewError also match persist's
// sentinel of the same name (ErrSize and ErrIndex match persist.ErrInvalid).
var (
	// ErrSize is returned for an object size outside 1..MaxSize, and for a
	// value or buffer whose length is not the object size.
	ErrSize = persist.NewError("cow: bad object size", persist.ErrInvalid)
	// ErrIndex is returned for an object index outside [0, Len()).
	ErrIndex = persist.NewError("cow: object index out of range", persist.ErrInvalid)
	// ErrTooSmall is returned when the region cannot hold the array.
	ErrTooSmall = persist.NewError("cow: region too small", persist.ErrTooSmall)
	// ErrInvalid is returned for a bad offset or count.
	ErrInvalid = persist.NewError("cow: invalid argument", persist.ErrInvalid)
	// ErrReadOnly is returned by Create and Update in a region mapped
	// read-only.
	ErrReadOnly = persist.NewError("cow: region is read-only", persist.ErrReadOnly)
	// ErrNoArray is returned by Open when the header at the offset is
	// empty: nothing was created there, or a Create did not finish. It
	// matches persist.ErrEmpty.
	ErrNoArray = persist.NewError("cow: no array at this offset", persist.ErrEmpty)
	// ErrBadFormat is returned by Open for a header that is not a CoW
	// array's: another kind of array (fam.Array, fam.LogArray), a walog
	// log, a pagelog store or other bytes that are no array header at
	// all, and a header of a format version or with flags this build does
	// not read. It matches persist.ErrBadFormat, not persist.ErrCorrupt:
	// the offset or the kind is wrong, the media need not be. A header
	// with the CoW magic whose checksum fails is ErrCorrupt. (All zeros is
	// ErrNoArray.)
	ErrBadFormat = persist.NewError("cow: not a CoW array", persist.ErrBadFormat)
	// ErrClosed is returned by Close of a closed Array and by every
	// operation on one. It matches persist.ErrClosed.
	ErrClosed = persist.NewError("cow: array is closed", persist.ErrClosed)
	// ErrCorrupt marks a header that failed a check (checksum, a damaged
	// magic, impossible field), and with Options.Checksum a copy that
	// fails its check. It matches persist.ErrCorrupt.
	ErrCorrupt = persist.NewError("cow: corrupt array", persist.ErrCorrupt)
)

func errIndex(i, n int) error {
	return fmt.Errorf("%w: index %d, the array holds %d objects", ErrIndex, i, n)
}

func errLen(what string, got, want int) error {
	return fmt.Errorf("%w: %s is %d bytes, the object size is %d", ErrSize, what, got, want)
}
