package persist

import (
	"fmt"
	"sync/atomic"
)

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
// injection). A nil function injects nothing.
type Faults struct {
	// Sync is called before each sync of a region — msync of a file in
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
	// Mapped is called with each region Map is about to return: a test
	// poisons ranges of a file a structure maps by itself (Region.Poison).
	Mapped func(r *Region)
}

var faults atomic.Pointer[Faults]

// InjectFaults installs f for every region of the process (nil removes
// them) and returns a function that puts back the ones installed before.
// For tests: the hooks see every region, so a test that installs them
// must not run in parallel with tests that do not expect them; it
// filters by region or path inside the hooks.
func InjectFaults(f *Faults) (restore func()) {
	old := faults.Swap(f)
	return func() { faults.Store(old) }
}

// syncFault asks the injected Sync hook about a sync of [off, off+n).
func (r *Region) syncFault(off, n int) error {
	if f := faults.Load(); f != nil && f.Sync != nil {
		return f.Sync(r, off, n)
	}
	return nil
}

// simSync writes back [off, off+n) of a simulated region in msync mode
// (the domain's Flush and Fence), unless the region has failed or the
// injected hook fails this sync, which then fails the region.
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

// allocFault asks the injected Alloc hook about a preallocation.
func allocFault(path string, off, n int64) error {
	if f := faults.Load(); f != nil && f.Alloc != nil {
		return f.Alloc(path, off, n)
	}
	return nil
}

// mappedHook hands a region Map made to the injected Mapped hook.
func mappedHook(r *Region) {
	if f := faults.Load(); f != nil && f.Mapped != nil {
		f.Mapped(r)
	}
}
