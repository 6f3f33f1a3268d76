//go:build linux

package persist

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// osMapping is what Close and Grow need to undo or redo a mapping.
type osMapping struct {
	file   *os.File // nil for anonymous and simulated regions
	mapped bool     // mem came from mmap
	sparse bool
}

var pageSize = os.Getpagesize()

// fallocate is unix.Fallocate; the tests replace it to make a full file
// system on demand.
var fallocate = unix.Fallocate

// Map maps the file at path. With Options.Create it is created (Size bytes,
// preallocated, pre-faulted, and the file and its directory synced so the
// empty file itself survives a crash). The kernel is asked for MAP_SYNC
// first: when a DAX file system grants it the region is real PMem and
// flushes go straight to the CPU; otherwise the mapping is shared and
// durability comes from msync, unless the PMem path is forced
// (Options.ForcePMem or BRAID_FORCE_PMEM=1).
//
// A mapped file that shrinks under the mapping (another program truncates
// it), or a sparse file on a full file system, makes a load or store past
// the file's end fault with SIGBUS, which kills the program unless the
// access runs under Guard. What is guaranteed:
//
//   - Map preallocates the files it creates, opens for writing or grows
//     (unless Options.Sparse), so a full disk is an error here or at Grow,
//     never a fault later.
//   - Nothing stops another program from truncating a file while it is
//     mapped (Linux has no mandatory lock). An access past the new end,
//     run under Guard, returns a *MediaError (errors.Is ErrMedia) naming
//     the file and the offset; the bytes still inside the file read and
//     write as before. braid reads every mapped file a user can truncate
//     under Guard: sort's inputs, run files and outputs, and the records
//     validate and gen read and write.
//   - Unguarded, the same access is a fatal runtime fault.
//
// A full device is an ErrFull error (a file Map created is removed). On a
// DAX file Map reads the device's bad blocks and reports the file ranges
// they cover (Info.Poisoned, Region.Poisoned).
func Map(path string, opts *Options) (*Region, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty path", ErrInvalid)
	}
	o := &Options{}
	if opts != nil {
		o = opts
	}
	c, err := resolve(o)
	if err != nil {
		return nil, err
	}
	f, created, st, err := openFile(path, o)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Region, error) {
		f.Close()
		if created {
			os.Remove(path)
		}
		return nil, err
	}
	size, err := mapSize(path, o.Size, st.Size(), created)
	if err != nil {
		return fail(err)
	}
	prealloc, err := prepareFile(f, path, size, o, created)
	if err != nil {
		return fail(err)
	}
	mem, dax, err := mapFile(f, size, o)
	if err != nil {
		return fail(fmt.Errorf("persist: mmap %s (%d bytes): %w", path, size, err))
	}
	eadr := dax && platformEADR(eadrGlob)
	mode, forced := fileMode(dax, eadr, c)
	if c.count && mode == ModeMsync {
		unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)))
		return fail(fmt.Errorf("%w: traffic counters (Options.Counters) on %s, which is made durable with msync: force the PMem path (ForcePMem) or drop them", ErrUnsupported, path))
	}
	info := Info{Path: path, Mapping: "shared", PMem: dax, EADR: eadr, Forced: forced,
		ReadOnly: o.ReadOnly, Prealloc: prealloc, Volatile: onTmpfs(f)}
	if dax {
		info.Mapping = "dax"
	}
	r := newRegion(mem, mode, c, info)
	r.readOnly = o.ReadOnly
	r.os = osMapping{file: f, mapped: true, sparse: o.Sparse}
	if dax {
		// Bad blocks the device lists are known up front (Poisoned);
		// when the list cannot be read or placed in the file none are,
		// and a load from one is still a fault that Guard catches.
		if bad, _ := fileBadRanges(sysRoot, f, size); len(bad) > 0 {
			r.poisons().bad = bad
		}
	}
	mappedHook(r)
	return r, nil
}

