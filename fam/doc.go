// Package fam is Failure-Atomic Memory: small objects updated in place,
// failure-atomically, with one persist barrier per update (van Renen et
// al., "Building blocks for persistent memory", VLDB Journal 2020, section
// 3.4.3; ALGORITHMS.md 5.3).
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
// # Concurrency
//
// Updates and reads of different objects may run from any number of
// goroutines. One object must have one writer at a time, and a Read of an
// object must not overlap an Update of that object; the caller
// synchronizes that (a mutex per object, or objects partitioned among
// goroutines). Open, Create and Close of the region must not run
// concurrently with anything else.
//
// # Bad input
//
// Object sizes that are not a multiple of 4 or exceed MaxSize are ErrSize,
// values and buffers of the wrong length ErrSize, indexes out of range
// ErrIndex, a region too small ErrTooSmall, bad offsets and options
// ErrInvalid, an empty header ErrNoArray. A corrupt header, FAMBs of one
// object at versions no crash can leave (two apart, or three or more
// versions), or a complete redo record naming a foreign object are
// ErrCorrupt, which wraps persist.ErrCorrupt. Nothing panics on input or
// on persistent bytes.
package fam
