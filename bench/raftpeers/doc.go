// Package raftpeers sets braid's raftstore beside the log stores
// hashicorp/raft users run today: hashicorp/raft-boltdb/v2 (bbolt, an
// fsync per StoreLogs) and hashicorp/raft-wal (segment files, an fsync
// per StoreLogs), one constructor each (Peers), all on the same kind of
// directory (tmpfs under /dev/shm). It is a module of its own so that
// make test never downloads or builds the peers; `make bench-raft` runs
// its contract test and cmd/raftcompare.
package raftpeers
