// Package raftstore is hashicorp/raft's LogStore and StableStore on
// braid: raft's log in walog PopLogs (one persist barrier per StoreLogs
// batch, where raft-boltdb and raft-wal pay an fsync), its term and vote
// in a log of key records, and the few words that tie them together in a
// failure-atomic cow object.
//
//	s, err := raftstore.Open("/mnt/pmem/raft.pm", nil) // created when missing
//	r, err := raft.NewRaft(conf, fsm, s, s, snaps, transport)
//	...
//	s.Close()
//
// # What is durable when
//
//	operation              when it returns nil                 after a crash during it
//	StoreLogs(ls)          every entry of ls                   a prefix of ls (possibly none)
//	StoreLog(l)            l                                   l or nothing
//	DeleteRange (prefix)   the entries are gone for good       the log whole, or without the prefix
//	DeleteRange (suffix)   the entries are gone for good       the log cut anywhere from min on
//	Set, SetUint64         the value                           the old value or the new
//	Open                   (recovers; resets emptied segments)  the same store
//	Close                  (writes nothing more)               the store
//
// Recovery (Open) returns exactly the acknowledged log, plus possibly the
// entries of the StoreLogs in flight (a prefix of them, whole), minus
// possibly entries of the DeleteRange in flight as the table says: always
// one increasing run of indexes, never a torn entry, never a hole made by
// a crash. Damage to the media is walog's to detect (popcount and CRC-32C
// of every entry, checked again by every GetLog); what fails is
// ErrCorrupt, never returned as an entry.
//
// # What raft may do
//
// Indexes must grow: StoreLogs takes entries above the last one (raft
// deletes a conflicting suffix before it appends), with gaps allowed, and
// into an empty log any index. DeleteRange deletes a prefix (compaction
// after a snapshot) or a suffix (entries that conflict with the leader's);
// a range strictly inside the log would leave a hole and is ErrInvalid.
// GetLog of an index the log does not hold — deleted from either end,
// never written, in a gap — is raft.ErrLogNotFound, the value itself.
// FirstIndex and LastIndex are 0 for an empty log. Get of a key never set
// is ErrKeyNotFound, whose text is "not found" (raft tests the text);
// SetUint64 stores 8 bytes big-endian, as raft-boltdb does.
//
// # Layout
//
// One region (Open maps a file of Footprint bytes): the meta object, two
// stable logs, and Options.Segments log segments of Options.SegmentSize
// bytes (each a walog PopLog); the package README draws it. Appends go to
// one segment until it is full, then to a segment holding no live entry
// (reset first). A prefix deletion raises the floor in the meta object
// (the commit) and resets the segments left without live entries; a
// suffix deletion resets the later segments, newest first, and truncates
// the segment where the suffix starts. The log holds at most what its
// segments hold: ErrFull says raft compacts too rarely for the store.
//
// # Concurrency, errors
//
// A Store may be used from many goroutines; writes to the log are
// serialized, GetLog runs beside other reads. A failed write to the log
// (a failed sync, poisoned media) is final: the log takes no more writes
// and says why. Bad options and arguments (and options that contradict
// the store) are ErrInvalid, a region too small ErrTooSmall, another
// structure or format ErrBadFormat, damaged bytes ErrCorrupt, a closed
// store ErrClosed (they match persist's sentinels of the same name).
// Nothing panics on input or on the contents of the region.
package raftstore
