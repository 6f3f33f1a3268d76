package persist

import "fmt"

// SyncError is a failed sync of a region: errors.Is(err, ErrSyncFailed)
// holds, and the system's error (errors.Is(err, syscall.EIO)).
type SyncError struct {
	Path   string // the region's file ("" for a simulated region)
	Lo, Hi int    // the byte range being synced
	Err    error  // the system's error
}

func (e *SyncError) Error() string {
	name := e.Path
	if name == "" {
		name = "the region"
	}
	return fmt.Sprintf("%s: msync of bytes %d to %d of %s: %v (the region has failed: what was not durable before may be lost, and every later durability call returns this error)",
		ErrSyncFailed, e.Lo, e.Hi, name, e.Err)
}

// Unwrap returns ErrSyncFailed and the system's error.
func (e *SyncError) Unwrap() []error { return []error{ErrSyncFailed, e.Err} }

// Failed returns the error of the region's first failed sync, or nil: once
// it is set, every durability call returns it (ErrSyncFailed).
func (r *Region) Failed() error {
	if e := r.failed.Load(); e != nil {
		return e
	}
	return nil
}

// fail records a failed sync and returns the region's failure: the first
// one recorded, whichever call saw it.
func (r *Region) fail(e *SyncError) error {
	r.failed.CompareAndSwap(nil, e)
	return r.failed.Load()
}

// Faults are failures injected into persist's calls to the platform, for
// tests of what a structure does when the platform fails it (fault
// injection). They belong to the regions mapped with them
// (Options.Faults): no other region sees them. A nil function injects
// nothing. The functions may be called from any goroutine that uses the
// region.
type Faults struct {
	// Sync is called before each sync of the region — msync of a file in
	// msync mode (Flush, Persist, Copy, Set, Sync), and the write-back of
	// a simulated region in msync mode — with the region and the byte
	// range. An error it returns is that sync's: the sync is not done (as
	// if the kernel dropped the pages) and the region fails
	// (ErrSyncFailed).
	Sync func(r *Region, off, n int) error
	// Alloc is called before each preallocation of Map and Grow with the
	// file and the byte range. An error it returns is fallocate's:
	// unix.ENOSPC makes a full device (ErrFull).
	Alloc func(path string, off, n int64) error
	// Mapped is called with the region Map is about to return: a test
	// poisons ranges of a file a structure maps by itself (Region.Poison),
	// passing the Faults through the structure's options.
	Mapped func(r *Region)
}

// syncFault asks the region's Sync hook about a sync of [off, off+n).
func (r *Region) syncFault(off, n int) error {
	if f := r.faults; f != nil && f.Sync != nil {
		return f.Sync(r, off, n)
	}
	return nil
}

// simSync writes back [off, off+n) of a simulated region in msync mode
// (the domain's Flush and Fence), unless the region has failed or its
// Sync hook fails this sync, which then fails the region.
func (r *Region) simSync(off, n int) error {
	if err := r.Failed(); err != nil {
		return err
	}
	if err := r.syncFault(off, n); err != nil {
		return r.fail(&SyncError{Path: r.info.Path, Lo: off, Hi: off + n, Err: err})
	}
	r.dom.Flush(off, n)
	r.dom.Fence()
	return nil
}

// allocFault asks the Alloc hook of f (nil: none) about a preallocation.
func allocFault(f *Faults, path string, off, n int64) error {
	if f != nil && f.Alloc != nil {
		return f.Alloc(path, off, n)
	}
	return nil
}

// mappedHook hands a region Map made to its Mapped hook.
func mappedHook(r *Region) {
	if f := r.faults; f != nil && f.Mapped != nil {
		f.Mapped(r)
	}
}