// openFile opens path as Map's options say: created exclusively with
// Create (which needs a Size), else an existing file (with Create and not
// Exclusive, one that is there already), read-only or read-write. The file
// must be a regular one.
func openFile(path string, o *Options) (f *os.File, created bool, st fs.FileInfo, err error) {
	flag := os.O_RDWR
	if o.ReadOnly {
		flag = os.O_RDONLY
	}
	if o.Create {
		if o.Size == 0 {
			return nil, false, nil, fmt.Errorf("%w: creating %s needs Options.Size", ErrInvalid, path)
		}
		perm := o.Perm
		if perm == 0 {
			perm = 0o644
		}
		f, err = os.OpenFile(path, flag|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			created = true
		} else if errors.Is(err, fs.ErrExist) && !o.Exclusive {
			f, err = os.OpenFile(path, flag, 0)
		}
	} else {
		f, err = os.OpenFile(path, flag, 0)
	}
	if err != nil {
		return nil, false, nil, fmt.Errorf("persist: %w", err) // "persist: open PATH: cause"
	}
	if st, err = f.Stat(); err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file (%v)", ErrUnsupported, path, st.Mode().Type())
	} else if err != nil {
		err = fmt.Errorf("persist: %w", err)
	}
	if err != nil {
		f.Close()
		if created {
			os.Remove(path)
		}
		return nil, false, nil, err
	}
	return f, created, st, nil
}

// mapSize is the size rule of Map: a file it created gets want bytes; with
// want 0 an existing file is mapped whole (have bytes, not empty, at most
// an int); otherwise the file must hold the want bytes asked (ErrTooSmall).
func mapSize(path string, want, have int64, created bool) (int64, error) {
	switch {
	case created:
		return want, nil
	case want == 0 && have == 0:
		return 0, fmt.Errorf("%w: %s is empty; give Options.Size to map it", ErrInvalid, path)
	case want == 0 && int64(int(have)) != have:
		return 0, fmt.Errorf("%w: %s is %d bytes, more than an int", ErrInvalid, path, have)
	case want == 0:
		return have, nil
	case want > have:
		return 0, fmt.Errorf("%w: %s is %d bytes, %d asked", ErrTooSmall, path, have, want)
	}
	return want, nil
}

// prepareFile sizes a created file, preallocates what will be mapped
// (unless read-only or Sparse; a file system without fallocate is not an
// error), and syncs a created file and its directory.
func prepareFile(f *os.File, path string, size int64, o *Options, created bool) (prealloc bool, err error) {
	if created {
		if err := f.Truncate(size); err != nil {
			return false, fmt.Errorf("persist: size %s: %w", path, err)
		}
	}
	if !o.ReadOnly && !o.Sparse {
		if err := allocate(f, path, 0, size, o.Faults); err == nil {
			prealloc = true
		} else if !errors.Is(err, unix.EOPNOTSUPP) {
			return false, err
		}
	}
	if created {
		if err := f.Sync(); err != nil {
			return false, fmt.Errorf("persist: sync %s: %w", path, err)
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			return false, err
		}
	}
	return prealloc, nil
}

// allocate preallocates the n bytes at off of f (fallocate). A full
// device is an ErrFull error that also wraps the system's.
func allocate(f *os.File, path string, off, n int64, faults *Faults) error {
	err := allocFault(faults, path, off, n)
	if err == nil {
		err = fallocate(int(f.Fd()), 0, off, n)
	}
	switch {
	case err == nil || errors.Is(err, unix.EOPNOTSUPP):
		return err
	case errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT):
		return fmt.Errorf("%w: cannot preallocate %d bytes at offset %d of %s: %w", ErrFull, n, off, path, err)
	}
	return fmt.Errorf("persist: preallocate %d bytes at offset %d of %s: %w", n, off, path, err)
}

// mapFile maps size bytes of f, with MAP_SYNC when the file system grants
// it (dax: real PMem), else a shared mapping.
func mapFile(f *os.File, size int64, o *Options) (mem []byte, dax bool, err error) {
	prot := unix.PROT_READ
	if !o.ReadOnly {
		prot |= unix.PROT_WRITE
	}
	populate := 0
	if !o.NoPrefault {
		populate = unix.MAP_POPULATE
	}
	// MAP_SYNC is probed on one page first, at an address of the kernel's
	// choosing: a MAP_FIXED mapping that fails may already have unmapped
	// the range it was to replace (mmap(2): "the old mapping may be lost"),
	// and another thread (the Go runtime, the race detector) can be given
	// that hole before the reservation around it is released — which the
	// release would then unmap under it (on tmpfs, under the race
	// detector: commit 95715ba).
	dax = syncSupported(int(f.Fd()), prot)
	if dax {
		mem, err = mapAligned(int(f.Fd()), int(size), prot, unix.MAP_SHARED_VALIDATE|unix.MAP_SYNC|populate)
		if err == nil {
			return mem, true, nil
		}
	}
	mem, err = mapAligned(int(f.Fd()), int(size), prot, unix.MAP_SHARED|populate)
	return mem, false, err
}

