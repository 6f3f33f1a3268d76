package kv

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// The concurrent crash tests: the store's goroutines (workers, merger,
// cleaner, expirer, checkpointer) and two clients run as persist/crash
// threads (Run.Go, the threads hook of variant.go), so that the
// simulator's seeded scheduler interleaves them at every persist
// operation and each goroutine's fence makes only its own flushes durable
// (SFENCE is per core). Each client puts, deletes and applies batches on
// keys of its own (and, in one test, takes a checkpoint or runs GC); after every crash the check recovers and requires each
// key to hold its last acknowledged value or one in flight, Check to
// pass, and a new put to win (crashCheck).

// concClients is how many clients write at once.
const concClients = 2

// concOps is client c's script: the crash tests' operations (no
// checkpoint, no GC: the concurrent tests are about the writers) on the
// keys k<c>, k<c+2>, k<c+4>, ...
func concOps(seed uint64, c, n int) []crashOp {
	var ops []crashOp
	for _, op := range crashOps(seed+uint64(c)<<8, 4*n) {
		if op.kind > 2 {
			continue
		}
		keep := true
		for j, k := range op.keys {
			var i int
			_, _ = fmt.Sscanf(k, "k%d", &i)
			op.keys[j] = fmt.Sprintf("k%d", i-i%concClients+c)
			keep = keep && len(op.keys) == len(op.vals)
		}
		if keep {
			ops = append(ops, op)
		}
		if len(ops) == n {
			break
		}
	}
	return ops
}

// concWorkload opens the store with its goroutines as threads, runs the
// clients' scripts as threads, waits for them (Run.Yield: an exact
// schedule), and closes the store.
func concWorkload(scripts [][]crashOp, b broken, m *crashModel) func(*crash.Run) error {
	return func(w *crash.Run) error {
		m.mu.Lock()
		m.acked, m.inflight, m.flying = map[string]string{}, nil, map[int]*crashOp{}
		m.mu.Unlock()
		m.fs = newMemDir()
		m.disk = m.fs
		o := crashOptions(w.Region, m.fs, b)
		o.WorkersPerDevice = max(o.WorkersPerDevice, m.workers)
		o.ExpireInterval = -1  // no timer decides what runs
		o.CheckpointBytes = -1 // (nor a poll of the logs' growth)
		o.threads = &threads{spawn: func(fn func()) { w.Go(func() error { fn(); return nil }) }, yield: w.Yield}
		s, err := Open(o)
		if err != nil {
			return err
		}
		var done atomic.Int32
		for c, ops := range scripts {
			w.Go(func() error {
				defer done.Add(1)
				return concClient(w, s, c, ops, m)
			})
		}
		for done.Load() < int32(len(scripts)) {
			w.Yield()
		}
		return s.Close()
	}
}

// concClient runs one client's script, noting what is in flight and what
// was acknowledged; each acknowledgment is a durability point.
func concClient(w *crash.Run, s *Store, c int, ops []crashOp, m *crashModel) error {
	for i := range ops {
		op := &ops[i]
		m.mu.Lock()
		m.flying[c] = op
		m.mu.Unlock()
		if _, err := runCrashOp(s, op); err != nil {
			return fmt.Errorf("client %d op %d: %w", c, i, err)
		}
		m.mu.Lock()
		for j, k := range op.keys {
			m.acked[k] = op.vals[j]
		}
		delete(m.flying, c)
		m.mu.Unlock()
		w.Durable(fmt.Sprintf("client %d op %d", c, i))
	}
	return nil
}

// concConfig bounds a concurrent crash test for make test: every fence a
// crash point, few images each, Schedules full runs of the workload.
func concConfig(seed uint64, schedules int) crash.Config {
	cfg := crashConfig(seed, 4)
	cfg.Pairs = -1
	cfg.Schedules = schedules
	cfg.RecoveryCrashes = -1 // the recovery is the single-goroutine tests' (TestCrash)
	return cfg
}

// concScripts are the clients' scripts; with upkeep, client 0 takes a
// checkpoint and client 1 runs a GC pass halfway through theirs, beside
// the other's writes.
func concScripts(seed uint64, n int, upkeep bool) [][]crashOp {
	var out [][]crashOp
	for c := range concClients {
		ops := concOps(seed, c, n)
		if upkeep {
			ops = slices.Insert(ops, n/2, crashOp{kind: 3 + c%2})
		}
		out = append(out, ops)
	}
	return out
}

// TestCrashConcurrent: two clients on each data path (combining writers,
// the default, and dedicated workers), the store's goroutines scheduled
// by the simulator: no acknowledged write lost or torn after any crash.
func TestCrashConcurrent(t *testing.T) {
	n, schedules := 6, 3
	if testing.Short() {
		n, schedules = 4, 2
	}
	run := func(t *testing.T, v pathVariant, workers int, upkeep bool) {
		m := &crashModel{workers: workers}
		b := broken{workers: v.workers, unfencedMax: 3 * entrySize}
		rep := crash.Test(t, concConfig(1, schedules), concWorkload(concScripts(1, n, upkeep), b, m), crashCheck(b, m))
		require.Equal(t, schedules, rep.Schedules)
		// The workload's goroutine, the clients, a writer per worker,
		// the merger, the cleaner and the expirer (and any other the
		// store starts through s.spawn).
		require.GreaterOrEqual(t, rep.Threads, 1+concClients+crashDevs*workers+3, "the clients and the store's goroutines ran as threads")
	}
	for _, v := range pathVariants {
		t.Run(v.name, func(t *testing.T) { run(t, v, 1, false) })
	}
	// Two workers per device, a checkpoint and a GC pass beside the
	// writes.
	t.Run("2-per-device+checkpoint+gc", func(t *testing.T) { run(t, pathVariants[0], 2, true) })
}

// TestCrashConcurrentBroken: sharedFence (a writer acknowledges on
// another writer's fence) passes the single-goroutine crash test, where a
// fence makes every flush durable, and is caught by the concurrent one on
// both data paths.
func TestCrashConcurrentBroken(t *testing.T) {
	b := broken{sharedFence: true, unfencedMax: 3 * entrySize}
	m := &crashModel{}
	rep, err := crash.Check(crashConfig(1, 4), crashWorkload(crashOps(1, 30), b, m), crashCheck(b, m))
	require.NoError(t, err)
	require.False(t, rep.Failed(), "the variant is right where fences are global: %v", rep.Failures)
	t.Logf("single goroutine: passed, %d crash points", rep.Points)
	for _, v := range pathVariants {
		t.Run(v.name, func(t *testing.T) {
			// kv's goroutines wait on channels, which the scheduler sees as
			// blocking in Go: the interleavings then depend on timing as well
			// as on the seed, so the test tries up to maxSeeds seeds and
			// requires a catch in one of them.
			const maxSeeds = 8
			for seed := uint64(1); seed <= maxSeeds; seed++ {
				b := broken{sharedFence: true, workers: v.workers, unfencedMax: 3 * entrySize}
				m := &crashModel{}
				rep, err := crash.Check(concConfig(seed, crash.DefaultSchedules), concWorkload(concScripts(seed, 6, false), b, m), crashCheck(b, m))
				require.NoError(t, err)
				if rep.Failed() {
					t.Logf("caught with seed %d after %d schedules: %s", seed, rep.Schedules, rep.Failures[0].Summary())
					return
				}
			}
			t.Fatalf("the concurrent model did not catch a writer acknowledging on another writer's fence in %d seeds", maxSeeds)
		})
	}
}
