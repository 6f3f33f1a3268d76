// Package kv is braid's SKYE-style write-optimized key-value store
// (papers/002): a fixed number of workers per device, each the sole
// owner of one data log and one metadata log (nvLOG), write in batches
// with one fence each. By default the clients combine (the one that finds
// a worker's writer slot free writes what is queued on it) and reads are
// made in the caller; Options.DedicatedWorkers and WorkerReads run SKYE's
// worker goroutines for both instead.
//
//	client -> router (serial number, spread) -> worker queue -> writer
//	          (a leading client, or the worker): data log + metadata log
//	          (one fence per batch) -> sharded index (+ ordered index), or
//	          with Options.MergeLogs a merge log -> merger -> index;
//	          cleaner (GC); checkpoints
//
// The README has the design, the on-media layouts and the figures.
//
// # What is durable when
//
//	operation                 when it returns nil                          after a crash during it
//	Put(k, v)                 k = v is durable (its metadata entry is)     k is v or its previous value
//	Delete(k)                 the tombstone is durable                     k is deleted or keeps its value
//	Apply(b)                  every op of b is durable                     each op of b is there or not
//	PutAsync(k, v, done)      done(t, nil) is called once durable          as Put
//	PutAt(k, v, d), PutTTL    k = v with deadline d is durable             k is v with d, or its previous value and deadline
//	Expire(k, d), Persist(k)  k's value with deadline d (none) is durable  k has the new deadline or the old one
//	drop of an expired k      (the expirer or GC: no call returns)         k is the expired version or its tombstone
//	Checkpoint                the index is in CheckpointDir (rename)       the previous checkpoint stands
//	GC                        live entries were moved, victims freed       nothing acknowledged is lost
//	Close                     a checkpoint was written                     as Checkpoint
//
// A put is committed exactly when its metadata entry is durable: the
// entry carries the put's serial number and the CRC-32C of its key and
// value, and shares the batch's fence with the data record, so a torn
// batch is detected at recovery and dropped. Apply's operations go into
// one batch when they fit in one worker's batch (BatchBytes), else into
// several; each is committed on its own, so Apply is "all durable when it
// returns", not atomic.
//
// Get never returns a value whose put has not been acknowledged as
// durable: the index learns of an entry only after its batch's fence.
// Concurrent operations are linearizable; the order of two concurrent
// writes to one key is the order of their serial numbers, in the running
// store and after recovery alike (the highest serial wins).
//
// # Expiry
//
// A deadline is absolute Unix milliseconds (as Redis keeps it; 0: none);
// a key is there while the store's clock (Now) is at most its deadline.
// The deadline is part of the version: written with the record, covered
// by its CRC, committed by the same entry, replayed by recovery, carried by
// checkpoints and moved by GC with the value. An expired version is never
// returned, also just after a crash or a restart: every read checks the
// deadline against the clock. Expired versions are dropped in the
// background (Options.ExpireInterval, and at once when a read finds one)
// and by GC: each becomes a tombstone with its serial, which a write of
// the key with a higher serial beats. Expire and Persist are
// read-modify-writes, atomic against each other and against writes that
// completed before them; a Put of the same key concurrent with one may be
// ordered before it and overwritten by the value it read, so serialize
// per key writes you mix with them. The clock (Options.Clock) never goes
// back while the store is open; set back across a restart, it can show
// again a version whose deadline passed but that nothing had read or
// dropped, until it passes that deadline again; one read as expired or
// dropped stays gone.
//
// # Recovery
//
// Open loads the newest checkpoint whose checksum holds (else starts
// empty), replays every metadata log after the checkpoint's positions in
// parallel (one goroutine per log), keeps the highest serial per key,
// drops torn entries at the tail of a log (and zeroes them on the media)
// and entries whose value fails its checksum, and restarts the serial
// counter above every serial it saw. No flag is needed to repair a torn
// tail. It zeroes only what it can prove torn: a damaged or zeroed entry
// followed by a later batch of its log fails Open with ErrCorrupt and is
// left as it is. Damage confined to the last batch of a log of a store
// that was not closed looks like a tear and costs that batch. Damage
// anywhere else costs the keys it hit, never silently: they read
// ErrCorrupt, or Recovery and Check report it. Recovery reports what it
// did (Store.Recovery).
//
// # Keys, values, limits
//
// Keys are 1 to Options.MaxKey bytes: the empty key is refused with
// ErrInvalid. Values are 0 to Options.MaxValue bytes; a nil and an empty
// value are the same. Larger ones are ErrTooLarge, naming both sizes.
//
// # Errors
//
// ErrClosed after Close; ErrFull when every device is at its DeviceSize,
// none has a free segment and the cleaner cannot free one (a write that
// finds none first waits for the cleaner, up to Options.FullWait; the
// operation wrote nothing; gets still work; delete and GC to make room);
// ErrNoSpace (persist.ErrFull) when a device's file system has no room
// for the store to grow or a checkpoint to be written (nothing written);
// ErrBadFormat for a segment or checkpoint of another kind or store;
// ErrCorrupt from Check (corrupt bytes are never returned as a value: a
// Get whose record fails its checksum is ErrCorrupt too); ErrBusy when
// another process holds the store's lock files. A read of poisoned media
// is an error wrapping persist.ErrMedia (never a process death); after a
// failed sync (persist.ErrSyncFailed) no write is acknowledged again. The
// README's "Bad input and faults" says what each costs.
package kv
