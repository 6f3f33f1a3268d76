package sort

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/sort/sortbench"
	"github.com/stretchr/testify/require"
)

// planJob is a job as Sort makes it after checking an input of n records
// of f in size bytes (klvMax: the largest KLV record), for the planner.
func planJob(t *testing.T, o Options, n, size, klvMax int64) *job {
	t.Helper()
	s, err := NewSorter(&o)
	require.NoError(t, err)
	f := s.o.Format
	return &job{s: s, rep: &Report{}, n: n, size: size, rs: f.RecordSize(), klvMax: klvMax,
		l: newLayout(f.KeySize, s.o.PointerSize, f.KLV)}
}

// TestBudgetMinimum: a budget too small says the smallest that would do;
// that budget plans, one byte less does not, and the figure printed (a
// whole MiB when that plans) plans too.
func TestBudgetMinimum(t *testing.T) {
	klv := Format{KeySize: 12, KLV: true}
	cases := []struct {
		name            string
		o               Options
		n, size, klvMax int64
	}{
		{"ems gensort", Options{Mode: EMS}, 2_000_000, 200_000_000, 0},
		{"ems klv", Options{Mode: EMS, Format: klv}, 1_000_000, 166_000_000, 316},
		{"ems klv big values", Options{Mode: EMS, Format: klv}, 2000, 70_000_000, 1 << 20},
		{"mergepass gensort", Options{Mode: MergePass}, 2_000_000, 200_000_000, 0},
		{"mergepass klv overlap", Options{Mode: MergePass, Format: klv, Overlap: true}, 10_000_000, 1_660_000_000, 316},
		{"mergepass fixed16+48", Options{Mode: MergePass, Format: Format{KeySize: 16, ValueSize: 48}}, 5_000_000, 320_000_000, 0},
		{"onepass gensort", Options{Mode: OnePass}, 2_000_000, 200_000_000, 0},
		{"onepass klv", Options{Mode: OnePass, Format: klv}, 1_000_000, 166_000_000, 316},
		{"onepass fixed16+48 overlap", Options{Mode: OnePass, Format: Format{KeySize: 16, ValueSize: 48}, Overlap: true}, 300_000, 19_200_000, 0},
		{"auto gensort", Options{}, 2_000_000, 200_000_000, 0},
	}
	for _, c := range cases {
		c.o.MemBudget = MinMemBudget
		j := planJob(t, c.o, c.n, c.size, c.klvMax)
		_, err := j.plan()
		require.ErrorIs(t, err, ErrBudget, c.name)
		var be *budgetError
		require.True(t, errors.As(err, &be), c.name)
		require.Greater(t, be.need, int64(MinMemBudget), c.name)
		_, _, err = j.planFor(be.need)
		require.NoError(t, err, "%s: the minimum %d does not plan", c.name, be.need)
		_, _, err = j.planFor(be.need - 1)
		require.ErrorIs(t, err, ErrBudget, "%s: %d, less than the minimum, plans", c.name, be.need-1)
		_, _, err = j.planFor(be.shown)
		require.NoError(t, err, "%s: the printed %d does not plan", c.name, be.shown)
		require.GreaterOrEqual(t, be.shown, be.need, c.name)
		if be.shown%(1<<20) == 0 {
			require.Contains(t, be.Error(), fmt.Sprintf("raise -mem to at least %dMiB)", be.shown>>20), c.name)
		} else {
			require.Contains(t, be.Error(), fmt.Sprintf("raise -mem to at least %d bytes)", be.shown), c.name)
		}
		// The budget printed is what the job would be planned with.
		j2 := planJob(t, Options{Mode: c.o.Mode, Format: c.o.Format, Overlap: c.o.Overlap, MemBudget: be.shown},
			c.n, c.size, c.klvMax)
		_, err = j2.plan()
		require.NoError(t, err, c.name)
		require.LessOrEqual(t, j2.plan0.main+j2.plan0.wbArea+j2.plan0.fixed, be.shown, c.name)
	}
}

// TestBudgetMinimumSorts: the minimum an ErrBudget error names sorts the
// file; a little less is refused with the same minimum.
func TestBudgetMinimumSorts(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		g    sortbench.GenOptions
		mode Mode
	}{
		{"onepass gensort", sortbench.GenOptions{Count: 100_000}, OnePass},
		{"mergepass klv", sortbench.GenOptions{Count: 500_000, Format: Format{KeySize: 12, KLV: true}, MaxValue: 20}, MergePass},
		{"ems klv big values", sortbench.GenOptions{Count: 400, Format: Format{KeySize: 8, KLV: true}, MinValue: 20_000, MaxValue: 200_000}, EMS},
	} {
		in, inBytes := writeInput(t, dir, c.g)
		f := c.g.Format
		if f == (Format{}) {
			f = Gensort
		}
		out := filepath.Join(dir, "out-"+string(c.mode))
		o := Options{Format: f, Mode: c.mode, MemBudget: MinMemBudget}
		_, err := Sort(context.Background(), in, out, &o)
		var be *budgetError
		require.True(t, errors.As(err, &be), "%s: %v", c.name, err)
		need := be.need
		require.Greater(t, need, int64(MinMemBudget), c.name)
		o.MemBudget = need - 1
		_, err = Sort(context.Background(), in, out, &o)
		require.True(t, errors.As(err, &be), "%s at %d: %v", c.name, need-1, err)
		require.Equal(t, need, be.need, c.name)
		o.MemBudget = need
		rep, err := Sort(context.Background(), in, out, &o)
		require.NoError(t, err, "%s at %d", c.name, need)
		require.LessOrEqual(t, rep.BufferBytes, need, c.name)
		requireSorted(t, f, inBytes, out)
	}
}