// fileMode is the durability mode of a file mapping, decided from what
// the mapping is and the resolved options alone (TestFileMode has the
// table): a DAX mapping flushes with instructions, or only fences on an
// eADR platform or with FenceOnly; a forced mapping of an ordinary file
// likewise (forced is then true); any other file is made durable with
// msync, and so is a flush mapping in a build without flush instructions.
func fileMode(dax, eadr bool, c config) (mode Mode, forced bool) {
	switch {
	case dax:
		mode = ModeFlush
		if c.fenceOnly || eadr {
			mode = ModeEADR
		}
	case c.force:
		forced = true
		mode = ModeFlush
		if c.fenceOnly {
			mode = ModeEADR
		}
	default:
		mode = ModeMsync
	}
	if mode == ModeFlush && c.flush == FlushAuto {
		// No flush instruction in this build (the portable twin): the
		// kernel's msync is the only way to make the file durable.
		mode = ModeMsync
	}
	return mode, forced
}

// Anonymous maps size bytes of anonymous memory. Nothing in it survives the
// process, but its flushes and fences are the PMem ones (ModeFlush, or
// ModeEADR with FenceOnly): the region for tests and benchmarks. Only the
// flush, streaming-store and fence options apply.
func Anonymous(size int, opts *Options) (*Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%w: anonymous region of %d bytes", ErrInvalid, size)
	}
	c, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	mem, err := mapAligned(-1, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("persist: mmap %d anonymous bytes: %w", size, err)
	}
	if size >= hugeAlign {
		// Transparent huge pages where the system allows them: fewer TLB
		// misses on large sequential writes.
		unix.Madvise(mem, unix.MADV_HUGEPAGE)
	}
	if opts == nil || !opts.NoPrefault {
		if unix.Madvise(mem, unix.MADV_POPULATE_WRITE) != nil {
			for i := 0; i < len(mem); i += pageSize {
				mem[i] = 0
			}
		}
	}
	mode := ModeFlush
	if c.fenceOnly || c.flush == FlushAuto {
		// Nothing to write back to, or nothing to write back with (the
		// portable build): fences only.
		mode = ModeEADR
	}
	r := newRegion(mem, mode, c, Info{Mapping: "anonymous", Volatile: true, Prealloc: true})
	r.os = osMapping{mapped: true}
	return r, nil
}

// syncSupported reports whether fd can be mapped with MAP_SYNC (a DAX
// file system), by mapping its first page with it, without MAP_FIXED.
func syncSupported(fd, prot int) bool {
	p, err := unix.MmapPtr(fd, 0, nil, uintptr(pageSize), prot, unix.MAP_SHARED_VALIDATE|unix.MAP_SYNC)
	if err != nil {
		return false
	}
	unix.MunmapPtr(p, uintptr(pageSize))
	return true
}

// hugeAlign is the alignment of large mappings: with 2 MiB-aligned
// addresses a DAX file system can map PMem with huge pages, and anonymous
// memory can use transparent huge pages.
const hugeAlign = 2 << 20

