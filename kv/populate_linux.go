package kv

import "golang.org/x/sys/unix"

// populate maps the pages of b (page-aligned, part of a segment's
// mapping) in one call instead of a page fault per page: recovery reads
// the logs of a store that was mapped without MAP_POPULATE. An error
// (a kernel before 5.14) leaves the faults to do it.
func populate(b []byte) { _ = unix.Madvise(b, unix.MADV_POPULATE_READ) }
