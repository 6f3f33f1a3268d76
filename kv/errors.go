package kv

import "github.com/braid-pm/braid/persist"

// The errors of package kv. Each matches the persist sentinel of braid's
// common vocabulary where one applies (errors.Is(err, persist.ErrCorrupt)
// holds for ErrCorrupt), and its text names package kv once.
var (
	// ErrNotFound: Get or GetWithToken of a key that has no value.
	ErrNotFound = persist.NewError("kv: key not found")
	// ErrClosed: an operation on a closed Store.
	ErrClosed = persist.NewError("kv: store is closed", persist.ErrClosed)
	// ErrTooLarge: a key or value over Options.MaxKey or MaxValue (the
	// message names both sizes).
	ErrTooLarge = persist.NewError("kv: key or value too large", persist.ErrInvalid)
	// ErrFull: no free segment is left for a put or delete and the
	// cleaner cannot free one (a write waits for it first, up to
	// Options.FullWait); nothing was written. Delete keys and run GC to
	// make room.
	ErrFull = persist.NewError("kv: store is full")
	// ErrBadFormat: a segment or checkpoint file that is not this store's
	// (another kind of braid file, another store, another format version).
	ErrBadFormat = persist.NewError("kv: not a kv store file", persist.ErrBadFormat)
	// ErrCorrupt: persistent bytes that fail their checksum. Check returns
	// it; no operation ever returns corrupt bytes as a value.
	ErrCorrupt = persist.NewError("kv: corrupt store", persist.ErrCorrupt)
	// ErrBusy: the store is open in another process (or handle): its lock
	// file on a device is held.
	ErrBusy = persist.NewError("kv: store is in use", persist.ErrBusy)
	// ErrNoOrder: Scan on a store opened without Options.OrderedIndex.
	ErrNoOrder = persist.NewError("kv: scan needs Options.OrderedIndex")
	// ErrInvalid: bad options or arguments (an empty key among them).
	ErrInvalid = persist.NewError("kv: invalid argument", persist.ErrInvalid)
)
