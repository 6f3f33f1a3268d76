package fam

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
	// ErrSize is returned for an object size that is not a multiple of 4
	// between 4 and MaxSize, and for a value or buffer whose length is not
	// the object size.
	ErrSize = persist.NewError("fam: bad object size", persist.ErrInvalid)
	// ErrIndex is returned for an object index outside [0, Len()).
	ErrIndex = persist.NewError("fam: object index out of range", persist.ErrInvalid)
	// ErrTooSmall is returned when the region cannot hold the array.
	ErrTooSmall = persist.NewError("fam: region too small", persist.ErrTooSmall)
	// ErrInvalid is returned for a bad offset, count or option.
	ErrInvalid = persist.NewError("fam: invalid argument", persist.ErrInvalid)
	// ErrReadOnly is returned by Create, CreateLog and Update in a region
	// mapped read-only, and by Open and OpenLog there for an array that
	// needs a rollback or a replay.
	ErrReadOnly = persist.NewError("fam: region is read-only", persist.ErrReadOnly)
	// ErrNoArray is returned by Open and OpenLog when the header at the
	// offset is empty: nothing was created there, or a Create did not
	// finish. It matches persist.ErrEmpty.
	ErrNoArray = persist.NewError("fam: no array at this offset", persist.ErrEmpty)
	// ErrBadFormat is returned by Open and OpenLog for a header that is
	// not one of this kind: another kind of array (a LogArray for Open, an
	// Array for OpenLog, a cow.Array), a walog log, a pagelog store or
	// other bytes that are no array header at all, and a header of a
	// format version or with flags this build does not read. It matches
	// persist.ErrBadFormat, not persist.ErrCorrupt: the offset or the kind
	// is wrong, the media need not be. A header with this kind's magic
	// whose checksum fails is ErrCorrupt. (All zeros is ErrNoArray.)
	ErrBadFormat = persist.NewError("fam: not an array of this kind", persist.ErrBadFormat)
	// ErrClosed is returned by Close of a closed Array or LogArray and by
	// every operation on one. It matches persist.ErrClosed.
	ErrClosed = persist.NewError("fam: array is closed", persist.ErrClosed)
	// ErrCorrupt marks persistent bytes that failed a check: a bad header
	// (checksum, a damaged magic, impossible field), FAM blocks of one
	// object at versions no crash can produce, or a complete redo record
	// naming an object that does not exist. It matches persist.ErrCorrupt.
	ErrCorrupt = persist.NewError("fam: corrupt array", persist.ErrCorrupt)
)

func errIndex(i, n int) error {
	return fmt.Errorf("%w: index %d, the array holds %d objects", ErrIndex, i, n)
}

func errLen(what string, got, want int) error {
	return fmt.Errorf("%w: %s is %d bytes, the object size is %d", ErrSize, what, got, want)
}
