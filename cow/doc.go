// Package cow keeps small objects in two in-place versions and updates
// them failure-atomically with two persist barriers: the CoW-based
// in-place update of section 3.4.1 of van Renen, Vogel, Leis, Neumann and
// Kemper, "Building blocks for persistent memory", The VLDB Journal 29(6),
// 2020 ("the paper" below).
//
// Each object of an Array has a selector word and two copies. The selector
// counts completed updates; its low bit names the active copy.
//
// # What is durable when
//
//   - Update(i, v) writes v into the inactive copy, flushes it and fences
//     (barrier 1), then stores selector+1 with one aligned 8-byte store,
//     flushes it and fences (barrier 2). When it returns nil, v is durable.
//   - If a crash interrupts Update, the object is its old value (the new
//     selector did not reach the media; the torn inactive copy is never
//     read) or its new value (the selector did, and the copy it names was
//     durable before it). There is nothing to recover; Open only checks
//     the header. Crashes during Open cannot harm: it writes nothing.
//   - Create is durable on return; a crash during it leaves ErrNoArray or
//     the complete, zeroed array.
//
// This holds when only aligned 8-byte stores are failure-atomic (the
// word-atomic model of persist/crash), with one Update per object at a
// time.
//
// # Corruption
//
// The header line is checked (magic, CRC-32C, format, fields): a damaged
// one is ErrCorrupt. A header that is not a CoW array's at all is
// ErrBadFormat, which does not wrap persist.ErrCorrupt: another kind's (a
// fam.Array or fam.LogArray), bytes with a foreign magic whose array
// checksum fails (a walog log, a pagelog store, anything else), and a
// format version or flag this build does not read. A header with the CoW
// magic whose checksum fails, and a sound one whose magic was hit (an
// unknown magic over fields whose checksum holds), stay ErrCorrupt; all
// zeros is ErrNoArray. The objects are checked only in an array created with
// Options.Checksum:
//
//   - Without it, nothing in a slot is verified. A bit flipped on the media
//     (or a stray write) in the active copy is returned by Read as data; a
//     flip of the selector's lowest bit makes Read return the other copy
//     (the previous value, or zeros). Flips in the inactive copy and in the
//     selector's other bits do not change what Read returns.
//   - With it, the selector word holds the update count in its low half and
//     the CRC-32C of the copy it names, seeded with that count, in its high
//     half. The flip stores both with one 8-byte store, so the crash
//     guarantees, the layout and the barriers are unchanged. Read and
//     Check verify the active copy: any single-bit change of the copy or
//     of the selector word (a flipped count bit, even the lowest, which
//     names the other copy, fails the check) and a zeroed slot are
//     ErrCorrupt, never data, and so are wider changes but for a chance of
//     2^-32 each; changes to the inactive copy are harmless.
//     The cost is a CRC of the object per Update and per Read, and
//     Updates counts modulo 2^32.
//
// # Regions: read-only, closed
//
// Create needs a writable region: on a read-only one it returns an error
// wrapping persist.ErrReadOnly before any store (a store to a read-only
// mapping is a fatal fault, not an error). Open writes nothing, so it
// opens arrays in read-only regions; their Update returns an error
// wrapping persist.ErrReadOnly. On a closed region Create, Open and every
// method return an error wrapping persist.ErrClosed (a Close running
// concurrently with them is a race, like any Close).
//
// # One area, one open array
//
// Create and Open claim the array's bytes (Footprint) on the region
// (persist.Region.Claim) until Close, so a second array, walog log,
// pagelog store or anything else that claims, opened over any of those
// bytes of the same Region while the first is open, is an error wrapping
// persist.ErrBusy and writes nothing. A failed Create or Open claims
// nothing. Close writes nothing; a second Close, and every method after
// Close, returns ErrClosed. The claim is per Region value: two Regions
// mapping one file, or two processes, are not told apart.
//
// # Concurrency
//
// Updates and reads of different objects may run from any number of
// goroutines. One object must have one writer at a time, and a Read of an
// object must not overlap an Update of it; the caller synchronizes that.
//
// # Bad input
//
// Object sizes outside 1..MaxSize and values or buffers of the wrong
// length are ErrSize, indexes out of range ErrIndex, a region too small
// ErrTooSmall, bad offsets ErrInvalid, an empty header ErrNoArray, a
// header of another kind or no array header at all ErrBadFormat, an area
// an open structure claims an error wrapping persist.ErrBusy, a damaged
// header or (with checksums) object ErrCorrupt, which wraps
// persist.ErrCorrupt. Nothing panics on input or on persistent bytes.
package cow
