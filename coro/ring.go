package coro

import (
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/internal/invariants"
)

// MaxGroup is the largest group a Ring interleaves.
const MaxGroup = 64

// QueueBatch is how many addresses Queue collects before it issues them in
// one asm.PrefetchAll call (the rest go when the round ends).
const QueueBatch = 8

// Ring interleaves up to G operations AMAC-style: a fixed array of states,
// one per operation in flight, visited round-robin by a loop the caller
// writes. S is one operation's state — a plain struct holding the stage it
// is at and what it carries (a key, a node, a slot). Next returns the slot
// to advance; the caller runs that operation's next stage, which ends
// either with a prefetch of the line the stage after needs (the operation
// yields: Next moves on to the next slot) or with Done (the operation
// finished: its slot takes the next operation at once, so that operations
// of irregular length never leave a slot idle).
//
//	var r coro.Ring[lookup]
//	r.Reset(g, len(keys))
//	for r.Round() {
//		for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
//			if op >= 0 {
//				*s = lookup{key: keys[op], i: op} // a new operation: its first stage follows
//			}
//			if s.step(&r) { // a stage: it prefetches (r.Prefetch or r.Queue) and returns false, or returns true when finished
//				r.Done()
//			}
//		}
//	}
//
// Next is small enough to be inlined into the loop, and a stage is the
// caller's own code, so a switch costs a few compares: no allocation, no
// interface or indirect call, no goroutine (BenchmarkSwitch). Round, once
// per round, issues the queued prefetches and fills idle slots. A Ring is
// not safe for concurrent use; the zero Ring is ready for Reset. It holds
// MaxGroup states inline: keep one per goroutine (a local variable, or a
// sync.Pool) rather than making one per batch on the heap.
type Ring[S any] struct {
	slots [MaxGroup]S
	begin [MaxGroup]int32 // the operation slot i is to begin, or -1
	g     int             // the group size
	live  int             // slots [0, live) hold operations in flight
	cur   int             // the slot Next returns next
	next  int             // the next operation to start
	n     int             // operations in all
	nq    int
	q     [QueueBatch]unsafe.Pointer
}

// Reset prepares r to run operations 0..n-1 (n < 2^31), at most g at a
// time (g is clamped to 1..MaxGroup). The states of a previous run are
// left as they are: every operation's first stage must set what it reads.
func (r *Ring[S]) Reset(g, n int) {
	r.g = min(max(g, 1), MaxGroup)
	r.n = min(max(n, 0), 1<<31-1)
	r.live, r.cur, r.next, r.nq = 0, 0, 0, 0
}

// Round starts a round over the operations in flight and reports whether
// any are left. It issues the prefetches still queued and gives idle
// slots (all of them at the first round) the next operations.
func (r *Ring[S]) Round() bool {
	r.Issue()
	for r.live < r.g && r.next < r.n {
		r.begin[r.live] = int32(r.next)
		r.live++
		r.next++
	}
	r.cur = 0
	if invariants.Enabled && (r.live > r.g || r.next > r.n || r.nq != 0) {
		panic("coro: Ring state broken after Round")
	}
	return r.live > 0
}

// Next returns the state of the operation to advance now, or ok false at
// the end of the round. op >= 0 means the slot begins operation op
// (initialize s, then run its first stage); op == -1 means the operation
// in s resumes at its stage.
func (r *Ring[S]) Next() (s *S, op int, ok bool) {
	i := r.cur
	if i >= r.live {
		return nil, -1, false
	}
	i &= MaxGroup - 1
	r.cur = i + 1
	op = int(r.begin[i])
	r.begin[i] = -1
	return &r.slots[i], op, true
}

// Done ends the operation whose state Next returned last. Its slot takes
// the next operation, which the next call of Next returns (AMAC's refill);
// when none is left the slot is given up (the last slot's state moves into
// it, so a pointer to a state is valid only until Done).
func (r *Ring[S]) Done() {
	if invariants.Enabled && (r.cur < 1 || r.cur > r.live) {
		panic("coro: Ring.Done without the Next of an operation in flight")
	}
	i := (r.cur - 1) & (MaxGroup - 1)
	r.cur = i
	if r.next < r.n {
		r.begin[i] = int32(r.next)
		r.next++
		return
	}
	r.live--
	if last := r.live & (MaxGroup - 1); i != last {
		r.slots[i] = r.slots[last]
		r.begin[i] = r.begin[last]
	}
}

// Len returns the number of operations in flight.
func (r *Ring[S]) Len() int { return r.live }

// Prefetch prefetches the line at p now: one asm call, the prefetch issued
// as early as it can be.
func (r *Ring[S]) Prefetch(p unsafe.Pointer) { asm.Prefetch(p) }

// Queue adds p to the prefetches of the group, issued together in one
// asm.PrefetchAll call when QueueBatch have been queued and when the
// round ends (or by Issue). It costs less per line than Prefetch but
// issues the first lines of a batch later; BenchmarkGroup compares them.
func (r *Ring[S]) Queue(p unsafe.Pointer) {
	r.q[r.nq&(QueueBatch-1)] = p
	r.nq++
	if r.nq == QueueBatch {
		asm.PrefetchAll(&r.q[0], QueueBatch)
		r.nq = 0
	}
}

// Issue issues the queued prefetches now.
func (r *Ring[S]) Issue() {
	if r.nq > 0 {
		asm.PrefetchAll(&r.q[0], r.nq)
		r.nq = 0
	}
}
