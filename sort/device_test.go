package sort

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist/device"
	"github.com/braid-pm/braid/sort/sortbench"
)

// slowDevice is optane-1dimm slowed 20x (the curves' shape kept), so that
// a 2 MB sort takes device time well above the scheduler's noise, with a
// small burst.
func slowDevice(t *testing.T) *device.Device {
	p, err := device.Shipped("optane-1dimm")
	require.NoError(t, err)
	for _, c := range [][]device.Level{p.Model.SeqRead, p.Model.RandRead, p.Model.Write} {
		for i := range c {
			c[i].GBs /= 20
		}
	}
	d, err := device.New(p, &device.Options{Burst: 100 * time.Microsecond})
	require.NoError(t, err)
	return d
}

// TestSortChargesDevice: each mode's reads and writes reach the emulated
// device — the output and runs as writes, the key gather, run loads and
// value gather as declared reads — the sort takes at least the device
// time they cost, and the traffic is what the modes promise: OnePass
// writes each record once, EMS twice (runs, then output).
func TestSortChargesDevice(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	in, inBytes := writeInput(t, dir, sortbench.GenOptions{Count: n})
	stats := map[Mode]device.Stats{}
	for _, m := range []Mode{OnePass, MergePass, EMS} {
		t.Run(string(m), func(t *testing.T) {
			dev := slowDevice(t)
			o := Options{Mode: m, Device: dev, ForcePMem: true}
			if m != OnePass {
				o.MemBudget = 1 << 20
			}
			s, err := NewSorter(&o)
			require.NoError(t, err)
			defer s.Close()
			s.runCap = 3000
			out := filepath.Join(dir, "out-"+string(m))
			start := time.Now()
			_, err = s.Sort(context.Background(), in, out)
			wall := time.Since(start)
			require.NoError(t, err)
			requireSorted(t, Gensort, inBytes, out)
			st := dev.Stats()
			stats[m] = st
			t.Logf("%s: wall %v, device reads %d B in %v, writes %d B in %v, %d sleeps", m, wall, st.ReadBytes, st.ReadTime, st.WriteBytes, st.WriteTime, st.Sleeps)
			require.GreaterOrEqual(t, st.WriteBytes, int64(n*100), "the output is charged")
			require.GreaterOrEqual(t, st.ReadBytes, int64(n*100), "the reads are declared")
			// (Whether it slept depends on how fast the machine ran the
			// sort: under load, not at all. The wall-time lower bound
			// below holds either way.)
			// Reads and writes do not overlap (no -overlap): the lanes'
			// times add up, less a burst per phase change at most.
			require.GreaterOrEqual(t, wall, (st.ReadTime+st.WriteTime)*8/10, "the sort slept for its device time")
		})
	}
	require.Less(t, stats[OnePass].WriteBytes, stats[EMS].WriteBytes*6/10, "OnePass writes each record once, EMS twice")
	require.Greater(t, stats[MergePass].WriteBytes, stats[OnePass].WriteBytes, "MergePass writes its IndexMap runs too")
}
