package fptree

import "github.com/braid-pm/braid/persist"

// Sentinel errors. Every error of this package wraps one of them, or is an
// error of package persist returned as it is (persist.ErrBusy from a
// claim, persist.ErrReadOnly, persist.ErrRange), so callers test with
// errors.Is; the ones made over persist's vocabulary match it too
// (errors.Is(err, persist.ErrCorrupt) holds for every corruption).
var (
	// ErrFull is returned by Put and PutBatch when a leaf must split and
	// every leaf of the area is in use. The tree is unchanged by the
	// failed Put and stays usable: Get, Scan and Delete work, and Put
	// works again once Deletes have freed leaves.
	ErrFull = persist.NewError("fptree: tree is full")
	// ErrTooSmall is returned by Create when the area cannot hold the
	// header, the logs and two leaves, and by Open when the region is
	// shorter than the tree its header describes.
	ErrTooSmall = persist.NewError("fptree: region too small", persist.ErrTooSmall)
	// ErrInvalid is returned for bad options and arguments.
	ErrInvalid = persist.NewError("fptree: invalid argument", persist.ErrInvalid)
	// ErrNoTree is returned by Open when the header at the offset is
	// empty: nothing was created there, or a Create did not finish. It
	// matches persist.ErrEmpty.
	ErrNoTree = persist.NewError("fptree: no tree at this offset", persist.ErrEmpty)
	// ErrBadFormat is returned by Open for a header that is not an
	// FP-tree's: another kind of braid structure (named in the message),
	// bytes that are no header at all, a format version or flags this
	// build does not read. It is not corruption.
	ErrBadFormat = persist.NewError("fptree: not an FP-tree", persist.ErrBadFormat)
	// ErrCorrupt marks persistent bytes that failed a check: a damaged
	// header, a leaf chain that loops, leaves the chain or a micro log
	// names outside the area, leaves out of key order, a fingerprint that
	// does not match its key. It matches persist.ErrCorrupt.
	ErrCorrupt = persist.NewError("fptree: corrupt tree", persist.ErrCorrupt)
	// ErrClosed is returned by every operation on a closed tree, and by
	// a second Close.
	ErrClosed = persist.NewError("fptree: tree is closed", persist.ErrClosed)
)

var (
	// ErrReadOnly is returned by Put, Delete and PutBatch of a tree in a
	// read-only region, by Create there, and by Open of a tree that needs
	// recovery there. It matches persist.ErrReadOnly.
	ErrReadOnly = persist.NewError("fptree: the tree's region is read-only", persist.ErrReadOnly)
	// errRegionClosed: the region was closed under the tree.
	errRegionClosed = persist.NewError("fptree: the tree's region is closed", persist.ErrClosed)
)

// regionErr translates an error of the region (Readable, Writable, a
// flush or fence of a closed region) into this package's words, saying
// what needed the region.
func regionErr(err error, what string) error {
	return persist.RegionError(err, errRegionClosed, ErrReadOnly, what)
}
