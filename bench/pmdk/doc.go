// Package pmdk measures braid's persist package against PMDK (libpmem
// 1.12 and its pool libraries) in one process, with the same access
// patterns on both sides, so that the two can be compared figure by figure.
//
// Everything but this file is behind the pmdk build tag: the package
// needs cgo and libpmem-dev, libpmemlog-dev, libpmemblk-dev and
// libpmemobj-dev, which `make test` must not require. Run it with
//
//	make bench-pmdk
//
// which installs the Debian packages when they are missing, checks that
// both sides do the same work (the tests), runs
//
//	PMEM_IS_PMEM_FORCE=1 go test -tags pmdk -run '^$' -bench . -benchtime 1s -count 1 ./bench/pmdk/
//
// in PMDK_RUNS (default 5) separate processes — each maps its regions
// anew, so where one process's memory happened to land does not bias
// every run — and prints braid against libpmem side by side, medians over
// the runs (package compare).
//
// Side by side (BenchmarkX/{braid,libpmem}/...):
//
//   - CopyPersist/<size>: copy size bytes to sequential destinations in a
//     1 GiB region on /dev/shm, wrapping at its end, each copy durable on
//     return: persist.Region.Copy with default flags against
//     pmem_memcpy_persist.
//   - PersistLine/{seq,rand}: an 8-byte store and a persist of its line, on
//     consecutive or random lines: Region.Persist against pmem_persist.
//   - Flush: a 1-byte increment and a flush of its line without a fence:
//     Region.Flush against pmem_flush (one drain at the end of the batch).
//
// PMDK reference figures for the packages named, same harness:
//
//   - PMDKLogAppend/<size>: pmemlog_append of 64 B to 4 KiB (walog).
//   - PMDKBlkWrite/4096: pmemblk_write of 4 KiB blocks, sequential block
//     numbers (pagelog).
//   - PMDKObjTx/16: a libpmemobj transaction that adds a 16-byte range to
//     the undo log and stores into it (cow, fam).
//
// Fairness: both regions are created sparse on /dev/shm and pre-faulted
// together before any timing (Prefault) — every page written once and
// persisted, alternating between the regions every 2 MiB so that both get
// their memory from the same stretch of the allocator — because memory
// touched for the first time is several times slower on the VMs braid is
// developed on, and where it lands moves the figures by a few percent. The
// loop of each benchmark runs
// in C for libpmem (one cgo call per b.N batch) and in Go for braid, with
// the same per-iteration work, so cgo call overhead does not count.
// libpmem runs with PMEM_IS_PMEM_FORCE=1 (set by the test binary when the
// environment does not already say so) and braid with ForcePMem: both take
// the flush-instruction path on tmpfs.
package pmdk
