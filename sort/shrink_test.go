package sort

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/sortbench"
	"github.com/stretchr/testify/require"
)

// An input truncated by another program while it is mapped (a real
// SIGBUS on the next read past its new end) is the error "IN changed size
// during the sort" in every mode and format, and the sort leaves nothing
// behind.
func TestSortInputShrinks(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	klv := Format{KeySize: 10, KLV: true}
	for _, f := range []Format{Gensort, klv} {
		in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 20000, Format: f, MaxValue: 150})
		for _, mode := range []Mode{OnePass, MergePass, EMS} {
			s, err := NewSorter(&Options{Mode: mode, Format: f, TempDir: tmp, MemBudget: 1 << 20, WriteBuffer: 16 << 10})
			require.NoError(t, err)
			s.runCap = 5000
			st, err := os.Stat(in)
			require.NoError(t, err)
			s.afterMap = func(in string) { require.NoError(t, os.Truncate(in, 100000)) }
			out := filepath.Join(dir, "out")
			_, err = s.Sort(context.Background(), in, out)
			s.Close()
			require.ErrorIs(t, err, ErrChanged, "%s %s", f, mode)
			require.ErrorIs(t, err, persist.ErrMedia)
			var me *persist.MediaError
			require.ErrorAs(t, err, &me)
			require.GreaterOrEqual(t, me.Off, int64(100000)&^4095, "%s %s", f, mode)
			require.Equal(t, "sort: "+in+" changed size during the sort: it was "+strconv.FormatInt(st.Size(), 10)+
				" bytes when mapped, 100000 now; the access at offset "+strconv.FormatInt(me.Off, 10)+" faulted", err.Error())
			require.NoFileExists(t, out)
			requireClean(t, dir, tmp)
			// The input again, whole, for the next mode.
			writeInput(t, dir, sortbench.GenOptions{Count: 20000, Format: f, MaxValue: 150})
		}
	}
}

// A run file or the output truncated while the sort writes and reads it
// (once the first output bytes are written) is named in the error.
func TestSortTempFileShrinks(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 20000})
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		mode  Mode
		glob  string // what is truncated
		label string // how the error names it
	}{
		{MergePass, filepath.Join(tmp, "pmsort-run-*"), filepath.Join(tmp, "pmsort-run-")},
		{EMS, filepath.Join(tmp, "pmsort-run-*"), filepath.Join(tmp, "pmsort-run-")},
		{OnePass, filepath.Join(dir, ".out.pmsort-*.tmp"), "output " + out},
	} {
		done := false
		s, err := NewSorter(&Options{Mode: c.mode, TempDir: tmp, MemBudget: 1 << 20, WriteBuffer: 16 << 10,
			Progress: func(written, total int64) {
				if done || written == 0 {
					return
				}
				done = true
				files, _ := filepath.Glob(c.glob)
				require.NotEmpty(t, files, c.glob)
				for _, f := range files {
					require.NoError(t, os.Truncate(f, 64))
				}
			}})
		require.NoError(t, err)
		s.runCap = 5000
		_, err = s.Sort(context.Background(), in, out)
		s.Close()
		require.ErrorIs(t, err, ErrChanged, "%s", c.mode)
		require.Contains(t, err.Error(), "sort: "+c.label, "%s", c.mode)
		require.Contains(t, err.Error(), " bytes when mapped, 64 now", "%s", c.mode)
		require.NoFileExists(t, out)
		requireClean(t, dir, tmp)
	}
}
