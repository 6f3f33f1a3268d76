package kv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgress: the Progress callback sees each step of recovery, a GC
// pass and a checkpoint advance to Done == Total, with the counts of what
// was done: the checkpoint's entries, the workers' logs, the shards, the
// victims cleaned.
func TestProgress(t *testing.T) {
	o := testOptions(t, 1)
	o.DeviceSize = 4 << 20
	var got []Progress
	o.Progress = func(p Progress) { got = append(got, p) }
	s := mustOpen(t, o)
	val := make([]byte, 200)
	for round := range 2 {
		for i := range 500 {
			require.NoError(t, s.Put(fmt.Appendf(nil, "key%04d", i), append(val, byte(round))))
		}
	}
	got = nil
	rep, err := s.GC()
	require.NoError(t, err)
	require.Positive(t, rep.Cleaned)
	gc := last(t, got, "gc", "segments")
	require.EqualValues(t, rep.Cleaned+rep.Quarantined, gc.Done)
	require.Equal(t, gc.Total, gc.Done)
	got = nil
	require.NoError(t, s.Checkpoint())
	ck := last(t, got, "checkpoint", "entries")
	require.EqualValues(t, 2*500, ck.Done, "every index entry, in the encoder's two passes")
	require.Equal(t, ck.Total, ck.Done)
	require.NoError(t, s.Close()) // checkpoints again
	got = nil
	s = mustOpen(t, o)
	defer s.Close()
	require.EqualValues(t, 500, last(t, got, "recover", "checkpoint").Done)
	logs := last(t, got, "recover", "logs")
	require.EqualValues(t, o.WorkersPerDevice, logs.Done, "one report per worker's logs")
	require.Equal(t, logs.Total, logs.Done)
	idx := last(t, got, "recover", "index")
	require.EqualValues(t, DefaultShards, idx.Done)
	for i := 1; i < len(got); i++ {
		if got[i].Op == got[i-1].Op && got[i].Step == got[i-1].Step {
			require.GreaterOrEqual(t, got[i].Done, got[i-1].Done, "a step only advances")
		}
	}
}

// last is the last report of op's step, which must be there.
func last(t *testing.T, ps []Progress, op, step string) Progress {
	t.Helper()
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].Op == op && ps[i].Step == step {
			return ps[i]
		}
	}
	require.Failf(t, "no progress", "%s %s in %+v", op, step, ps)
	return Progress{}
}
