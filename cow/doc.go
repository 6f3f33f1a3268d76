// Package cow keeps small objects in two in-place versions and updates
// them failure-atomically with two persist barriers: the CoW-based
// in-place update of section 3.4.1 of van Renen, Vogel, Leis, Neumann and
// Kemper, "Building blocks for persistent memory", The VLDB Journal 29(6),
// 2020 ("the paper" below).
//
// Each object of an Array has a selector word and two copies. The selector
// counts completed updates; its low bit names the active copy. The layout
// is in the README.
//
// # What is durable when
//
//	operation         when it returns nil                after a crash during it
//	Create(r, opts)   the array, every object zeros      ErrNoArray, or the complete zeroed array
//	Update(i, v)      v is object i's value              the old value or v, never a mix
//	Open(r, opts)     (writes nothing: nothing to recover)
//	Close()           (writes nothing)
//
// Update writes v into the inactive copy and persists it (barrier 1), then
// stores selector+1 with one aligned 8-byte store and persists it (barrier
// 2); the torn inactive copy is never read. This holds when only aligned
// 8-byte stores are failure-atomic (the word-atomic model of
// persist/crash), with one Update per object at a time.
//
// # Corruption
//
// The header line is checked (internal/pmheader: magic, CRC-32C, format,
// fields). With Options.Checksum the selector word also holds, in its high
// half, the CRC-32C of the copy it names seeded with the update count (in
// its low half, modulo 2^32), stored by the same 8-byte flip: Read and
// Check then verify the active copy.
//
//	what is found                                  error
//	all zeros                                      ErrNoArray
//	another kind's header, foreign bytes,          ErrBadFormat (persist.ErrBadFormat, not ErrCorrupt)
//	  a format version or flag this build lacks
//	the CoW magic with a failing checksum,         ErrCorrupt (persist.ErrCorrupt)
//	  a hit magic over a sound line, a bad field
//	with Checksum: a changed copy or selector,     ErrCorrupt; Read zeroes its buffer
//	  a zeroed slot
//	without Checksum: a flip in the active copy    returned as data (nothing to check)
//
// # Poisoned media, failed syncs
//
// Every call runs under persist.Guard, so unreadable media (poison, a file
// truncated under its mapping) is an error, never a dead process:
//
//	what is unreadable                             what it costs
//	the header's page                              Open and Create are persist.ErrMedia (a *persist.MediaError
//	                                                 naming the range, matching ErrCorrupt); nothing claimed
//	a page of slots                                its objects: Read (buffer zeroed), Update, Updates are
//	                                                 ErrMedia, Check returns the first; every other object works
//
// Open reads the header only: Poisoned says up front which of the array's
// bytes the region knows to be bad (the device's bad blocks, injected
// poison). After a failed sync (persist.ErrSyncFailed, the region failed)
// every Update returns that error without writing: none is acknowledged
// after it; the object of the Update that met it is its old or new value.
//
// # Regions, claims, concurrency
//
// Create needs a writable region (ErrReadOnly before any store); Open
// writes nothing, so it opens arrays in read-only regions, whose Update is
// ErrReadOnly. On a closed region every call is persist.ErrClosed. Create
// and Open claim the array's bytes (Footprint) on the region until Close:
// another structure opened over them is persist.ErrBusy. After Close every
// method is ErrClosed (matching persist.ErrClosed). Updates and Reads of different objects may run from
// any number of goroutines; one object has one writer at a time, and a
// Read of it must not overlap an Update of it.
//
// # Bad input
//
// ObjectSize outside 1..MaxSize and values or buffers of the wrong length
// are ErrSize, indexes out of range ErrIndex (both match
// persist.ErrInvalid), bad offsets and counts ErrInvalid, a region too
// small ErrTooSmall. Nothing panics on input or on persistent bytes.
package cow
