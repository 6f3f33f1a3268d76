//go:build pmdk

package blkref

/*
#cgo LDFLAGS: -lpmemblk
#include <libpmemblk.h>
#include <stdlib.h>

// One cgo call per batch: the call overhead is not charged to PMDK.
static int blkref_write(PMEMblkpool *p, const char *buf, const long long *bn, int n) {
	for (int i = 0; i < n; i++)
		if (pmemblk_write(p, buf, bn[i]) != 0)
			return -1;
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Pool is a libpmemblk pool.
type Pool struct{ p *C.PMEMblkpool }

// Create makes a pool of bsize-byte blocks in a new file of size bytes.
func Create(path string, bsize, size int) (*Pool, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	p, err := C.pmemblk_create(cp, C.size_t(bsize), C.size_t(size), 0o644)
	if p == nil {
		return nil, fmt.Errorf("pmemblk_create %s: %w", path, err)
	}
	return &Pool{p: p}, nil
}

// Blocks is the number of blocks.
func (p *Pool) Blocks() int { return int(C.pmemblk_nblock(p.p)) }

// Write writes buf (one block) to each block number of bns in turn.
func (p *Pool) Write(buf []byte, bns []int64) error {
	if rc, err := C.blkref_write(p.p, (*C.char)(unsafe.Pointer(&buf[0])), (*C.longlong)(unsafe.Pointer(&bns[0])), C.int(len(bns))); rc != 0 {
		return fmt.Errorf("pmemblk_write: %w", err)
	}
	return nil
}

// Close closes the pool.
func (p *Pool) Close() { C.pmemblk_close(p.p) }
