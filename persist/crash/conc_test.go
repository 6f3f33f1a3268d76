package crash_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist/crash"
)

// TestConcurrentProbe runs the probe (conc_probe_test.go) with the
// default settings: every broken twin is caught with every seed at
// GOMAXPROCS 1 and 2, no correct twin is flagged, and every failure's
// replay key reproduces it (same crash point, failing again). Its
// goroutines wait for each other through the harness only (Run.Yield):
// no turn ever passes on blocking, so the replays are exact under any
// load.
func TestConcurrentProbe(t *testing.T) {
	seeds := 10
	if testing.Short() {
		seeds = 3
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for _, c := range concCases {
			t.Run(fmt.Sprintf("%s/procs=%d", c.name, procs), func(t *testing.T) {
				schedules, replays := 0, 0
				for seed := uint64(1); seed <= uint64(seeds); seed++ {
					cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: probeSize}}, Seed: seed}
					wl, check := c.build(false)
					rep, err := crash.Check(cfg, wl, check)
					require.NoError(t, err)
					require.False(t, rep.Failed(), "correct twin flagged, seed %d: %v", seed, rep.Failures)
					require.Equal(t, crash.DefaultSchedules, rep.Schedules, "a concurrent workload runs every schedule")
					require.Zero(t, rep.Blocked, "the probe's goroutines wait for each other through the harness only: no turn passes on blocking, whatever the load")

					wl, check = c.build(true)
					rep, err = crash.Check(cfg, wl, check)
					require.NoError(t, err)
					require.True(t, rep.Failed(), "broken twin (%s) not caught, seed %d", c.class, seed)
					require.Zero(t, rep.Blocked, "broken twin: no turn passes on blocking")
					require.NotContains(t, rep.Failures[0].ReplayKey, "blocked=")
					schedules += rep.Schedules
					f := rep.Failures[0]
					require.NotEmpty(t, f.Schedule)
					replayed := replayFailure(t, cfg, f, func() (func(*crash.Run) error, func(*crash.Image) error) { return c.build(true) })
					require.Equal(t, f.Point.Seq, replayed.Point.Seq, "replay of %s", f.ReplayKey)
					require.Equal(t, f.Point.Kind, replayed.Point.Kind)
					replays++
				}
				t.Logf("%s: caught in %d of %d seeds after %d schedules in all; %d replays reproduced", c.class, seeds, seeds, schedules, replays)
			})
		}
	}
}

// replayFailure checks f again from its replay key alone and returns the
// failure the replay reports.
func replayFailure(t *testing.T, cfg crash.Config, f *crash.Failure, build func() (func(*crash.Run) error, func(*crash.Image) error)) *crash.Failure {
	t.Helper()
	require.NoError(t, os.Setenv(crash.ReplayEnv, f.ReplayKey))
	defer os.Unsetenv(crash.ReplayEnv)
	wl, check := build()
	rep, err := crash.Check(cfg, wl, check)
	require.NoError(t, err, "replay of %s", f.ReplayKey)
	require.True(t, rep.Failed(), "replay of %s did not fail", f.ReplayKey)
	return rep.Failures[0]
}

// TestConcurrentBlocking runs the lock structure of the probe with a
// sync.Mutex: threads block on it while the holder waits for its turn, the
// harness notices and passes the turn on. Every schedule completes, the
// correct twin passes, the broken one is caught and its replay fails at
// the same crash point. (Go's mutex lets a goroutine that releases it take
// it again before a woken waiter runs: with GOMAXPROCS > 1 which one gets
// it is timing, so the interleavings of such workloads may differ between
// runs; the test logs both runs' counts.)
func TestConcurrentBlocking(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: probeSize}}, Seed: seed}
		var first *crash.Report
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			wl, check := lockReleaseWith(false, true)
			rep, err := crash.Check(cfg, wl, check)
			require.NoError(t, err)
			require.False(t, rep.Failed(), "%v", rep.Failures)
			if first == nil {
				first = rep
				continue
			}
			require.NotZero(t, rep.Blocked, "the threads blocked on the mutex")
			t.Logf("seed %d: %d and %d changes of turn, %d and %d on blocking, %d and %d images", seed, first.Switches, rep.Switches, first.Blocked, rep.Blocked, first.Images, rep.Images)
		}
		wl, check := lockReleaseWith(true, true)
		rep, err := crash.Check(cfg, wl, check)
		require.NoError(t, err)
		require.True(t, rep.Failed(), "seed %d: broken twin with a sync.Mutex not caught", seed)
		// The replay reproduces, or says why it may not.
		f := rep.Failures[0]
		require.NoError(t, os.Setenv(crash.ReplayEnv, f.ReplayKey))
		wl, check = lockReleaseWith(true, true)
		rep, err = crash.Check(cfg, wl, check)
		require.NoError(t, os.Unsetenv(crash.ReplayEnv))
		if err != nil {
			require.ErrorIs(t, err, crash.ErrConfig)
			require.ErrorContains(t, err, "blocked in Go's synchronization")
			continue
		}
		require.True(t, rep.Failed())
		require.Equal(t, f.Point.Seq, rep.Failures[0].Point.Seq)
	}
}
