// Package persist maps persistent memory and makes stores to it durable.
//
// A Region is a mapped file (Map), anonymous memory (Anonymous) or a
// simulated region (NewSimulated, used by persist/crash). Structures keep
// offsets into Region.Bytes(), never Go pointers, and write with ordinary
// stores, Copy or Set.
//
// # What is durable when
//
//	call                           durable when it returns nil
//	Persist(b)                     b
//	Flush(b)                       nothing yet; b after the next Drain (Flushes share one fence)
//	Copy(dst, src, 0), Set(d,c,0)  the copied or filled bytes
//	Copy/Set with NoDrain          after the next Drain
//	Copy/Set with NoFlush          nothing: the caller flushes and drains
//	Store64(b, v)                  nothing by itself: the 8-byte store that cannot tear; persist it
//	Sync()                         the whole region
//	Close()                        does not flush
//
// Only an aligned 8-byte store is failure-atomic: after a crash any larger
// write may be found torn at 8-byte granularity, and any store not yet
// made durable may or may not have reached the media.
//
// # Modes
//
// Each region picks its mode when it is mapped; Info (or String) says
// which one runs.
//
//	mode       when                                            Flush                        Drain
//	ModeFlush  a DAX file granted MAP_SYNC (real PMem), a       CLWB, else CLFLUSHOPT,       SFENCE
//	           mapping forced onto the PMem path (ForcePMem,    else CLFLUSH
//	           BRAID_FORCE_PMEM=1), an anonymous region
//	ModeEADR   the platform's caches are in the persistence     nothing                      SFENCE
//	           domain, or FenceOnly / BRAID_NO_FLUSH=1
//	ModeMsync  any other file, and a flush mapping in a build   msync(2) of the pages        nothing
//	           without flush instructions (purego)
//
// Copy and Set use streaming stores (AVX-512, AVX2 or SSE2) from a size
// threshold: Options.MovntThreshold, BRAID_MOVNT_THRESHOLD, a device
// profile's measured value (Options.Profile, BRAID_PROFILE), or
// DefaultMovntThreshold; BRAID_NO_MOVNT=1 turns them off. BRAID_NO_CLWB=1
// and BRAID_NO_CLFLUSHOPT=1 skip a flush instruction, Options.Flush picks
// one.
//
// # Bad input
//
// A range outside the region is ErrRange, an operation after Close is
// ErrClosed, a write to a read-only region ErrReadOnly, bad options or
// flags ErrInvalid, a file smaller than asked ErrTooSmall; nothing panics
// on them. Map preallocates files with fallocate(2), so a full disk is an
// error at Map or Grow and never a SIGBUS on a later store.
//
// # Faults
//
// A load or store of mapped memory whose backing is gone (a file another
// program truncated under the mapping, poisoned media) faults. Guard runs
// a function with such faults turned into a *MediaError (ErrMedia, which
// matches ErrCorrupt) naming the region, the offset and the page, instead
// of a dead process; other panics go on. It covers the calling goroutine
// only: guard each worker. See Map for what is guaranteed of files you did
// not create.
//
// The other ways a platform fails, and what persist does about them:
//
//	failure                             what happens                                        injected in tests by
//	poisoned media (uncorrectable)      a load or store faults; Guard: *MediaError whose    Region.Poison (pages made
//	                                    Range is the poisoned range; Poisoned lists the     inaccessible), persist/crash's
//	                                    known ones, the device's bad blocks among them      Image.Poison, Config.Poison
//	a failed msync (EIO)                *SyncError (ErrSyncFailed); the region has failed:  Faults.Sync (Options.Faults)
//	                                    every later Flush/Drain/Persist/Copy/Set/Sync
//	                                    returns the same error, never a retried success
//	a full device at Map or Grow        ErrFull (and ENOSPC); a created file removed, a     Faults.Alloc, a tiny tmpfs
//	                                    grown one cut back, the region as it was
//
// On a DAX file Map reads the device's bad blocks (sysfs badblocks, placed
// in the file by its extents through FIEMAP) and reports the file ranges
// they cover in Info.Poisoned and Region.Poisoned, so that a structure
// opened over them can say so up front.
//
// # Errors (every braid package)
//
// braid has one error vocabulary, defined here and used by every package:
//
//	sentinel        means                                   a package's own
//	ErrCorrupt      persistent bytes failed a check         NewError("pkg: corrupt ...", ErrCorrupt), Corruptf, MarkCorrupt
//	ErrBadFormat    not this kind of structure / version    NewError("pkg: not a ...", ErrBadFormat)
//	ErrTooSmall     the region or file cannot hold it       NewError("pkg: region too small", ErrTooSmall)
//	ErrReadOnly     a write to a read-only mapping          NewError("pkg: ... read-only", ErrReadOnly)
//	ErrInvalid      bad options or arguments                NewError("pkg: invalid argument", ErrInvalid)
//	ErrClosed       the region is closed                    the package's own ErrClosed (its handle)
//	ErrBusy         the area is claimed by an open handle   returned as it is
//	ErrMedia        mapped memory faulted (Guard)           *MediaError, returned as it is (matches ErrCorrupt)
//	ErrSyncFailed   a sync failed; the region has failed    *SyncError, returned as it is
//	ErrFull         no space on the device (Map, Grow)      returned as it is (matches syscall.ENOSPC)
//
// A package's sentinel made with NewError matches persist's under
// errors.Is, so a caller tests errors.Is(err, persist.ErrCorrupt) whatever
// package returned err, and its text names one package: "walog: corrupt
// log: entry 7 fails its checksum", never "walog: corrupt log: persist:
// corrupt persistent data". An error that crosses a package boundary is
// either returned as it is (its text already names its package) or
// translated into the caller's own sentinel; it is not prefixed again.
// Commands decide with errors.Is and errors.As, never by matching text.
// CRC32C is the one checksum of braid's formats.
package persist
