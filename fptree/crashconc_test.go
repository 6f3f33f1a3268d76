package fptree

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist/crash"
)

// Concurrent crash tests: writers started with Run.Go put and delete keys
// of their own (key mod writers = the writer) in one tree of 4-slot
// leaves, so that they split, free and share leaves all the time; the
// simulator runs them one at a time in seeded interleavings (a turn ends
// at every persist operation; a writer blocked on the tree's split mutex
// or spinning on a leaf lock passes it on) and each writer's fences make
// only its own flushes durable. At every fence of every writer the check
// recovers the image and demands exactly what the writers acknowledged,
// each writer's operation in flight applied whole or not at all. Each
// writer's acknowledgement (Run.Durable) also demands that its own stores
// are durable when its Put or Delete returns.

// concRun is what the writers have acknowledged, read by the check while
// they are paused at a crash point.
type concRun struct {
	mu       sync.Mutex // a writer blocked in the tree may be paused mid-update: the check locks
	created  bool
	acked    []map[uint64]uint64
	inflight [][]change
	variant  variant
}

func (h *concRun) workload(seed uint64, writers, ops int, space uint64) func(*crash.Run) error {
	return func(w *crash.Run) error {
		h.mu.Lock()
		h.created, h.acked, h.inflight = false, make([]map[uint64]uint64, writers), make([][]change, writers)
		for id := range writers {
			h.acked[id] = map[uint64]uint64{}
		}
		h.mu.Unlock()
		tr, err := Create(w.Region("t"), &Options{LeafSlots: 4, Group: 4})
		if err != nil {
			return err
		}
		tr.variant = h.variant
		h.mu.Lock()
		h.created = true
		h.mu.Unlock()
		w.Durable("create")
		for id := range writers {
			w.Go(func() error { return h.writer(w, tr, seed, id, writers, ops, space) })
		}
		w.Wait()
		return tr.Close()
	}
}

// writer runs ops puts and deletes of writer id's keys.
func (h *concRun) writer(w *crash.Run, tr *Tree, seed uint64, id, writers, ops int, space uint64) error {
	rnd := structtest.NewRand(seed<<8 | uint64(id))
	for op := range ops {
		k := (rnd.Uint64()%space)*uint64(writers) + uint64(id)
		c := change{k: k, v: uint64(op)<<8 | uint64(id), del: rnd.Intn(3) == 0}
		h.mu.Lock()
		h.inflight[id] = []change{c}
		h.mu.Unlock()
		var err error
		if c.del {
			_, err = tr.Delete(k)
		} else {
			err = tr.Put(k, c.v)
		}
		h.mu.Lock()
		h.inflight[id] = nil
		switch {
		case err == nil && c.del:
			delete(h.acked[id], k)
		case err == nil:
			h.acked[id][k] = c.v
		}
		h.mu.Unlock()
		if err != nil && !errors.Is(err, ErrFull) {
			return fmt.Errorf("writer %d: %w", id, err)
		}
		w.Durable(fmt.Sprintf("writer %d op %d", id, op))
	}
	return nil
}

// check recovers the image and compares it with every writer's
// acknowledged keys and operation in flight (crashRun's check).
func (h *concRun) check(img *crash.Image) error {
	h.mu.Lock()
	one := &crashRun{created: h.created, acked: map[uint64]uint64{}, variant: h.variant}
	for id := range h.acked {
		for k, v := range h.acked[id] {
			one.acked[k] = v
		}
		one.inflight = append(one.inflight, h.inflight[id]...)
	}
	h.mu.Unlock()
	return one.check(img)
}

// TestCrashConcurrent: two writers, three schedules (random, PCT with
// priority changes spread over the run, PCT with early ones), a crash point at every fence of either, recovered and
// compared; the test counts the interleavings run.
func TestCrashConcurrent(t *testing.T) {
	ops, seeds, schedules := 40, []uint64{1, 2}, 3
	if raceEnabled || testing.Short() {
		ops, seeds, schedules = 12, seeds[:1], 2 // the race detector slows the simulator about tenfold
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			h := &concRun{}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "t", Size: 16 << 10}}, Seed: seed, Schedules: schedules, Pairs: 16}
			rep := crash.Test(t, cfg, h.workload(seed, 2, ops, 12), h.check)
			require.Equal(t, schedules, rep.Schedules, "every schedule ran")
			require.Equal(t, 3, rep.Threads, "the workload's goroutine and two writers")
			require.Positive(t, rep.Switches)
			require.Greater(t, rep.Points, schedules*ops, "a crash point at every fence of every schedule")
			t.Logf("%d schedules, %d changes of turn (%d when a writer blocked), %d crash points, %d images", rep.Schedules, rep.Switches, rep.Blocked, rep.Points, rep.Images)
		})
	}
}

// TestCrashConcurrentBroken: sharedStageFence (an insert that waits for
// another writer's fence instead of fencing its own slot) passes the
// single-goroutine crash test — with one writer it always fences itself,
// and a fence there orders every flush — and the concurrent test catches
// it: the writer's slot, flushed but fenced by nobody, and its bitmap
// bit reach the media apart.
func TestCrashConcurrentBroken(t *testing.T) {
	one := &crashRun{variant: sharedStageFence}
	cfg := crashConfig(4, false)
	cfg.RecoveryCrashes = -1
	rep, err := crash.Check(cfg, one.workload(4, 60, 0, 24, false), one.check)
	require.NoError(t, err)
	require.False(t, rep.Failed(), "one writer: %v", rep.Failures)

	// The variant's waiter spins in runtime.Gosched, which the scheduler
	// sees as blocking in Go: which schedules put both writers' inserts in
	// flight at once then depends on timing as well as on the seed (three
	// make-test runs side by side saw seed 1 miss once). So the test tries
	// up to maxSeeds seeds and requires a catch in one of them.
	const maxSeeds = 8
	for seed := uint64(1); seed <= maxSeeds; seed++ {
		h := &concRun{variant: sharedStageFence}
		cfg = crash.Config{Regions: []crash.Spec{{Name: "t", Size: 16 << 10}}, Seed: seed, Pairs: 16, RecoveryCrashes: -1}
		rep, err = crash.Check(cfg, h.workload(seed, 2, 12, 12), h.check)
		require.NoError(t, err)
		if rep.Failed() {
			t.Logf("caught with seed %d after %d schedules: %s", seed, rep.Schedules, rep.Failures[0].Summary())
			return
		}
	}
	t.Fatalf("the concurrent model did not catch an insert fenced by another writer in %d seeds", maxSeeds)
}
