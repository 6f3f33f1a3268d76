package persist

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// Traffic is the media traffic of a region: what its flushes, streaming
// stores and fences sent towards the persistence domain. A region counts
// it when mapped with Options.Counters (Map, Anonymous, NewSimulated);
// Region.Traffic reads the counts, and the difference of two readings
// (Sub) is the cost of what ran in between — an operation's fences, lines
// and streamed bytes, the figures a persistent structure states in its
// contract.
type Traffic struct {
	// Fences counts the fences: each Drain and Persist, and the final
	// fence of each Copy and Set without NoDrain (an msync of a simulated
	// msync region counts as one).
	Fences uint64
	// Lines counts the cache lines written back: each line of each Flush
	// and Persist, of each Copy and Set with ordinary stores, and the
	// edge lines of streaming ones. A line flushed twice counts twice.
	// On an eADR region nothing is written back (0).
	Lines uint64
	// Streamed counts the bytes written with streaming stores by Copy and
	// Set (whole 8-byte words, as asm streams them). On an eADR region,
	// where a counting region's ordinary stores need no write-back, the
	// bytes a region that does not count would stream are not counted.
	Streamed uint64
}

// Sub returns t - u: the traffic between reading u and reading t.
func (t Traffic) Sub(u Traffic) Traffic {
	return Traffic{Fences: t.Fences - u.Fences, Lines: t.Lines - u.Lines, Streamed: t.Streamed - u.Streamed}
}

func (t Traffic) String() string {
	return fmt.Sprintf("%d fences, %d lines flushed, %d bytes streamed", t.Fences, t.Lines, t.Streamed)
}

// Traffic returns the region's counts since it was mapped, and whether it
// counts at all (Options.Counters). It may be called at any time, from any
// goroutine; the counts of operations running concurrently may or may not
// be included.
func (r *Region) Traffic() (Traffic, bool) {
	c, ok := r.dom.(*counter)
	if !ok {
		return Traffic{}, false
	}
	return Traffic{Fences: c.fences.Load(), Lines: c.lines.Load(), Streamed: c.streamed.Load()}, true
}

// counter is the Domain of a region mapped with Options.Counters: every
// flush, streaming store and fence of the region reaches it (a region that
// counts takes the simulated regions' path, which has no inline fast path),
// and it counts them and then does what the region would have done — the
// flush instruction or fence of a real mapping, or its simulated domain's
// bookkeeping. A region that does not count never reaches this code: its
// Flush, Drain, Persist and Copy paths are unchanged (BenchmarkCounters).
type counter struct {
	r        *Region
	inner    Domain // the simulated domain; nil for a real mapping
	kind     kind   // the real mapping's instruction kind
	fences   atomic.Uint64
	lines    atomic.Uint64
	streamed atomic.Uint64
}

// count makes r count its traffic. It runs when r is made, before any
// other goroutine can see it. A real mapping in msync mode cannot count
// (Map refuses the option): its msync errors could not be returned
// through a Domain.
func (r *Region) count() {
	c := &counter{r: r, inner: r.dom, kind: r.kind}
	r.dom, r.kind, r.fastNT = c, kSim, false
	r.info.Counters = true
}

func linesOf(off, n int) uint64 {
	if n <= 0 {
		return 0
	}
	return uint64((off+n+asm.LineSize-1)/asm.LineSize - off/asm.LineSize)
}

func (c *counter) Flush(off, n int) {
	c.lines.Add(linesOf(off, n))
	if c.inner != nil {
		c.inner.Flush(off, n)
		return
	}
	c.r.flushLinesOf(c.kind, off, n)
}

// Stream: a counting region's Copy and Set store the words that would be
// streamed with ordinary stores (the simulated path), so a real mapping
// writes their lines back here; durable at the next fence either way.
func (c *counter) Stream(off, n int) {
	c.streamed.Add(uint64(n))
	if c.inner != nil {
		c.inner.Stream(off, n)
		return
	}
	c.r.flushLinesOf(c.kind, off, n)
}

func (c *counter) Fence() {
	c.fences.Add(1)
	if c.inner != nil {
		c.inner.Fence()
		return
	}
	asm.SFence()
}

func (c *counter) Close() error {
	if c.inner != nil {
		return c.inner.Close()
	}
	return nil
}

// flushLinesOf writes back [off, off+n) of a real mapping with the
// instruction of kind k (nothing for eADR).
func (r *Region) flushLinesOf(k kind, off, n int) {
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.mem)), off)
	switch k {
	case kCLWB:
		asm.FlushCLWB(p, n)
	case kCLFLUSHOPT:
		asm.FlushCLFLUSHOPT(p, n)
	case kCLFLUSH:
		asm.FlushCLFLUSH(p, n)
	}
}
