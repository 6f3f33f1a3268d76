// Package fam is Failure-Atomic Memory: small objects updated in place,
// failure-atomically, with one persist barrier per update: section 3.4.3
// of van Renen, Vogel, Leis, Neumann and Kemper, "Building blocks for
// persistent memory", The VLDB Journal 29(6), 2020 ("the paper" below).
//
// An object of n bytes (n a multiple of 4, at most MaxSize) is kept in
// 8-byte FAM blocks (FAMBs), each holding 31 bits of the current value, the
// 31 bits of the value before it, and a 2-bit version. The 32nd bit of
// every 4-byte word goes to a meta FAMB (one per 31 data FAMBs). A 16-byte
// object is five FAMBs, 40 bytes, one cache line.
//
// # What is durable when
//
//   - Array.Update(i, v) rewrites every FAMB of object i with one aligned
//     8-byte store each (current value becomes previous, v becomes current,
//     version + 1 mod 4), flushes the object's cache lines and fences once.
//     When it returns nil, v is durable.
//   - If a crash interrupts Update, any subset of the object's FAMBs may
//     have reached the media. Open recovers: FAMBs that ran one version
//     ahead of the others are rolled back (version - 1, current = previous)
//     and made durable. Every object is then exactly its old or its new
//     value, never a mix. Recovery is idempotent: a crash during Open is
//     recovered by the next Open, and a FAMB is rolled back at most once.
//   - Create is durable on return; a crash during it leaves ErrNoArray or
//     the complete, zeroed array.
//   - Objects that the crash did not touch are unchanged; nothing
//     acknowledged is lost.
//
// This holds when only aligned 8-byte stores are failure-atomic (the
// word-atomic model of persist/crash), and assumes at most one Update per
// object runs at a time: the next may start only after the previous one
// returned, so no more than two versions of an object ever exist.
//
// LogArray is the log-based alternative the paper compares FAM with: a
// redo record in a popcount-validated log, a fence, the in-place write, a
// second fence. Its guarantees are the same (OpenLog replays), at two
// barriers per update.
//
// # Corruption
//
// The header line is checked (magic, CRC-32C, format, fields): a damaged
// one is ErrCorrupt. A header that is not this kind's at all is
// ErrBadFormat, which does not wrap persist.ErrCorrupt: another kind's
// (Open on a LogArray, OpenLog on an Array, either on a cow.Array), bytes
// with a foreign magic whose array checksum fails (a walog log, a pagelog
// store, anything else), and a format version or flag this build does not
// read. A header with this kind's magic whose checksum fails, and a sound
// one whose magic was hit (an unknown magic over fields whose checksum
// holds; no single changed byte turns one kind's magic into another's),
// stay ErrCorrupt; all zeros is ErrNoArray. Object bytes carry no checksum: a FAM block has no room for
// one (31 + 31 + 2 bits), and LogArray objects are plain bytes. What the
// versions do catch in an Array, for one bit flipped on the media (or a
// stray write):
//
//   - the high version bit of a FAM block: its object has versions two
//     apart, which no crash leaves: Read, Update, Check and Open report
//     ErrCorrupt.
//   - the low version bit: two adjacent versions. Read, Update and Check
//     report ErrCorrupt, but Open cannot tell this from an update torn by a
//     crash and rolls it back: afterwards the object reads, without error,
//     as a mix of its blocks' previous and current values.
//   - a bit of a block's current value (bits 30..0 of a data block, the
//     bits in use of a meta block): not detected; Read returns the wrong
//     value.
//   - a bit of a block's previous value (bits 61..31), or an unused bit of
//     a meta block: not read; harmless unless a rollback after a crash
//     makes that previous value current again before an Update overwrites
//     it.
//
// In a LogArray, Read checks nothing. A redo record's popcount tells a
// torn record from a complete one; a flipped bit in a record makes it look
// torn, so it is not replayed and its lane is reset (its update was
// already in place). OpenLog rewrites an object whose latest record is
// still in its lane when the bytes in place differ, which repairs them as
// a side effect; it does not check the others.
//
// # Regions: read-only, closed
//
// Create and CreateLog need a writable region: on a read-only one they
// return an error wrapping persist.ErrReadOnly before any store (a store
// to a read-only mapping is a fatal fault, not an error). Open and OpenLog
// write only to recover: in a read-only region they open an array that
// needs no rollback or replay, and return an error wrapping
// persist.ErrReadOnly for one that does (OpenLog leaves lanes it would
// reset as they are: that does not change what Read returns). Update on an
// array opened read-only returns an error wrapping persist.ErrReadOnly.
// On a closed region Create, CreateLog, Open, OpenLog and every method
// return an error wrapping persist.ErrClosed.
//
// # One area, one open array
//
// Create, CreateLog, Open and OpenLog claim the array's bytes (header and
// body: Footprint, LogFootprint) on the region (persist.Region.Claim)
// until Close, so a second array, walog log, pagelog store or anything
// else that claims, opened over any of those bytes of the same Region
// while the first is open, is an error wrapping persist.ErrBusy and writes
// nothing: two handles would race on the same objects and lanes. A failed
// Create or Open claims nothing. Close writes nothing; a second Close, and
// every method after Close, returns ErrClosed. To reopen (a recovery
// test, say), close the old handle first. The claim is per Region value:
// two Regions mapping one file, or two processes, are not told apart.
//
// # Concurrency
//
// Updates and reads of different objects may run from any number of
// goroutines. One object must have one writer at a time, and a Read of an
// object must not overlap an Update of that object; the caller
// synchronizes that (a mutex per object, or objects partitioned among
// goroutines). Open, Create and Close of an array or of the region must
// not run concurrently with other operations on it.
//
// # Bad input
//
// Object sizes that are not a multiple of 4 or exceed MaxSize are ErrSize,
// values and buffers of the wrong length ErrSize, indexes out of range
// ErrIndex, a region too small ErrTooSmall, bad offsets and options
// ErrInvalid, an empty header ErrNoArray, a header of another kind or no
// array header at all ErrBadFormat, an area an open structure claims an
// error wrapping persist.ErrBusy. A damaged header, FAMBs of one
// object at versions no crash can leave (two apart, or three or more
// versions), or a complete redo record naming a foreign object are
// ErrCorrupt, which wraps persist.ErrCorrupt. Nothing panics on input or
// on persistent bytes.
package fam
