package kv

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// extend allocates the n bytes at off of segment g's file (fallocate: a
// full file system is an error here, never a SIGBUS at a later store) and
// faults them in (MADV_POPULATE_WRITE; where the kernel lacks it, a read
// of each page maps it).
func (d *fileDevice) extend(g *segment, off, n int64) error {
	path := filepath.Join(d.dir, segName(g.idx))
	if err := d.hook(g.idx, "extend"); err != nil {
		return err
	}
	if d.faults != nil && d.faults.Alloc != nil { // (Options.Faults, as persist's own preallocations)
		if err := d.faults.Alloc(path, off, n); err != nil {
			return &os.PathError{Op: "fallocate", Path: path, Err: err}
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, off, n); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	b := g.mem[off : off+n]
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) != nil {
		return g.r.Guard(func() error {
			for i := 0; i < len(b); i += 4096 {
				_ = atomic.LoadUint32((*uint32)(unsafe.Pointer(&b[i])))
			}
			return nil
		})
	}
	return nil
}

// punch gives the n bytes at off of segment g's file back to the file
// system (they read as zeros), durably (fdatasync).
func (d *fileDevice) punch(g *segment, off, n int64) error {
	f, err := os.OpenFile(filepath.Join(d.dir, segName(g.idx)), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n); err != nil {
		return err
	}
	return unix.Fdatasync(int(f.Fd()))
}
