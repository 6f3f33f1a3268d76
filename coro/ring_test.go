package coro

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// op is a test operation: it needs stages steps, the last of which
// finishes it.
type op struct {
	i, stage, stages int
}

// stagesOf gives operations irregular lengths (1 to 7 stages), seeded.
func stagesOf(seed uint64, n int) []int {
	rnd := structtest.NewRand(seed)
	s := make([]int, n)
	for i := range s {
		s[i] = 1 + rnd.Intn(7)
	}
	return s
}

// TestRing runs operations of irregular length through a Ring and checks
// the schedule: every operation begins once and runs each of its stages
// once, in order; at most g are in flight; a finished operation's slot
// takes the next operation at once (AMAC's refill), so the group stays
// full while operations remain; the loop ends exactly when all finished.
func TestRing(t *testing.T) {
	var r Ring[op]
	for _, g := range []int{-1, 0, 1, 2, 3, 8, 63, 64, 65, 1000} {
		for _, n := range []int{0, 1, 2, 5, 64, 1000} {
			t.Run(fmt.Sprintf("g%d/n%d", g, n), func(t *testing.T) {
				stages := stagesOf(uint64(g*7919+n), n)
				ran := make([]int, n)
				begun := make([]bool, n)
				wantG := min(max(g, 1), MaxGroup)
				r.Reset(g, n)
				refill := -1  // the slot Done refilled, if any
				full := false // the group has been full once
				for r.Round() {
					for s, i, ok := r.Next(); ok; s, i, ok = r.Next() {
						require.LessOrEqual(t, r.Len(), wantG)
						if refill >= 0 {
							require.GreaterOrEqual(t, i, 0, "the slot Done refilled begins a new operation")
							require.Equal(t, refill, slotOf(&r, s), "AMAC: the finished operation's slot is refilled at once")
							refill = -1
						}
						if i >= 0 {
							require.False(t, begun[i], "operation %d begun twice", i)
							begun[i] = true
							*s = op{i: i, stages: stages[i]}
						}
						require.Equal(t, ran[s.i], s.stage, "operation %d resumed at the wrong stage", s.i)
						s.stage++
						ran[s.i]++
						if s.stage == s.stages {
							slot := slotOf(&r, s)
							before := r.next
							r.Done()
							if before < n {
								refill = slot
							}
						} else if full && r.next < n {
							require.Equal(t, wantG, r.Len(), "the group stays full while operations remain")
						}
						full = full || r.Len() == wantG
					}
				}
				require.Zero(t, r.Len())
				for i := range n {
					require.True(t, begun[i], "operation %d never began", i)
					require.Equal(t, stages[i], ran[i], "operation %d", i)
				}
			})
		}
	}
}

func slotOf(r *Ring[op], s *op) int {
	return int((uintptr(unsafe.Pointer(s)) - uintptr(unsafe.Pointer(&r.slots[0]))) / unsafe.Sizeof(*s))
}

// TestRingPrefetch: Queue and Issue with more, fewer and exactly
// QueueBatch addresses (prefetches have no effect to observe; they must
// not fault, and the queue must not overflow).
func TestRingPrefetch(t *testing.T) {
	buf := make([]byte, 4096)
	var r Ring[op]
	r.Reset(4, 3)
	for k := range 3*QueueBatch + 1 {
		r.Queue(unsafe.Pointer(&buf[k*64%len(buf)]))
		r.Prefetch(unsafe.Pointer(&buf[k]))
		if k == QueueBatch-1 {
			require.Zero(t, r.nq, "a full queue is issued")
		}
	}
	require.Equal(t, 1, r.nq)
	r.Issue()
	require.Zero(t, r.nq)
	r.Queue(nil)
	for r.Round() {
		for _, _, ok := r.Next(); ok; _, _, ok = r.Next() {
			r.Done()
		}
		require.Zero(t, r.nq, "a round begins with the queue issued")
		r.Queue(nil)
	}
	require.Zero(t, r.nq, "the last Round issued the queue")
}

// TestPull runs the same irregular operations as coroutines: each runs its
// waits in order, at most g run interleaved, all finish.
func TestPull(t *testing.T) {
	buf := make([]byte, 64)
	for _, g := range []int{-1, 0, 1, 3, 8, 64, 100} {
		for _, n := range []int{0, 1, 5, 300} {
			stages := stagesOf(uint64(g*31+n), n)
			ran := make([]int, n)
			active, most := 0, 0
			Pull(g, n, func(i int, wait func(unsafe.Pointer)) {
				active++
				most = max(most, active)
				for range stages[i] - 1 {
					ran[i]++
					wait(unsafe.Pointer(&buf[i%64]))
				}
				ran[i]++
				active--
			})
			for i := range n {
				require.Equal(t, stages[i], ran[i], "g=%d n=%d operation %d", g, n, i)
			}
			require.LessOrEqual(t, most, min(max(g, 1), MaxGroup), "g=%d n=%d", g, n)
			if n >= 8 && g >= 3 {
				require.Greater(t, most, 1, "g=%d n=%d: operations were interleaved", g, n)
			}
		}
	}
}

// TestPullPanic: a panic in an operation reaches Pull's caller, after the
// operations in flight finished.
func TestPullPanic(t *testing.T) {
	finished := 0
	require.PanicsWithValue(t, "boom", func() {
		Pull(4, 100, func(i int, wait func(unsafe.Pointer)) {
			wait(nil)
			if i == 2 {
				panic("boom")
			}
			wait(nil)
			finished++
		})
	})
	require.Equal(t, 3, finished, "operations 0, 1 and 3 were in flight and ran to their end; none began after the panic")
}
