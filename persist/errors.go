package persist

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/internal/perr"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers test with errors.Is.
//
// The same vocabulary serves every braid package (see "Errors" in the
// package documentation): a package's own sentinels for corruption, a
// region too small, a read-only region and bad arguments are made with
// NewError over the matching sentinel here, so errors.Is(err,
// persist.ErrCorrupt) (or ErrTooSmall, ErrReadOnly, ErrInvalid) holds for
// an error of any package, and the text names one package only.
var (
	// ErrCorrupt marks persistent bytes that failed a check (checksum,
	// magic, version, popcount). It is the one corruption marker of braid:
	// every package's corruption errors match it, so errors.Is(err,
	// persist.ErrCorrupt) tells corruption apart from every other failure.
	// Mark an error with Corruptf or MarkCorrupt; define a package's
	// corruption sentinel with NewError("pkg: ...", ErrCorrupt).
	ErrCorrupt = errors.New("persist: corrupt persistent data")
	// ErrClosed is returned by every operation on a closed region, and
	// every structure's closed-handle error matches it.
	ErrClosed = errors.New("persist: region is closed")
	// ErrEmpty marks an area that holds no structure: zeros where the
	// header would be, or what a crash inside a Create leaves. Every
	// structure's "nothing here" error (walog.ErrNoLog, pagelog.ErrNoStore,
	// cow.ErrNoArray, fam.ErrNoArray, fptree.ErrNoTree) matches it. It is
	// neither corruption nor another kind (ErrBadFormat).
	ErrEmpty = errors.New("persist: no structure here")
	// ErrRange is returned when a range or offset lies outside the region.
	ErrRange = errors.New("persist: range outside the region")
	// ErrReadOnly is returned for a write to a region mapped read-only.
	ErrReadOnly = errors.New("persist: region is read-only")
	// ErrInvalid is returned for bad options, flags or arguments.
	ErrInvalid = perr.ErrInvalid
	// ErrTooSmall is returned when a file is smaller than the size asked.
	ErrTooSmall = errors.New("persist: file is smaller than the size asked")
	// ErrUnsupported is returned for an operation this platform or region
	// kind cannot do.
	ErrUnsupported = errors.New("persist: not supported")
	// ErrBusy is returned by Region.Claim for an area that overlaps one
	// claimed and not released: another open structure uses those bytes.
	ErrBusy = errors.New("persist: area in use by another open structure")
	// ErrBadFormat marks bytes that are not the structure asked for: a
	// foreign magic (another kind of braid structure, or no structure at
	// all), a format version this build does not read. It is not
	// corruption: nothing says the bytes were damaged, only that they are
	// something else. Packages define theirs with NewError("pkg: ...",
	// ErrBadFormat).
	ErrBadFormat = errors.New("persist: not a structure of this kind")
	// ErrMedia marks a load or store of mapped memory that faulted: the bytes
	// behind the mapping are gone or unreadable — the file was truncated under
	// it by another program, the media is poisoned (an uncorrectable error on
	// PMem), or a sparse file's page could not be allocated. It matches
	// ErrCorrupt: what was there cannot be read back. Guard returns it, as a
	// *MediaError that names the region and the offset.
	ErrMedia = NewError("persist: media error", ErrCorrupt)
	// ErrSyncFailed marks a failed sync: the kernel could not write the
	// region's pages back to its file (msync returned an error, EIO say) and
	// may have dropped them, so writes made since the last good sync may be
	// lost. The region is then failed for good: every later durability call
	// (Flush, Drain, Persist, Copy, Set, Sync) returns the same *SyncError
	// without trying again, because a retry that succeeds would report as
	// durable pages the kernel has already thrown away (PostgreSQL's 2018
	// "fsyncgate"). Reads go on; close the region and reopen the file to see
	// what reached it.
	ErrSyncFailed = errors.New("persist: sync failed")
	// ErrFull marks a device with no space for an allocation: Map or Grow
	// could not preallocate the file (fallocate returned ENOSPC or EDQUOT).
	// The error also wraps the system's error, so errors.Is(err,
	// syscall.ENOSPC) holds for a full device. The region (after a Grow)
	// and the file are as they were before the call.
	ErrFull = errors.New("persist: no space left on the device")
)

// NewError returns a new sentinel error whose text is msg and which also
// matches each of parents under errors.Is. It is how a package defines a
// sentinel in braid's common vocabulary without repeating the parent's
// text:
//
//	ErrCorrupt  = persist.NewError("walog: corrupt log", persist.ErrCorrupt)
//	ErrTooSmall = persist.NewError("fam: region too small", persist.ErrTooSmall)
//
// errors.Is(walog.ErrCorrupt, persist.ErrCorrupt) holds, and the message
// reads "walog: corrupt log", not "walog: corrupt log: persist: corrupt
// persistent data".
func NewError(msg string, parents ...error) error {
	return perr.New(msg, parents...)
}

// Corruptf returns an error whose text is the formatted message and which
// matches ErrCorrupt under errors.Is. The format may use %w to wrap a cause
// (a package's own corruption sentinel, say), which errors.Is and errors.As
// then also find.
func Corruptf(format string, args ...any) error {
	return &marked{err: fmt.Errorf(format, args...), mark: ErrCorrupt}
}

// MarkCorrupt returns err marked as corruption: the same text, errors.Is
// and errors.As find what err wraps, and errors.Is(_, ErrCorrupt) holds. It
// returns nil for nil. Use it where a lower layer's error (a decoder's, a
// checksum helper's) means "these persistent bytes are damaged" at this
// layer.
func MarkCorrupt(err error) error {
	if err == nil || errors.Is(err, ErrCorrupt) {
		return err
	}
	return &marked{err: err, mark: ErrCorrupt}
}

// IsCorrupt reports whether err is marked as corruption: errors.Is(err,
// ErrCorrupt).
func IsCorrupt(err error) bool { return errors.Is(err, ErrCorrupt) }

// marked is an error with the text of err that also matches mark.
type marked struct {
	err  error
	mark error
}

func (e *marked) Error() string   { return e.err.Error() }
func (e *marked) Unwrap() []error { return []error{e.err, e.mark} }
