package fam

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them (or an
// error of package persist), so callers test with errors.Is.
var (
	// ErrSize is returned for an object size that is not a multiple of 4
	// between 4 and MaxSize, and for a value or buffer whose length is not
	// the object size.
	ErrSize = errors.New("fam: bad object size")
	// ErrIndex is returned for an object index outside [0, Len()).
	ErrIndex = errors.New("fam: object index out of range")
	// ErrTooSmall is returned when the region cannot hold the array.
	ErrTooSmall = errors.New("fam: region too small")
	// ErrInvalid is returned for a bad offset, count or option.
	ErrInvalid = errors.New("fam: invalid argument")
	// ErrNoArray is returned by Open and OpenLog when the header at the
	// offset is empty: nothing was created there, or a Create did not
	// finish.
	ErrNoArray = errors.New("fam: no array at this offset")
	// ErrBadFormat is returned by Open and OpenLog for a header that is
	// not one of this kind: another kind of array (a LogArray for Open, an
	// Array for OpenLog, a cow.Array), a walog log, a pagelog store or
	// other bytes that are no array header at all, and a header of a
	// format version or with flags this build does not read. It does not
	// wrap persist.ErrCorrupt: the offset or the kind is wrong, the media
	// need not be. A header with this kind's magic whose checksum fails is
	// ErrCorrupt. (All zeros is ErrNoArray.)
	ErrBadFormat = errors.New("fam: not an array of this kind")
	// ErrClosed is returned by Close of a closed Array or LogArray and by
	// every operation on one.
	ErrClosed = errors.New("fam: array is closed")
	// ErrCorrupt marks persistent bytes that failed a check: a bad header
	// (checksum, a damaged magic, impossible field), FAM blocks of one object at
	// versions no crash can produce, or a complete redo record naming an
	// object that does not exist. It wraps persist.ErrCorrupt, so
	// errors.Is(err, persist.ErrCorrupt) holds for all of them.
	ErrCorrupt = fmt.Errorf("fam: %w", persist.ErrCorrupt)
)

func errIndex(i, n int) error {
	return fmt.Errorf("%w: index %d, the array holds %d objects", ErrIndex, i, n)
}

func errLen(what string, got, want int) error {
	return fmt.Errorf("%w: %s is %d bytes, the object size is %d", ErrSize, what, got, want)
}

func errClosed() error {
	return fmt.Errorf("fam: %w", persist.ErrClosed)
}

func errReadOnly() error {
	return fmt.Errorf("fam: %w", persist.ErrReadOnly)
}
