package persist

import (
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// Close unmaps the region and closes its file. It does not flush: what was
// not made durable before Close may or may not survive. A second Close
// returns ErrClosed.
func (r *Region) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	// A simulated region's memory goes back to its owner readable.
	_, first := r.liftPoison()
	if r.dom != nil {
		if err := r.dom.Close(); err != nil && first == nil {
			first = err
		}
	}
	if err := r.os.unmap(r.mem); err != nil && first == nil {
		first = err
	}
	r.mem = nil
	r.claimMu.Lock()
	r.claims = nil
	r.claimMu.Unlock()
	return first
}

// Sync makes the whole region durable: every line flushed and fenced (PMem
// path), or msync of the whole file.
func (r *Region) Sync() error {
	if r.closed.Load() {
		return ErrClosed
	}
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH:
		r.flushLines(unsafe.Pointer(unsafe.SliceData(r.mem)), r.size)
		asm.SFence()
	case kEADR:
		asm.SFence()
	case kMsync:
		return r.msync(0, r.size)
	case kSim:
		if err := r.Failed(); err != nil {
			return err
		}
		if r.mode == ModeMsync {
			return r.simSync(0, r.size)
		}
		if r.mode != ModeEADR {
			r.dom.Flush(0, r.size)
		}
		r.dom.Fence()
	}
	return nil
}
