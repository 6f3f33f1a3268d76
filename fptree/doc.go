// Package fptree is a persistent ordered index of uint64 keys and uint64
// values: an FP-tree (Oukid et al., "FPTree: A Hybrid SCM-DRAM Persistent
// and Concurrent B-Tree for Storage Class Memory", SIGMOD 2016) whose
// leaves live in a persist.Region and whose inner nodes live in DRAM and
// are rebuilt from the leaves by Open, with batched lookups and inserts
// interleaved by package coro (van Renen et al., VLDB Journal 2020, §3.5).
//
//	t, err := fptree.Create(region, &fptree.Options{Size: 1 << 30})
//	err = t.Put(42, offset)                  // durable when it returns
//	v, ok, err := t.Get(42)
//	err = t.Scan(10, 99, func(k, v uint64) bool { ...; return true })
//	err = t.GetBatch(keys, vals, found)      // interleaved lookups
//	err = t.PutBatch(keys, vals)             // inserts sharing their fences
//	t.Close()
//	t, err = fptree.Open(region, nil)        // after a restart or a crash
//
// Every uint64 is a valid key, 0 and math.MaxUint64 included, and every
// uint64 a valid value (an offset into the caller's own structure, say).
// A leaf holds LeafSlots keys, unsorted, each with a one-byte fingerprint
// of its hash, so a lookup compares about one key per hit; the leaves form
// a chain in key order. The layouts are in the README.
//
// # What is durable when
//
//	operation          when it returns nil              after a crash during it           fences
//	Put, a new key     the key and value are durable    absent, or present with the value 2 (+4 if the leaf splits)
//	Put, a present key the new value is durable         the old value or the new one      1
//	Delete             the key is gone for good         present with its value, or absent 1 (+3 if it frees its leaf)
//	PutBatch           every key of the batch           each key old or new, independently 2 per group of Options.Group keys
//	Create             the empty tree is durable        ErrNoTree, or the empty tree      2 to 4
//	Get, GetBatch, Scan, Iter, Check, Len, Close          write nothing                   0
//
// An insert writes the key, the value and the fingerprint into a free slot
// and makes them durable (fence 1), then stores the leaf's bitmap with the
// slot's bit set, one 8-byte store, and makes it durable (fence 2): the
// bitmap word is the commit point. An update stores the value in place
// with one failure-atomic 8-byte store. A split writes the new leaf whole,
// makes a micro log naming both leaves durable, links the new leaf and
// gives the old one its lower half (both words durable by one fence, in
// either order: the log covers it), then clears the log. A leaf that a
// Delete empties (but the first) is unlinked from the chain and freed the
// same way, under a micro log of its own. The counts above are measured
// with persist's traffic counters in TestFences.
//
// # What recovery guarantees
//
// Open finishes the split or the leaf free a crash interrupted (from its
// micro log; both are rolled forward), unlinks an empty leaf a crash left
// in the chain, rebuilds the inner nodes from the chain and returns a tree
// that holds exactly the acknowledged keys and values, plus the operation
// in flight applied whole or not at all. Leaves are allocated from the
// chain itself: a leaf is in use if and only if the chain reaches it, so
// no crash leaks a leaf or gives one out twice. Recovery is idempotent; a
// crash during Open is recovered by the next Open. A header of another
// kind is ErrBadFormat, a zero magic ErrNoTree.
//
// # Damaged media
//
// Open checks the header (its CRC), the log line, every leaf of the chain
// (Check lists what) and the chain against the back links and the mark
// (the highest leaf ever given out): the damage it finds is ErrCorrupt
// and nothing is returned. Not every damage can be found: the leaves keep
// no checksum (a Put stores one 8-byte word, the commit, and a checksum
// would need a second):
//
//	damage                                 what it costs
//	header fields, CRC, log line, mark     ErrCorrupt at Open
//	a leaf's next, lo, back link           ErrCorrupt at Open (a next that skips or cuts off
//	                                         leaves names every leaf it made unreachable)
//	a fingerprint; a key outside its leaf  ErrCorrupt at Open
//	the area shorter than the header says  ErrTooSmall at Open
//	the header's magic word zeroed         ErrNoTree: what a crash inside Create leaves
//	a value                                NOT DETECTED: Get and Scan return the damaged value
//	a bitmap bit                           NOT DETECTED: a cleared bit drops its key, a set bit
//	                                         brings back the key its slot held before (a deleted key)
//	a key whose new fingerprint matches    NOT DETECTED: 1 in 256 damaged keys (inside the
//	  its old one                            leaf's range) reads as another key
//
// TestCampaign (campaign_test.go) draws such damage and asserts that all
// else is found; the README has a larger run.
//
// # Poisoned media, failed syncs
//
// Every operation runs under persist.Guard: unreadable media (poison, a
// file truncated under its mapping) is a *persist.MediaError
// (persist.ErrMedia, matching ErrCorrupt) for the operation that touched
// it, never a dead process; the other leaves go on serving.
//
//	what is unreadable                      what it costs
//	the header's page (header, micro logs,  Open and Create are ErrMedia
//	  the head leaf)
//	a leaf's keys (its first line reads)    its key range [its lower bound, the next leaf's): Get, Put,
//	                                          Delete of those keys ErrMedia, a scan stops there; the
//	                                          rest is served and changes
//	a leaf's first line                     the chain goes on at the leaf whose back link names it:
//	                                          the keys between the last key read before it and that
//	                                          leaf's lower bound are lost (ErrMedia). When no leaf can be
//	                                          found so (the leaf was the last, or its successor is
//	                                          unreadable too) the chain is cut: the keys above are lost
//	                                          and splits are refused (the leaves past the cut cannot be
//	                                          told from free ones)
//	a leaf a set micro log names (a crash  Open is ErrMedia: recovery cannot finish the split
//	  in its split or free)                   or the free
//	a page poisoned while the tree is open  the operations that touch it are ErrMedia, nothing else
//
// Lost lists the key ranges Open lost, Poisoned the area's bytes the region
// knows to be bad; Check reports the damage. After a failed sync
// (persist.ErrSyncFailed) every change returns that error before it
// writes: none is acknowledged after it.
//
// # Concurrency
//
// All methods may run concurrently from many goroutines, except Check,
// which must not run concurrently with anything that changes the tree.
// Close may run while other methods do: it waits for the changes in
// flight, after which nothing writes to the area and every call returns
// ErrClosed (reads in flight finish; close the region only when they
// have returned). The scheme:
//
//   - Every leaf has a version lock in DRAM: writers take it (odd while
//     held, advanced on release); readers take no lock: they read the
//     version, the leaf and the version again, and retry if it moved or
//     was odd.
//   - Inner nodes are copy-on-write: a split or a free builds new copies
//     of the nodes on its path and publishes the new root with one atomic
//     store; lookups run lock-free on whatever root they loaded. Each leaf
//     also keeps its key range in DRAM, checked under its version, so a
//     lookup that followed a root from before a split or free notices and
//     starts again.
//   - Splits and frees (and the leaf allocator and the micro logs) are
//     serialized by one mutex, taken after the leaf locks they need (in
//     chain order), so they never deadlock; inserts into leaves with room,
//     updates and deletes take only their leaf's lock.
//
// GetBatch is a sequence of linearizable Gets, PutBatch of Puts (the batch
// is neither atomic nor isolated); Scan and Iter read each leaf as it was
// at one instant, in ascending key order.
//
// # Bad input
//
// Bad options are ErrInvalid; an area too small for two leaves is
// ErrTooSmall; a split with no free leaf is ErrFull (the tree is unchanged
// and still serves Get, Scan, updates and Delete); a tree or region that
// was closed is ErrClosed (or an error matching persist.ErrClosed); a
// change in a read-only region is ErrReadOnly; the same area opened twice
// is persist.ErrBusy (the region's Claim). The region must not be grown
// (Region.Grow) while the tree is open.
package fptree
