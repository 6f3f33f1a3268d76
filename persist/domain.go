package persist

import (
	"fmt"
	"unsafe"
)

// A Domain stands in for the hardware persistence domain of a simulated
// region. It is told about every write-back, streaming store and fence of
// the region, with offsets into it, and decides what would survive a power
// failure. Package persist/crash implements it to crash-test structures; a
// Domain could also trace or count.
//
// Ordinary stores are not reported: the domain finds them by comparing the
// region's memory with what it knows is durable.
type Domain interface {
	// Flush: the cache lines intersecting [off, off+n) are written back;
	// their content at this moment becomes durable at the next Fence.
	Flush(off, n int)
	// Stream: the 8-byte words of [off, off+n) (off and n multiples of 8)
	// were written with streaming stores, each word whole; durable at the
	// next Fence. (Also told in ModeEADR, where a fence makes every store
	// durable anyway.)
	Stream(off, n int)
	// Fence: an SFENCE; what was flushed or streamed is now durable.
	Fence()
	// Close: the region is closed.
	Close() error
}

// NewSimulated returns a region over mem whose flushes and fences go to d.
// mode selects the platform simulated: ModeFlush (flush instructions),
// ModeEADR (fences only) or ModeMsync (each Flush syncs whole pages and
// fences). Copy and Set report streaming stores to d exactly as the
// hardware path issues them. Of opts only MovntThreshold, NoMovnt,
// Counters, Device and Faults (its Sync hook, in ModeMsync) apply; the
// environment is not read (BRAID_DEVICE neither), so a simulation
// replays the same way wherever it runs.
func NewSimulated(mem []byte, mode Mode, d Domain, opts *Options) (*Region, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: nil Domain", ErrInvalid)
	}
	if len(mem) == 0 {
		return nil, fmt.Errorf("%w: empty memory for a simulated region", ErrInvalid)
	}
	if mode < ModeFlush || mode > ModeMsync {
		return nil, fmt.Errorf("%w: unknown mode %d", ErrInvalid, mode)
	}
	c := config{flush: FlushCLWB, ntMin: DefaultMovntThreshold}
	counters := opts != nil && opts.Counters
	if opts != nil {
		if opts.MovntThreshold < 0 {
			return nil, fmt.Errorf("%w: MovntThreshold %d is negative: want 0 (the default) or a size in bytes", ErrInvalid, opts.MovntThreshold)
		}
		if opts.MovntThreshold > 0 {
			c.ntMin = opts.MovntThreshold
		}
		if opts.NoMovnt {
			c.ntOff, c.ntMin = true, noNT
		}
		c.faults = opts.Faults
	}
	r := newRegion(mem, mode, c, Info{Mapping: "simulated", Volatile: true})
	// Every flush, stream and fence must reach d: no inline fast path.
	r.kind, r.dom, r.fastNT = kSim, d, false
	if counters {
		r.count()
	}
	if opts != nil {
		r.emulate(opts.Device)
	}
	return r, nil
}

// Domain returns the simulated domain of r, or nil for a real mapping.
func (r *Region) Domain() Domain {
	if c, ok := r.dom.(*counter); ok {
		if c.inner == nil {
			return nil
		}
		return c.inner
	}
	if _, ok := r.dom.(*realDomain); ok {
		return nil
	}
	return r.dom
}

func ptrOf(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
