package persist

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// MediaError is a memory fault caught by Guard. errors.Is(err, ErrMedia)
// (and ErrCorrupt) holds for it; errors.As finds it to learn where.
type MediaError struct {
	// Addr is the faulting address, as the kernel reported it.
	Addr uintptr
	// Path is the file of the region holding Addr ("" for an anonymous or
	// simulated region, or when no region given to Guard holds it).
	Path string
	// Off is Addr's offset in that region, -1 when no region given holds
	// it.
	Off int64
	// Size is that region's mapped size in bytes (0 when none).
	Size int
	// Err is the runtime's error for the fault (a runtime.Error).
	Err error
	// Poisoned is the range holding Off that the region knows to be
	// unreadable (Region.Poisoned: poisoned with Poison, or a bad block
	// its device reported), empty when it knows none there.
	Poisoned Range
}

// Range is the span the fault is known to cover: the poisoned range
// holding Off when the region knows one (Poisoned), else the page holding
// Off (faults are reported at page granularity), clipped to the region;
// (-1, -1) when Off is unknown.
func (e *MediaError) Range() (lo, hi int64) {
	if e.Off < 0 {
		return -1, -1
	}
	if e.Poisoned.Len() > 0 {
		return e.Poisoned.Lo, e.Poisoned.Hi
	}
	lo = e.Off &^ int64(pageSize-1)
	return lo, min(lo+int64(pageSize), int64(e.Size))
}

func (e *MediaError) Error() string {
	if e.Off < 0 {
		return fmt.Sprintf("%s: fault at address %#x, in no region guarded", ErrMedia, e.Addr)
	}
	name := e.Path
	if name == "" {
		name = "the region"
	}
	lo, hi := e.Range()
	what := "unreadable"
	if e.Poisoned.Len() > 0 {
		what = "poisoned"
	}
	return fmt.Sprintf("%s: fault at offset %d of %s (bytes %d to %d of its %d are %s)", ErrMedia, e.Off, name, lo, hi, e.Size, what)
}

// Unwrap returns ErrMedia and the runtime's error.
func (e *MediaError) Unwrap() []error { return []error{ErrMedia, e.Err} }

// Locate sets Path, Off and Size from the first region of rs whose mapping
// holds Addr, and reports whether one did. Guard locates the fault in the
// regions it is given; a caller that guarded without naming them (a worker
// pool that does not know which files its tasks touch) locates it later.
func (e *MediaError) Locate(rs ...*Region) bool {
	for _, r := range rs {
		if r == nil || r.size == 0 || e.Addr < r.base || e.Addr-r.base >= uintptr(r.size) {
			continue
		}
		e.Path, e.Off, e.Size = r.info.Path, int64(e.Addr-r.base), r.size
		e.Poisoned, _ = r.poisonedAt(e.Off)
		return true
	}
	return false
}

// Guard runs fn and returns its error, except that a memory fault in fn —
// a load or store that raised SIGBUS or SIGSEGV at a non-nil address — is
// returned as a *MediaError instead of killing the process, located in the
// first of rs whose mapping holds the address. Any other panic goes on as
// it was.
//
// A fault is caught only on the goroutine that calls Guard
// (debug.SetPanicOnFault is per goroutine): code that hands the bytes to
// other goroutines guards each of them. What fn had done before the fault
// stays done; the bytes it was reading are to be treated as lost, not
// retried. Guard costs two runtime calls and a deferred function: guard a
// task (a chunk of a scan, a recovery pass), not each load.
//
// Guarding is what makes a mapped file safe to read when another program
// may truncate it (Map's documentation), and is the hook a structure uses
// to report a poisoned range as ErrMedia and keep serving the rest.
func Guard(fn func() error, rs ...*Region) (err error) {
	// One deferred function, not two: a guard per structure operation
	// (cow, fam) pays for each (BenchmarkGuard).
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		p := recover()
		if p == nil {
			return
		}
		re, isRuntime := p.(runtime.Error)
		fault, hasAddr := p.(interface{ Addr() uintptr })
		if !isRuntime || !hasAddr {
			panic(p)
		}
		e := &MediaError{Addr: fault.Addr(), Off: -1, Err: re}
		e.Locate(rs...)
		err = e
	}()
	return fn()
}

// Guard is Guard(fn, r).
func (r *Region) Guard(fn func() error) error { return Guard(fn, r) }
