// Package cow keeps small objects in two in-place versions and updates
// them failure-atomically with two persist barriers (van Renen et al.,
// "Building blocks for persistent memory", VLDB Journal 2020, section
// 3.4.1; ALGORITHMS.md 5.1).
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
// corrupt header ErrCorrupt (which wraps persist.ErrCorrupt). Nothing
// panics on input or on persistent bytes.
package cow
