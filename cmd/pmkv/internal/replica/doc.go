// Package replica runs pmkv serve as a member of a hashicorp/raft group:
// the raft log and stable store on braid (package raftstore), the kv
// store as the state machine, snapshots streamed from the store.
//
// # How a command runs
//
//	command on          write (SET, INCR, EXEC...)                      read (GET, SCAN...)
//	the leader          computed under the server's key locks, then     a quorum confirms the leadership after
//	                    raft.Apply of its puts and deletes; answered    the read arrived (raft.VerifyLeader,
//	                    once this node's store applied them             shared by concurrent reads), then the
//	                                                                    local store answers
//	a new leader        TRYAGAIN until it applied its hello entry       TRYAGAIN, likewise
//	                    (so every entry of earlier terms too)
//	a follower          READONLY ... Leader: HOST:PORT (nothing ran)    NOTLEADER ... Leader: HOST:PORT; with
//	                                                                    StaleReads its own store (may be behind)
//
// A read-modify-write is computed once, on the leader: the server holds
// the locks of its keys from its read to its write being applied here,
// and every earlier write to those keys was applied here before it
// was acknowledged (or, from an earlier term, before the hello). The log
// holds only the result, blind puts and deletes with absolute deadlines,
// so applying an entry is deterministic and idempotent: a node restarts
// without restoring its snapshot (raft replays the log from the
// snapshot's index over the store), and a snapshot read while entries go
// on being applied is exact once the entries after its index are applied.
// A write whose outcome the leader could not learn (it lost the
// leadership or stopped first) is an ERR saying it may or may not have
// been applied.
//
// # Faults
//
// An entry the store cannot take for a reason of its own (full, failed
// media) stops the node (ErrStopped on every command): raft would apply
// the next entries over a store that missed it. Restart it: raft replays
// the log from its last snapshot. A restore interrupted by a crash is
// redone at the next start (a marker file stands while one runs). A log
// entry or snapshot that does not decode is ErrCorrupt, never applied.
// Deadlines are absolute: each node expires keys by its own clock.
package replica
