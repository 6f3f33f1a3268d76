package sortio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
	"golang.org/x/sys/unix"
)

// mapped is a file the sorter reads or writes, mapped with persist. Every
// byte the sorter writes to it goes through Region.Copy with streaming
// stores, so on PMem (or tmpfs with BRAID_FORCE_PMEM=1) the output is
// flushed and fenced by the time Put returns; on an ordinary file persist
// falls back to msync of the pages written.
type Mapped struct {
	Path  string
	Label string          // how errors name it ("output OUT" for a temporary output)
	R     *persist.Region // nil for an empty file
	Data  []byte
	// sparse: the file was not preallocated; Put allocates the pages it
	// writes (and reports a full file system) before storing to them.
	Sparse bool
	// addr and size are where the file was mapped, kept after close to
	// locate a fault (ExplainFault).
	Addr uintptr
	Size int
}

// newMapped describes the mapping r of path.
func newMapped(path, label string, r *persist.Region, sparse bool) *Mapped {
	b := r.Bytes()
	return &Mapped{Path: path, Label: label, R: r, Data: b, Sparse: sparse,
		Addr: uintptr(unsafe.Pointer(unsafe.SliceData(b))), Size: len(b)}
}

// CreateMapped creates path (which must not exist) with size bytes.
//
// A full file system must be an error, never a SIGBUS on a store. On most
// file systems the file is preallocated (fallocate, cheap: extents). On
// tmpfs, where preallocating means allocating and zeroing every page on
// one thread, the file is left sparse when the kernel can populate
// mappings (MADV_POPULATE_WRITE): Put then allocates the pages of each
// piece before it stores to them, in the writer pool, in parallel, and a
// failure is an ErrNoSpace error. The free space is checked up front
// either way.
func CreateMapped(path string, size int64, force bool) (*Mapped, error) {
	return CreateMappedAs(path, path, size, force)
}

// CreateMappedAs is CreateMapped with errors that name the file as label
// (the final name of an output written under a temporary one).
func CreateMappedAs(path, label string, size int64, force bool) (*Mapped, error) {
	return CreateMappedOn(path, label, size, force, nil, nil)
}

// CreateMappedOn is CreateMappedAs on an emulated device (nil: none, or
// BRAID_DEVICE's), with the faults injected into the mapping (nil: none;
// persist.Options.Faults).
func CreateMappedOn(path, label string, size int64, force bool, dev *device.Device, faults *persist.Faults) (*Mapped, error) {
	if size == 0 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		return &Mapped{Path: path}, f.Close()
	}
	dir := filepath.Dir(path)
	if free, err := FreeSpace(dir); err == nil && free < size {
		return nil, &DetailError{Sentinel: ErrNoSpace, Msg: fmt.Sprintf("sort: %s needs %d bytes, %s has %d free", label, size, dir, free)}
	}
	sparse := CanPopulate() && DirOnTmpfs(dir)
	r, err := persist.Map(path, &persist.Options{Size: size, Create: true, Exclusive: true, ForcePMem: force,
		NoPrefault: true, Sparse: sparse, Device: dev, Faults: faults})
	if err != nil {
		return nil, fmt.Errorf("create %s (%d bytes): %w", label, size, err)
	}
	return newMapped(path, label, r, sparse), nil
}

// OpenMapped maps an existing file read-only. Its errors name the file.
func OpenMapped(path string) (*Mapped, error) { return OpenMappedOn(path, nil, nil) }

// OpenMappedOn is OpenMapped on an emulated device (nil: none, or
// BRAID_DEVICE's), with the faults injected into the mapping (nil: none).
func OpenMappedOn(path string, dev *device.Device, faults *persist.Faults) (*Mapped, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: PathCause(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &FileError{Path: path, Err: errNotRegular}
	}
	if st.Size() == 0 {
		return &Mapped{Path: path}, nil
	}
	// Not prefaulted: the reader pool faults the pages in as it reads
	// them, in parallel, instead of one MAP_POPULATE thread up front.
	r, err := persist.Map(path, &persist.Options{ReadOnly: true, NoPrefault: true, Device: dev, Faults: faults})
	if err != nil {
		return nil, fmt.Errorf("sort: map %s: %w", path, err)
	}
	return newMapped(path, "", r, false), nil
}

