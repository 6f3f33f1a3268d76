package coro

import (
	"iter"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// Pull runs operations 0..n-1 interleaved, at most g at a time (g clamped
// to 1..MaxGroup), each written as ordinary straight-line code: op(i, wait)
// performs operation i and calls wait(p) where it is about to read the
// line at p; wait prefetches the line and suspends the operation while
// the others of the group run. The operations are coroutines of iter.Pull
// on the calling goroutine (never two at once), resumed round-robin; a
// slot whose operation finished takes the next one.
//
// Pull is the readable form of Ring, for comparison: a switch costs a
// coroutine switch of the runtime, an order of magnitude more than a
// Ring step (BenchmarkSwitch), which is too much to hide a cache miss
// with. A panic in op propagates to the caller of Pull; the operations
// then in flight run to their end first, without suspending.
func Pull(g, n int, op func(i int, wait func(p unsafe.Pointer))) {
	g = min(max(g, 1), MaxGroup, max(n, 0))
	if g == 0 {
		return
	}
	next := 0 // the coroutines run one at a time, on this goroutine
	stopping := false
	work := func(yield func(struct{}) bool) {
		wait := func(p unsafe.Pointer) {
			asm.Prefetch(p)
			if !stopping && !yield(struct{}{}) {
				// Stopped early (another operation panicked): this
				// one runs to its end without suspending.
				stopping = true
			}
		}
		for next < n && !stopping {
			i := next
			next++
			op(i, wait)
		}
	}
	resume := make([]func() (struct{}, bool), g)
	stops := make([]func(), g)
	defer func() {
		for _, stop := range stops {
			if stop != nil {
				stop()
			}
		}
	}()
	for j := range resume {
		resume[j], stops[j] = iter.Pull(iter.Seq[struct{}](work))
	}
	for live := g; live > 0; {
		for j := 0; j < live; {
			if _, ok := resume[j](); ok {
				j++
				continue
			}
			live--
			resume[j], resume[live] = resume[live], resume[j]
			stops[j], stops[live] = stops[live], stops[j]
		}
	}
}
