package pagelog

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them, or one of
// persist's (persist.ErrClosed for a closed region, and whatever a persist
// call returned), so callers test with errors.Is. Errors about persistent
// bytes that fail a check also wrap persist.ErrCorrupt, the corruption
// marker of all braid packages; errors about a read-only region wrap
// persist.ErrReadOnly.
var (
	// ErrCorrupt marks a store whose persistent bytes fail a check: a
	// garbled superblock, a slot header that fails its check code or names
	// a page that does not exist, a page without a slot, two slots of a
	// page whose versions are not consecutive, a micro log that walog
	// finds damaged or whose entry names a page, slot or line that does
	// not exist, a page whose payload fails its CRC32C (payload CRCs,
	// Checksum layout). It wraps persist.ErrCorrupt (and, for a micro log,
	// walog's error).
	ErrCorrupt = fmt.Errorf("pagelog: corrupt store: %w", persist.ErrCorrupt)
	// ErrBadFormat is returned by Open for a region that holds no pagelog
	// store (wrong magic) or one of an unknown format version.
	ErrBadFormat = errors.New("pagelog: not a pagelog store")
	// ErrPageSize is returned for a page buffer whose length is not the
	// store's page size, and by Open when Options ask for another page
	// size than the store has.
	ErrPageSize = errors.New("pagelog: wrong page size")
	// ErrPageID is returned for a page id outside [0, Pages()).
	ErrPageID = errors.New("pagelog: page id out of range")
	// ErrTooSmall is returned when the region cannot hold the store's
	// superblock, headers, logs and slots.
	ErrTooSmall = errors.New("pagelog: region too small")
	// ErrInvalid is returned for bad options and arguments (a dirty-line
	// mask of the wrong length, a geometry that does not add up).
	ErrInvalid = errors.New("pagelog: invalid argument")
	// ErrClosed is returned by every operation after Close.
	ErrClosed = errors.New("pagelog: store is closed")
	// ErrReadOnly is returned for a write to a store whose region is mapped
	// read-only, by Create on such a region, and by Open when recovery has
	// to write (micro-log lines to replay, a torn page to repair, a
	// version to settle). It wraps persist.ErrReadOnly.
	ErrReadOnly = fmt.Errorf("pagelog: store is read-only: %w", persist.ErrReadOnly)
	// ErrVersionExhausted is returned by a write to a TwoWord store when
	// the page has had 2^48-2 versions (Packed versions wrap and never run
	// out).
	ErrVersionExhausted = errors.New("pagelog: page version numbers exhausted")
)

// corrupt builds an error wrapping ErrCorrupt (and so persist.ErrCorrupt).
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
