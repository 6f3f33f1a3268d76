package pagelog

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Sentinel errors. Every error of this package wraps one of them, or is an
// error of package persist returned as it is (persist.ErrBusy, and
// whatever a persist call returned), so callers test with errors.Is. The
// sentinels of braid's common vocabulary match persist's: errors.Is(err,
// persist.ErrCorrupt) holds for ErrCorrupt, and so on for ErrBadFormat,
// ErrTooSmall, ErrReadOnly and ErrInvalid (ErrPageSize and ErrPageID
// too).
var (
	// ErrCorrupt marks a store whose persistent bytes fail a check: a
	// garbled superblock, a slot header that fails its check code or names
	// a page that does not exist, a page without a slot, two slots of a
	// page whose versions are not consecutive, a micro log that walog
	// finds damaged or whose entry names a page, slot or line that does
	// not exist, a page whose payload fails its CRC32C (payload CRCs,
	// Checksum layout). errors.Is(err, persist.ErrCorrupt) holds for it
	// (and, for a micro log, errors.Is(err, walog.ErrCorrupt)).
	ErrCorrupt = persist.NewError("pagelog: corrupt store", persist.ErrCorrupt)
	// ErrBadFormat is returned by Open for a region that holds no pagelog
	// store (another kind of structure, no braid structure) or one of a
	// format version this build does not read. It matches
	// persist.ErrBadFormat.
	ErrBadFormat = persist.NewError("pagelog: not a pagelog store", persist.ErrBadFormat)
	// ErrNoStore is returned by Open for an area that holds nothing: no
	// superblock and no data, or a Create that did not finish. It is
	// never returned for an area whose superblock was damaged over a store
	// (that is ErrCorrupt). It matches persist.ErrEmpty.
	ErrNoStore = persist.NewError("pagelog: no store here", persist.ErrEmpty)
	// ErrPageSize is returned for a page buffer whose length is not the
	// store's page size, and by Open when Options ask for another page
	// size than the store has. It matches persist.ErrInvalid.
	ErrPageSize = persist.NewError("pagelog: wrong page size", persist.ErrInvalid)
	// ErrPageID is returned for a page id outside [0, Pages()). It matches
	// persist.ErrInvalid.
	ErrPageID = persist.NewError("pagelog: page id out of range", persist.ErrInvalid)
	// ErrTooSmall is returned when the region cannot hold the store's
	// superblock, headers, logs and slots. It matches persist.ErrTooSmall.
	ErrTooSmall = persist.NewError("pagelog: region too small", persist.ErrTooSmall)
	// ErrInvalid is returned for bad options and arguments (a dirty-line
	// mask of the wrong length, a geometry that does not add up). It
	// matches persist.ErrInvalid.
	ErrInvalid = persist.NewError("pagelog: invalid argument", persist.ErrInvalid)
	// ErrClosed is returned by every operation after Close. It matches
	// persist.ErrClosed.
	ErrClosed = persist.NewError("pagelog: store is closed", persist.ErrClosed)
	// ErrReadOnly is returned for a write to a store whose region is mapped
	// read-only, by Create on such a region, and by Open when recovery has
	// to write (micro-log lines to replay, a torn page to repair, a
	// version to settle). It matches persist.ErrReadOnly.
	ErrReadOnly = persist.NewError("pagelog: store is read-only", persist.ErrReadOnly)
	// ErrVersionExhausted is returned by a write to a TwoWord store when
	// the page has had 2^47-2 versions (Packed versions wrap and never run
	// out).
	ErrVersionExhausted = errors.New("pagelog: page version numbers exhausted")

	// errRegionClosed is what the operations of a store whose region was
	// closed return.
	errRegionClosed = persist.NewError("pagelog: the store's region is closed", persist.ErrClosed)
)

// corrupt builds an error wrapping ErrCorrupt (and so persist.ErrCorrupt).
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// regionErr translates an error of the region's Readable or Writable
// (persist.ErrClosed, persist.ErrReadOnly) into this package's words,
// saying what needed the region (persist.RegionError).
func regionErr(err error, what string) error {
	return persist.RegionError(err, errRegionClosed, ErrReadOnly, what)
}
