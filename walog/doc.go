// Package walog is an append-only log of small entries (transaction log
// records, redo records) in persistent memory, in three formats behind one
// API: PopLog (a popcount-validated entry, one barrier per append), RAWL
// (a validity bit in every 64-bit word, one barrier) and Classic (entry,
// then a commit word: two barriers). Every entry also carries a CRC-32C.
// The formats and their measurement come from van Renen et al., "Building
// blocks for persistent memory" (VLDB Journal 29(6), 2020), §3.3; the
// layouts and the measured figures are in the package README.
//
//	l, err := walog.Create(region, &walog.Options{Format: walog.PopLog})
//	seq, err := l.Append([]byte("record"))   // durable when it returns
//	...
//	l.Close()                                 // records the tail
//	l, err = walog.Open(region, nil)          // after a restart or crash
//	it := l.Iter()
//	for it.Next() {
//		replay(it.Seq(), it.Entry())
//	}
//	err = it.Err()                            // nil at the end of the log; else ErrCorrupt, ...
//
// # What is durable when
//
//	operation        when it returns nil                    after a crash during it
//	Append(p)        the entry and every earlier one        the log without it, or with it whole
//	AppendBatch(ps)  every entry of the batch               a prefix of the batch (possibly empty)
//	Reset()          every entry is gone for good           all the entries, or none
//	Truncate(seq)    entries seq and later are gone         all of them, or none
//	Create           an empty log                           the area as it was, no log (ErrNoLog), or the empty log
//	Open + Salvage   the entries before the damage          the damaged log (untouched) or the salvaged one
//	Close()          the tail is recorded in the header     the log (recovered as after a crash)
//
// A batch occupies at most Options.MaxBatch bytes. Every entry carries a
// sequence number, 1, 2, 3, ... in append order for a standalone log (at
// most 2^56); Reset does not restart the numbering. Create leaves "the
// area as it was" only when the crash came before its first barrier (its
// mark "being created" on both copies of the header).
//
// # What recovery guarantees
//
// Open returns exactly the entries of a prefix of the appended sequence
// that contains every entry whose Append returned, plus possibly entries
// of the append in flight at a crash (complete, bit-exact); never a torn
// entry, never bytes that were not appended. Each entry proves it is
// complete (popcount, validity bits, commit word), intact (CRC-32C over
// its length, sequence word and data) and in place (numbers consecutive
// along a standalone log, growing along a set member; its index in its
// append consistent with the entry before it). Open completes a Reset a
// crash interrupted and rewrites clean whatever an interrupted append left
// past the tail, so that a later torn append cannot be completed by stale
// bytes. Open is idempotent; a crash during it recovers the same entries.
//
// A crash tears only the append in flight, at the end of the log; media
// damage can hit anywhere, and Open tells them apart (the rules are in
// recover.go): what passes for a torn append is dropped (Recovery().Stop
// says which entry and why); anything else is ErrCorrupt, and Open writes
// nothing. Options.Salvage opens such a log anyway, cut before the damage.
// The header is kept twice (the header and its copy, in the next 256-byte
// block): damage to one copy is repaired from the other (Recovery().Header
// says what was wrong), damage to both is ErrCorrupt. What media damage
// can do without being reported, on checksummed logs:
//
//	the log was             damage that passes unseen                       what Open returns
//	closed (Close returned) none (but a CRC-32C or header check collision)  every entry
//	crashed or open         to its last append, with the shape of a tear    the log without that append
//	crashed or open         wiping out its end: every entry from one on     the log without those entries
//	                        (zeroed to the tail, or the last ones zeroed
//	                        and the rest torn-shaped)
//	either                  zeroing everything the area holds               ErrNoLog (nothing is left)
//
// A closed log's header records its tail (the clean-shutdown word), so
// the entries must end exactly there, at clean bytes. An open or crashed
// log's cannot, and a log ending at clean bytes looks the same as one
// whose end was zeroed. The corruption campaign in the tests measures it
// (README). Beyond these: a damaged entry's index in its append is kept
// modulo 128, so damage that wipes out a multiple of 128 entries, with
// entries of one later batch surviving after it, can pass too, and in a
// Set member (whose numbers have gaps) the entries of one later append
// surviving past damage cannot be told from the interrupted append. A log
// created with Options.NoChecksum (the paper's raw formats) detects torn
// writes only: there, damage that passes the torn-write check is returned
// as data.
//
// # Space, and a full log
//
// A log lives in an area of a region (Options.Offset, Options.Size,
// multiples of BlockSize): the 512-byte header (the header and its copy)
// and entries packed after it, each aligned to 8 bytes or, with
// Options.Align, to 64 or 256. PopLog and Classic need free space zeroed
// and zero it a chunk ahead of the tail (Options.Chunk, default 1 MiB),
// recording the prepared end in the header with one extra barrier per
// chunk. RAWL zeroes its area once at Create; each pass flips the validity
// sense. When an entry does not fit, Append returns ErrFull, unless
// Options.Wrap: then Options.Checkpoint is called (the caller makes
// durable whatever the entries protect; an error fails the append and
// leaves the log as it was), every entry is discarded as by Reset, and the
// append goes to the start.
//
// # Concurrency, and the region
//
// A Log may be used from many goroutines: appends are serialized by its
// lock, and an Append that returned precedes in the log every Append that
// began after it. For appends that scale, a Set gives each goroutine its
// own log, with one shared sequence of numbers (see Set). Create and Open
// claim the log's area on its region until Close (persist.Region.Claim): a
// second log or structure opened on those bytes is an error wrapping
// persist.ErrBusy.
//
// A log works in its region's memory: close the log before the region,
// and do not grow the region under it. On a region mapped read-only,
// Create fails with ErrReadOnly, Open succeeds when recovery has nothing to
// write to the entries (a header copy to repair is left for the next
// writable Open), and the log's writes fail with ErrReadOnly.
//
// # Poisoned media, failed syncs
//
// Every operation reads and writes the region under persist.Guard, so
// poisoned media (a load that faults) is an error, never a dead process:
// ErrCorrupt wrapping a *persist.MediaError (persist.ErrMedia) that names
// the range. A poisoned header page (the header and its copy share it)
// fails Open; a poisoned entry ends the valid entries as corruption — Open
// fails and writes nothing, Options.Salvage opens the log cut before it —
// and poisoned free space the region lists (Region.Poisoned, Log.Poisoned)
// is skipped; an append that meets poison fails and the log takes no more
// writes; an iterator ends at a poisoned entry. A failed sync
// (persist.ErrSyncFailed) is final: the log acknowledges nothing after it.
// The package README has the table and the tests.
//
// # Errors
//
//	error        means                                                    also matches
//	ErrEmpty     an entry of zero bytes                                   persist.ErrInvalid
//	ErrTooLarge  an entry over MaxEntry, a batch over MaxBatch            persist.ErrInvalid
//	ErrInvalid   bad options, offsets or arguments; Options that          persist.ErrInvalid
//	             contradict the log's format or geometry at Open
//	ErrFull      no room, and the log does not wrap
//	ErrNoLog     the area holds nothing, or a Create that did not finish  persist.ErrEmpty
//	ErrBadFormat another kind of structure, another format version        persist.ErrBadFormat
//	ErrCorrupt   damaged persistent bytes (poisoned: also a               persist.ErrCorrupt
//	             *persist.MediaError, persist.ErrMedia)
//	ErrTooSmall  the region is shorter than the log its header describes, persist.ErrTooSmall
//	             or than the log Create is asked for
//	ErrReadOnly  a write (or a recovery that must write) on a read-only   persist.ErrReadOnly
//	             region
//	ErrClosed    an operation on a closed log                             persist.ErrClosed
//	ErrChanged   an iterator whose log was reset or truncated under it
//
// An operation on a log whose region was closed returns an error wrapping
// persist.ErrClosed; an area claimed by another open structure,
// persist.ErrBusy. Nothing panics on input or on the contents of the
// region.
package walog
