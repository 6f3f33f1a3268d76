package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMergeLogSealRace: with merge logs, a worker seals the data segment
// it switched away from once it has published the segment's last entries
// to its merge log, not to the shards. A GC pass that drained the merge
// logs before it saw the segment sealed took it for a victim without
// those entries: freed under them, their keys' gets failed with "moved by
// the cleaner 1000 times in a row" and after a reopen the acknowledged
// puts were gone. Here the segment is sealed between the two (the
// background merger paused, so the updates stay in the merge log).
func TestMergeLogSealRace(t *testing.T) {
	o := testOptions(t, 1)
	o.MergeLogs, o.WorkersPerDevice, o.NoStartupGC = true, 1, true
	s := mustOpen(t, o)
	val := func(k string, gen int) []byte {
		return append(fmt.Appendf(nil, "%s-%d-", k, gen), bytes.Repeat([]byte{'x'}, 3000)...)
	}
	want := map[string][]byte{}
	put := func(k string, gen int) {
		v := val(k, gen)
		require.NoError(t, s.Put([]byte(k), v))
		want[k] = v
	}
	// A first segment of garbage, sealed: a victim of every pass.
	for i := range 25 {
		put(fmt.Sprintf("g%d", i%3), i)
	}
	growAll(t, s)
	w := s.workers[0]
	fired := false
	testBeforeVictims = func(s *Store) {
		if fired {
			return
		}
		fired = true
		testPauseMerger.Store(true)
		// Fill the current data segment until the worker switches: the
		// old one is sealed with its newest entries in the merge log.
		g := w.d.g
		for i := 0; w.d.g == g; i++ {
			put(fmt.Sprintf("m%d", i), 0)
		}
		require.Positive(t, s.idx.pending(), "the updates wait in the merge log")
	}
	defer func() { testBeforeVictims = nil; testPauseMerger.Store(false) }()
	rep, err := s.GC()
	require.NoError(t, err)
	require.True(t, fired)
	require.Positive(t, rep.SegmentsFreed)
	testPauseMerger.Store(false)
	check := func(when string) {
		for k, v := range want {
			got, err := s.Get([]byte(k))
			require.NoError(t, err, "%s: get %s", when, k)
			require.Equal(t, v, got, "%s: get %s", when, k)
		}
	}
	check("after the pass")
	require.NoError(t, s.Check())
	s.abandon()
	s = mustOpen(t, o)
	check("after a reopen")
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// growAll adds every segment file the store's devices may still get. The
// hook above writes while the GC pass holds the store's read lock, and a
// write that needs a new segment waits for the grower, which needs the
// write lock: without this the test depends on the grower having grown
// the device before the pass (three make-test runs side by side saw a
// write give up after FullWait).
func growAll(t *testing.T, s *Store) {
	t.Helper()
	s.grow.addMu.Lock()
	defer s.grow.addMu.Unlock()
	for _, d := range s.devs {
		for {
			d.mu.Lock()
			n, can := len(d.segs), d.canGrow()
			d.mu.Unlock()
			if !can {
				break
			}
			require.NoError(t, s.addSegment(d, n))
		}
	}
}
