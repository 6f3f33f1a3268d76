// Package walog is an append-only log of small entries (transaction log
// records, redo records) in persistent memory, in three formats behind one
// API: PopLog (a popcount-validated entry, one barrier per append), RAWL
// (a validity bit in every 64-bit word, one barrier) and Classic (entry,
// then a commit word: two barriers). Every entry also carries a CRC-32C.
// The formats and their measurement come from van Renen et al., "Building
// blocks for persistent memory" (VLDB Journal 29(6), 2020), §3.3; the
// layouts are in the package README.
//
//	l, err := walog.Create(region, &walog.Options{Format: walog.PopLog})
//	seq, err := l.Append([]byte("record"))   // durable when it returns
//	...
//	l.Close()
//	l, err = walog.Open(region, nil)          // after a restart or crash
//	it := l.Iter()
//	for it.Next() {
//		replay(it.Seq(), it.Entry())
//	}
//	err = it.Err()                            // nil at the end of the log; else ErrCorrupt, ...
//
// # What is durable when
//
//   - Append(p) returns the entry's sequence number; when it returns nil
//     the entry is durable, and so is every entry appended before it.
//   - AppendBatch(ps) makes all its entries durable with one barrier (two
//     for Classic); when it returns nil they are all durable. A crash
//     during it leaves a prefix of the batch, possibly empty. A batch
//     occupies at most Options.MaxBatch bytes of the log.
//   - Reset discards every entry, Truncate(seq) those numbered seq and up;
//     when they return nil the entries are gone for good, and a crash
//     during either leaves all of the entries concerned or none.
//   - Create formats the area; a crash during it leaves no log (ErrNoLog)
//     or the new empty one. Close changes nothing on the media.
//
// # What recovery guarantees
//
// Open scans from the start and returns exactly the entries of a prefix of
// the appended sequence that contains every entry whose Append returned;
// besides those it may contain entries whose Append was in flight at the
// crash (complete, bit-exact), never a torn entry and never bytes that
// were not appended. Each entry proves it is complete (popcount, validity
// bits or commit word: torn writes) and intact (CRC-32C over its length,
// sequence number and data: bits flipped in place), and sequence numbers
// must follow each other.
//
// A crash can only tear the append in flight, at the end of the log; media
// damage can hit anywhere. Open tells them apart: where the valid entries
// end, it accepts an entry that fails its check only when it has the shape
// of a torn append, and the bytes after it only as far as the append a
// crash interrupted can have written (its own length when the log shows
// it was a single entry, else Options.MaxBatch); past that, free space
// must be clean, and no later append's entries may lie within it.
// Reset and Truncate record in the header the range where a crash may
// leave their leftovers. What passes is dropped as a torn append
// (Report().Stop says which entry, wrapping ErrCorrupt). Anything else is
// corruption: Open fails with an error wrapping ErrCorrupt (and
// persist.ErrCorrupt) that says where, and writes nothing — the entries
// after the damage stay on the media. Options.Salvage opens such a log
// anyway, keeping the entries before the damage and discarding the rest
// (Report().Salvaged). The one damage Open cannot tell from a crash is
// damage to the last append that looks exactly like a tear (nothing after
// it shows the append had returned): that append is dropped. A log created
// with Options.NoChecksum (the paper's raw formats) detects torn writes
// only: there, damage that passes the torn-write check is returned as data.
//
// Before the log takes appends again, Open rewrites clean everything past
// the valid entries that an interrupted append may have written (up to the
// prepared end recorded in the header): without that, a later append torn
// by another crash could be completed by stale bytes and pass its check.
// Open is idempotent, and a crash during Open
// recovers the same entries when Open runs again (a crash during a
// salvaging Open leaves the damaged log or the salvaged one).
//
// Every entry carries a sequence number, 1, 2, 3, ... in append order for
// a standalone log (at most 2^56); Reset does not restart the numbering.
//
// # Space, and a full log
//
// A log lives in an area of a region (Options.Offset, Options.Size): a
// 256-byte header (magic, version, format, geometry, checksums) and entries
// packed after it, each aligned to 8 bytes or, with Options.Align, to 64 or
// 256. PopLog and Classic need free space zeroed and zero it a chunk ahead
// of the tail (Options.Chunk, default 1 MiB), recording the prepared end in
// the header with one extra barrier per chunk. RAWL zeroes its area once at
// Create and never again: each pass over the log flips the validity sense.
//
// When an entry does not fit, Append returns ErrFull, unless Options.Wrap
// is set: then Options.Checkpoint is called (the caller makes durable
// whatever the entries protect), every entry is discarded as by Reset, and
// the append goes to the start of the log — a circular log reused one pass
// at a time. A checkpoint error fails the append and leaves the log as it
// was.
//
// # Concurrency, and the region
//
// A Log may be used from many goroutines: appends are serialized by its
// lock, and the log order is the order in which they took it, so an Append
// that returned precedes in the log every Append that began after it. For
// appends that scale, a Set gives each goroutine its own log, with one
// shared sequence of numbers that orders all entries of the set (see Set).
//
// A log works in its region's memory: close the log (or set) before the
// region, and do not grow the region under it. Operations on a log whose
// region was closed return an error wrapping persist.ErrClosed. On a
// region mapped read-only, Create fails with persist.ErrReadOnly, and Open
// succeeds only when recovery has nothing to write; the log can then be
// read, and its writes fail with persist.ErrReadOnly.
//
// # Bad input
//
// An empty entry is ErrEmpty, one longer than MaxEntry ErrTooLarge (so is
// a batch larger than MaxBatch), bad options or offsets ErrInvalid, a
// region without a log ErrNoLog, a foreign header or one of another format
// or version ErrBadFormat, a header that fails its checksums and damaged
// entries ErrCorrupt; operations on a closed log return ErrClosed. Nothing
// panics on input or on the contents of the region.
package walog
