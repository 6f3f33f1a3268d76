// Package kvpeers runs braid's YCSB driver (internal/ycsb) on kv and on
// Go's stores side by side: Badger v4 (SyncWrites), Pebble v2 (Sync on
// every write), bbolt (NoSync false: fdatasync per update transaction) and
// goleveldb (Sync on every write), one adapter each behind ycsb.DB, all
// opened on the same kind of directory (tmpfs under /dev/shm). It is a
// module of its own, so that make test never downloads or builds the
// peers; `make bench-kv` runs cmd/kvcompare. A contract test checks every
// adapter against the same put/get/delete/scan round trips.
package kvpeers
