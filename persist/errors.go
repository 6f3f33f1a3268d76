package persist

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers test with errors.Is.
var (
	// ErrCorrupt marks persistent bytes that failed a check (checksum,
	// magic, version, popcount). It is the one corruption marker of braid:
	// every package wraps it, so errors.Is(err, persist.ErrCorrupt) tells
	// corruption apart from every other failure.
	ErrCorrupt = errors.New("persist: corrupt persistent data")
	// ErrClosed is returned by every operation on a closed region.
	ErrClosed = errors.New("persist: region is closed")
	// ErrRange is returned when a range or offset lies outside the region.
	ErrRange = errors.New("persist: range outside the region")
	// ErrReadOnly is returned for a write to a region mapped read-only.
	ErrReadOnly = errors.New("persist: region is read-only")
	// ErrInvalid is returned for bad options, flags or arguments.
	ErrInvalid = errors.New("persist: invalid argument")
	// ErrTooSmall is returned when a file is smaller than the size asked.
	ErrTooSmall = errors.New("persist: file is smaller than the size asked")
	// ErrUnsupported is returned for an operation this platform or region
	// kind cannot do.
	ErrUnsupported = errors.New("persist: not supported")
	// ErrBusy is returned by Region.Claim for an area that overlaps one
	// claimed and not released: another open structure uses those bytes.
	ErrBusy = errors.New("persist: area in use by another open structure")
)
