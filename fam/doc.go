// Package fam is Failure-Atomic Memory: small objects updated in place,
// failure-atomically, with one persist barrier per update: section 3.4.3
// of van Renen, Vogel, Leis, Neumann and Kemper, "Building blocks for
// persistent memory", The VLDB Journal 29(6), 2020 ("the paper" below).
//
// An object of n bytes (n a multiple of 4, at most MaxSize) is kept in
// 8-byte FAM blocks (FAMBs), each holding 31 bits of the current value, the
// 31 bits of the value before it, and a 2-bit version; the 32nd bit of
// every 4-byte word goes to a meta FAMB (one per 31 data FAMBs). LogArray
// is the log-based alternative the paper measures FAM against: a redo
// record in a popcount-validated lane log, a fence, the in-place write, a
// second fence. The layouts are in the README.
//
// # What is durable when
//
//	operation              when it returns nil            after a crash during it
//	Create / CreateLog     the array, every object zeros  ErrNoArray, or the complete zeroed array
//	Array.Update(i, v)     v is object i's value          Open finds the old value or v, never a mix
//	LogArray.Update(i, v)  v is object i's value          OpenLog finds the old value or v
//	Open                   torn objects rolled back       the next Open recovers (idempotent)
//	OpenLog                valid records replayed         the next OpenLog recovers (idempotent)
//	Close                  (writes nothing)
//
// Array.Update rewrites every FAMB of the object with one aligned 8-byte
// store each (current becomes previous, v becomes current, version + 1 mod
// 4), flushes the object's lines and fences once. A crash may leave any
// subset of the FAMBs at the new version; Open rolls back those one
// version ahead. Objects a crash did not touch are unchanged. This holds
// when only aligned 8-byte stores are failure-atomic (the word-atomic
// model of persist/crash), with at most one Update per object at a time,
// so that no more than two versions of an object exist.
//
// # Corruption
//
// The header line is checked (internal/pmheader); object bytes carry no
// checksum (a FAMB has no room for one; LogArray objects are plain bytes).
//
//	what is found                                  error
//	all zeros                                      ErrNoArray
//	another kind's header (Open on a LogArray,     ErrBadFormat (persist.ErrBadFormat, not ErrCorrupt)
//	  OpenLog on an Array, a cow.Array), foreign
//	  bytes, a format version or flag unknown
//	this kind's magic with a failing checksum,     ErrCorrupt (persist.ErrCorrupt)
//	  a hit magic, a bad field
//	FAMBs of one object two versions apart,        ErrCorrupt (Read, Update, Check, Open)
//	  or three and more versions
//	two adjacent versions                          ErrCorrupt in Read, Update, Check; Open
//	                                                 takes it for a torn update and rolls back
//	a flipped bit of a current value               returned as data (not detected)
//	a complete redo record naming a foreign object ErrCorrupt (OpenLog, LogArray.Check)
//	a flipped bit in a redo record                 the record looks torn: not replayed
//
// # Poisoned media, failed syncs
//
// Every call runs under persist.Guard, so unreadable media (poison, a file
// truncated under its mapping) is an error, never a dead process; recovery
// guards object by object (lane by lane) and goes on past what it cannot
// read:
//
//	what is unreadable                             what it costs
//	the header's page                              Open/OpenLog and Create/CreateLog are persist.ErrMedia (a
//	                                                 *persist.MediaError naming the range); nothing claimed
//	a page of objects                              those objects: not recovered (Unreadable counts them);
//	                                                 Read (buffer zeroed), Update, Check are ErrMedia;
//	                                                 every other object recovers and works
//	a page of a LogArray lane                      that lane: not replayed (Unreadable); Read and Update of
//	                                                 its objects are ErrMedia (an update a crash cut may
//	                                                 have left one torn, and no record tells which)
//
// Poisoned says up front which of the array's bytes the region knows to be
// bad. After a failed sync (persist.ErrSyncFailed, the region failed)
// every Update returns that error without writing: none is acknowledged
// after it; the object of the Update that met it is its old or new value.
//
// # Regions, claims, concurrency
//
// Create and CreateLog need a writable region (ErrReadOnly before any
// store). Open and OpenLog write only to recover: in a read-only region
// they open an array that needs no rollback or replay and return
// ErrReadOnly for one that does; Update there is ErrReadOnly. On a closed
// region every call is persist.ErrClosed. Create, CreateLog, Open and
// OpenLog claim the array's bytes (Footprint, LogFootprint) until Close:
// another structure opened over them is persist.ErrBusy. After Close every
// method is ErrClosed (matching persist.ErrClosed). Updates and Reads of different objects may run from
// any number of goroutines (a LogArray serializes the updates of one
// lane); one object has one writer at a time, and a Read of it must not
// overlap an Update of it.
//
// # Bad input
//
// Object sizes that are not a multiple of 4 from 4 to MaxSize and values
// or buffers of the wrong length are ErrSize, indexes out of range
// ErrIndex (both match persist.ErrInvalid), bad offsets, counts and lanes
// ErrInvalid, a region too small ErrTooSmall. Nothing panics on input or
// on persistent bytes.
package fam
