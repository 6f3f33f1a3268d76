//go:build pmdk

package pmdk

/*
#cgo LDFLAGS: -lpmemobj -lpmemblk -lpmemlog -lpmem
#include <stdlib.h>
#include "pmdk.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// PMem is the libpmem side: a file mapped with pmem_map_file and the C
// loops over it.
type PMem struct {
	base   unsafe.Pointer // C memory (the mapping)
	size   int
	isPMem bool

	copyOff C.size_t   // next CopyPersist destination
	line    C.uint64_t // next PersistSeq / Flush line counter
	x       C.uint64_t // PersistRand xorshift state
}

// MapPMem creates path (which must not exist) with size bytes through
// pmem_map_file, sparse: Prefault allocates and writes it.
func MapPMem(path string, size int) (*PMem, error) {
	if size < 64 {
		return nil, fmt.Errorf("pmdk: region of %d bytes", size)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var isPMem C.int
	p, err := C.pb_map(cpath, C.size_t(size), &isPMem)
	if p == nil {
		return nil, fmt.Errorf("pmdk: pmem_map_file %s: %w", path, err)
	}
	return &PMem{base: p, size: size, isPMem: isPMem != 0, x: seed}, nil
}

// persist is pmem_persist of [off, off+n).
func (p *PMem) persist(off, n int) {
	C.pb_persist((*C.char)(unsafe.Add(p.base, off)), C.size_t(n))
}

// IsPMem is what pmem_map_file said: 1 on a DAX file, or when
// PMEM_IS_PMEM_FORCE=1.
func (p *PMem) IsPMem() bool { return p.isPMem }

// Bytes returns the mapping.
func (p *PMem) Bytes() []byte { return unsafe.Slice((*byte)(p.base), p.size) }

// Close unmaps the region.
func (p *PMem) Close() error {
	if p.base == nil {
		return nil
	}
	rc, err := C.pb_unmap(p.base, C.size_t(p.size))
	p.base = nil
	if rc != 0 {
		return fmt.Errorf("pmdk: pmem_unmap: %w", err)
	}
	return nil
}

// CopyPersist runs n pmem_memcpy_persist of src to sequential destinations.
func (p *PMem) CopyPersist(src []byte, n int) {
	C.pb_copy_persist((*C.char)(p.base), C.size_t(p.size), cbytes(src), C.size_t(len(src)), C.long(n), &p.copyOff)
}

// PersistSeq runs n times an 8-byte store and pmem_persist on consecutive
// lines.
func (p *PMem) PersistSeq(n int) {
	C.pb_persist_seq((*C.char)(p.base), C.size_t(p.size), C.long(n), &p.line)
}

// PersistRand runs n times an 8-byte store and pmem_persist on random
// lines.
func (p *PMem) PersistRand(n int) {
	C.pb_persist_rand((*C.char)(p.base), C.size_t(p.size), C.long(n), &p.x)
}

// Flush runs n times a 1-byte increment and pmem_flush on consecutive
// lines, then one pmem_drain.
func (p *PMem) Flush(n int) {
	C.pb_flush((*C.char)(p.base), C.size_t(p.size), C.long(n), &p.line)
}

// Log is a libpmemlog pool.
type Log struct{ plp *C.PMEMlogpool }

// CreateLog creates a pmemlog pool of poolSize bytes at path and fills it
// once (4 KiB appends) so that every page is touched, then rewinds it.
func CreateLog(path string, poolSize int) (*Log, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	buf := make([]byte, 4096)
	plp, err := C.pb_log_create(cpath, C.size_t(poolSize), cbytes(buf), C.size_t(len(buf)))
	if plp == nil {
		return nil, fmt.Errorf("pmdk: pmemlog_create %s: %w", path, err)
	}
	return &Log{plp: plp}, nil
}

// Append runs n pmemlog_append of buf, rewinding the log when it is full.
func (l *Log) Append(buf []byte, n int) error {
	if rc, err := C.pb_log_append(l.plp, cbytes(buf), C.size_t(len(buf)), C.long(n)); rc != 0 {
		return fmt.Errorf("pmdk: pmemlog_append: %w", err)
	}
	return nil
}

// Close closes the pool.
func (l *Log) Close() { C.pmemlog_close(l.plp) }

// Blk is a libpmemblk pool.
type Blk struct {
	pbp  *C.PMEMblkpool
	next C.longlong
}

// CreateBlk creates a pmemblk pool of bsize-byte blocks and writes every
// block once.
func CreateBlk(path string, bsize, poolSize int) (*Blk, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	buf := make([]byte, bsize)
	pbp, err := C.pb_blk_create(cpath, C.size_t(bsize), C.size_t(poolSize), cbytes(buf))
	if pbp == nil {
		return nil, fmt.Errorf("pmdk: pmemblk_create %s: %w", path, err)
	}
	return &Blk{pbp: pbp}, nil
}

// Write runs n pmemblk_write of buf (one block) to sequential blocks.
func (b *Blk) Write(buf []byte, n int) error {
	if rc, err := C.pb_blk_write(b.pbp, cbytes(buf), C.long(n), &b.next); rc != 0 {
		return fmt.Errorf("pmdk: pmemblk_write: %w", err)
	}
	return nil
}

// Close closes the pool.
func (b *Blk) Close() { C.pmemblk_close(b.pbp) }

// Obj is a libpmemobj pool with a root object that transactions write.
type Obj struct {
	o   *C.pb_obj
	off C.uint64_t
}

// CreateObj creates a pmemobj pool and a root object of rootSize bytes.
func CreateObj(path string, poolSize, rootSize int) (*Obj, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	o, err := C.pb_obj_create(cpath, C.size_t(poolSize), C.size_t(rootSize))
	if o == nil {
		return nil, fmt.Errorf("pmdk: pmemobj_create %s: %w", path, err)
	}
	return &Obj{o: o}, nil
}

// Tx runs n transactions, each adding len(val) bytes of the root object
// to the undo log and storing val there, at sequential offsets.
func (o *Obj) Tx(val []byte, n int) error {
	if C.pb_obj_tx(o.o, cbytes(val), C.size_t(len(val)), C.long(n), &o.off) != 0 {
		return errors.New("pmdk: pmemobj transaction aborted")
	}
	return nil
}

// Close closes the pool.
func (o *Obj) Close() { C.pb_obj_close(o.o) }

// cbytes passes a Go byte slice to C for the duration of a call (the cgo
// rules allow it: the bytes hold no Go pointers).
func cbytes(b []byte) *C.char { return (*C.char)(unsafe.Pointer(unsafe.SliceData(b))) }