// mapAligned maps length bytes of fd (anonymous when fd is -1) at an
// address aligned to hugeAlign when length is at least that: it reserves
// length+hugeAlign bytes of address space, maps at the aligned address
// inside the reservation, and returns the rest.
func mapAligned(fd, length, prot, flags int) ([]byte, error) {
	if length < hugeAlign {
		p, err := unix.MmapPtr(fd, 0, nil, uintptr(length), prot, flags)
		if err != nil {
			return nil, err
		}
		return unsafe.Slice((*byte)(p), length), nil
	}
	span := uintptr(length + hugeAlign)
	res, err := unix.MmapPtr(-1, 0, nil, span, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	head := (hugeAlign - uintptr(res)%hugeAlign) % hugeAlign
	at := unsafe.Add(res, head)
	p, err := unix.MmapPtr(fd, 0, at, uintptr(length), prot, flags|unix.MAP_FIXED)
	if err != nil {
		// The failed MAP_FIXED may have unmapped [at, at+length) already,
		// and that hole may be someone else's mapping by now: release only
		// the parts of the reservation around it.
		if head > 0 {
			unix.MunmapPtr(res, head)
		}
		if used := head + (uintptr(length)+uintptr(pageSize)-1)&^uintptr(pageSize-1); used < span {
			unix.MunmapPtr(unsafe.Add(res, used), span-used)
		}
		return nil, err
	}
	if head > 0 {
		unix.MunmapPtr(res, head)
	}
	used := head + (uintptr(length)+uintptr(pageSize)-1)&^uintptr(pageSize-1)
	if used < span {
		unix.MunmapPtr(unsafe.Add(res, used), span-used)
	}
	return unsafe.Slice((*byte)(p), length), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("persist: open directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("persist: sync directory %s: %w", dir, err)
	}
	return nil
}

func onTmpfs(f *os.File) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &st) != nil {
		return false
	}
	t := uint32(st.Type) // int32 on some platforms, int64 on others
	return t == unix.TMPFS_MAGIC || t == unix.RAMFS_MAGIC
}

// msync syncs the pages of [off, off+n). A failure fails the region for
// good (ErrSyncFailed): the kernel may have dropped the pages.
func (r *Region) msync(off, n int) error {
	if err := r.Failed(); err != nil {
		return err
	}
	lo, hi := pageSpan(off, n)
	if hi > r.size {
		hi = r.size
	}
	err := r.syncFault(lo, hi-lo)
	if err == nil {
		err = unix.Msync(r.mem[lo:hi], unix.MS_SYNC)
	}
	if err != nil {
		return r.fail(&SyncError{Path: r.info.Path, Lo: lo, Hi: hi, Err: err})
	}
	return nil
}

func (m *osMapping) unmap(mem []byte) error {
	var first error
	if m.mapped && mem != nil {
		if err := unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem))); err != nil {
			first = fmt.Errorf("persist: munmap: %w", err)
		}
	}
	if m.file != nil {
		if err := m.file.Close(); err != nil && first == nil {
			first = fmt.Errorf("persist: close: %w", err)
		}
	}
	return first
}

// Grow enlarges the region to size bytes: the file is extended (and
// preallocated unless the region was mapped Sparse) and remapped. The
// mapping may move: every slice of the old Bytes() is invalid afterwards,
// which is why structures keep offsets, not pointers. Not for simulated or
// read-only regions.
func (r *Region) Grow(size int) error {
	if r.closed.Load() {
		return ErrClosed
	}
	switch {
	case r.kind == kSim && r.Domain() != nil:
		return fmt.Errorf("%w: Grow of a simulated region", ErrUnsupported)
	case r.readOnly:
		return ErrReadOnly
	case size <= r.size:
		return fmt.Errorf("%w: Grow to %d bytes, region already has %d", ErrInvalid, size, r.size)
	}
	if f := r.os.file; f != nil {
		if err := f.Truncate(int64(size)); err != nil {
			return fmt.Errorf("persist: grow %s: %w", r.info.Path, err)
		}
		if !r.os.sparse {
			err := allocate(f, r.info.Path, int64(r.size), int64(size-r.size), r.faults)
			if err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
				f.Truncate(int64(r.size))
				return err
			}
		}
	}
	repoison, err := r.liftPoison() // mremap moves one mapping, not pieces of several protections
	if err != nil {
		return err
	}
	p, err := unix.MremapPtr(unsafe.Pointer(unsafe.SliceData(r.mem)), uintptr(r.size), nil, uintptr(size), unix.MREMAP_MAYMOVE)
	if err != nil {
		if f := r.os.file; f != nil {
			f.Truncate(int64(r.size)) // back to the size still mapped
		}
		return errors.Join(fmt.Errorf("persist: mremap to %d bytes: %w", size, err), repoison(r.memBase()))
	}
	mem := unsafe.Slice((*byte)(p), size)
	r.mem, r.size, r.base = mem, size, uintptr(ptrOf(mem))
	r.info.Size = size
	return repoison(p)
}