// errNotRegular refuses to map a pipe, a device or a socket.
var errNotRegular = &DetailError{Sentinel: ErrInvalid, Msg: "not a regular file: the sorter maps its input, which needs a regular file (write a stream to a file first)"}

func (m *Mapped) Bytes() []byte { return m.Data }

// Put copies src to offset off of the file with streaming stores and makes
// it durable (one fence per call: calls are chunk-sized).
func (m *Mapped) Put(off int64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if off < 0 || off+int64(len(src)) > int64(len(m.Data)) {
		return fmt.Errorf("sort: write of %d bytes at %d outside %s (%d bytes)", len(src), off, m.Path, len(m.Data))
	}
	// Map the destination's pages first, in one call: cheaper than taking
	// a page fault on every 4 KiB (and harmless where they are mapped
	// already). In a sparse file this allocates them, and a failure is a
	// full file system; in a preallocated one the stores would fault the
	// pages in anyway, so errors do not matter there.
	lo := off &^ (pageSize - 1)
	hi := min((off+int64(len(src))+pageSize-1)&^(pageSize-1), int64(len(m.Data)))
	if err := Populate(m.Data[lo:hi]); err != nil && m.Sparse {
		return m.populateError(lo, hi-lo, err)
	}
	return m.R.Copy(m.Data[off:off+int64(len(src))], src, persist.NonTemporal)
}

// populateError is the error for n bytes at off of a sparse file whose
// pages could not be allocated: an ErrNoSpace error. tmpfs fails
// MADV_POPULATE_WRITE with EFAULT when it is full (the fault would be a
// SIGBUS), with ENOMEM when a memory limit refuses the pages; the file
// system's free space, read now, tells which it was. A full file system
// also matches syscall.ENOSPC.
func (m *Mapped) populateError(off, n int64, err error) error {
	dir := filepath.Dir(m.Path)
	name := m.Label
	if name == "" || name == m.Path {
		name = m.Path
	} else {
		name += " (" + m.Path + ")"
	}
	free, ferr := FreeSpace(dir)
	room := "its free space unknown"
	if ferr == nil {
		room = fmt.Sprintf("%d bytes free", free)
	}
	full := errors.Is(err, unix.ENOSPC) || (ferr == nil && free < n) || (ferr != nil && errors.Is(err, unix.EFAULT))
	if full {
		return &noSpaceError{fmt.Sprintf("sort: no space left on device for %s: cannot allocate %d bytes at offset %d (%s has %s)",
			name, n, off, dir, room)}
	}
	return &DetailError{Sentinel: ErrNoSpace, Msg: fmt.Sprintf("sort: cannot allocate %d bytes at offset %d of %s: the file system refused the pages (%v) though %s has %s (out of memory, or a size limit?)",
		n, off, name, err, dir, room)}
}

// noSpaceError is a full file system: ErrNoSpace and syscall.ENOSPC.
type noSpaceError struct{ msg string }

func (e *noSpaceError) Error() string   { return e.msg }
func (e *noSpaceError) Unwrap() []error { return []error{ErrNoSpace, unix.ENOSPC} }

// pageSize is the granularity of populating a mapping.
const pageSize = 4096

// Sync makes the whole file durable.
func (m *Mapped) Sync() error {
	if m.R == nil {
		return nil
	}
	return m.R.Sync()
}

func (m *Mapped) Close() error {
	if m.R == nil {
		return nil
	}
	err := m.R.Close()
	m.R, m.Data = nil, nil
	return err
}
