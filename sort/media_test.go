//go:build linux

package sort

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/sortbench"
)

// Issue 18's faults beyond power loss, for the sorter (injected through
// Options.Faults): poisoned media in the input and in a run file, and a
// failed sync of the output. Each fails with a clear error —
// persist.ErrMedia naming the file and the offset, persist.ErrSyncFailed —
// and leaves neither the output nor a temporary file behind.

// poisonMapped returns faults that poison the page at off of every file
// whose name has the suffix as it is mapped (persist.Faults.Mapped).
func poisonMapped(t *testing.T, suffix string, off int) *persist.Faults {
	return &persist.Faults{Mapped: func(r *persist.Region) {
		if strings.HasSuffix(r.Info().Path, suffix) && r.Size() > off {
			require.NoError(t, r.Poison(off, 1))
		}
	}}
}

func TestSortPoisonedInput(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 30000}) // 3 MB
	faults := poisonMapped(t, filepath.Base(in), 1<<20)
	for _, mode := range []Mode{OnePass, MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 4 << 20, WriteBuffer: 16 << 10, Faults: faults})
		require.ErrorIs(t, err, persist.ErrMedia, "mode %s: %v", mode, err)
		var me *persist.MediaError
		require.ErrorAs(t, err, &me)
		require.Equal(t, in, me.Path, "the error names the input")
		lo, hi := me.Range()
		require.LessOrEqual(t, lo, int64(1<<20), "mode %s: %v", mode, err)
		require.Greater(t, hi, int64(1<<20))
		require.Contains(t, err.Error(), "offset", "mode %s", mode)
		require.False(t, errors.Is(err, ErrChanged), "a poisoned file has not changed size")
		_, serr := os.Stat(out)
		require.ErrorIs(t, serr, os.ErrNotExist, "mode %s: no output", mode)
		requireClean(t, dir)
		t.Logf("%s: %v", mode, err)
	}
	_, err := sortbench.Validate(context.Background(), in, sortbench.ValidateOptions{Faults: faults})
	require.ErrorIs(t, err, persist.ErrMedia, "validate")
	_, err = sortbench.Validate(context.Background(), in, sortbench.ValidateOptions{})
	require.NoError(t, err, "validate without the faults: the file itself is sound")
}

// A run file whose page goes bad as it is mapped: the run's writes fault
// (a store to poisoned media faults as a load does).
func TestSortPoisonedRunFile(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 30000})
	faults := &persist.Faults{Mapped: func(r *persist.Region) {
		if filepath.Dir(r.Info().Path) == tmp && r.Size() > 8192 {
			require.NoError(t, r.Poison(4096, 1))
		}
	}}
	for _, mode := range []Mode{MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 1 << 20, WriteBuffer: 16 << 10, TempDir: tmp, Faults: faults})
		require.ErrorIs(t, err, persist.ErrMedia, "mode %s", mode)
		requireRunFault(t, err, tmp, 4096)
		_, serr := os.Stat(out)
		require.ErrorIs(t, serr, os.ErrNotExist, "mode %s: no output", mode)
		requireClean(t, dir, tmp)
		t.Logf("%s: %v", mode, err)
	}
}

// requireRunFault checks that err names a run file in tmp and the poisoned
// page at off: the *persist.MediaError's path and range, and the offset in
// the text.
func requireRunFault(t *testing.T, err error, tmp string, off int64) {
	t.Helper()
	var me *persist.MediaError
	require.ErrorAs(t, err, &me)
	require.Equal(t, tmp, filepath.Dir(me.Path), "the error names a run file: %v", err)
	require.True(t, strings.HasPrefix(filepath.Base(me.Path), "pmsort-run-"), "the error names a run file: %v", err)
	lo, hi := me.Range()
	require.LessOrEqual(t, lo, off, "%v", err)
	require.Greater(t, hi, off, "%v", err)
	require.Contains(t, err.Error(), me.Path)
	require.Regexp(t, `offset \d+ of `, err.Error())
}

// A run file whose last page goes bad after the runs are written, while
// the merge reads them (poisoned at the first progress report, which the
// merge makes when it writes its first output buffer): the merge's read
// faults, and the error names the run file and the page.
func TestSortRunFilePoisonedWhileMerging(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 30000})
	var runs []*persist.Region
	faults := &persist.Faults{Mapped: func(r *persist.Region) {
		if filepath.Dir(r.Info().Path) == tmp {
			runs = append(runs, r)
		}
	}}
	for _, mode := range []Mode{MergePass, EMS} {
		runs = nil
		var tail int64
		poisoned := false
		o := &Options{Mode: mode, MemBudget: 1 << 20, WriteBuffer: 16 << 10, TempDir: tmp, Faults: faults,
			Progress: func(done, total int64) {
				if poisoned || len(runs) == 0 {
					return
				}
				poisoned = true
				r := runs[0] // its last page: the merge reads it last
				tail = int64((r.Size() - 1) &^ 4095)
				require.NoError(t, r.Poison(int(tail), 1))
			}}
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, o)
		require.True(t, poisoned, "mode %s: the merge reported no progress", mode)
		require.ErrorIs(t, err, persist.ErrMedia, "mode %s: %v", mode, err)
		requireRunFault(t, err, tmp, tail)
		_, serr := os.Stat(out)
		require.ErrorIs(t, serr, os.ErrNotExist, "mode %s: no output", mode)
		requireClean(t, dir, tmp)
		t.Logf("%s: %v", mode, err)
	}
}

// A failed msync of the output (an ordinary file: the msync path) is
// final: the sort fails with persist.ErrSyncFailed — never a sorted file
// reported durable over dropped pages — and leaves nothing behind.
func TestSortSyncFailure(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 30000})
	faults := &persist.Faults{Sync: func(r *persist.Region, off, n int) error {
		if strings.Contains(filepath.Base(r.Info().Path), "out") {
			return syscall.EIO
		}
		return nil
	}}
	for _, mode := range []Mode{OnePass, MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 4 << 20, WriteBuffer: 16 << 10, Faults: faults})
		require.ErrorIs(t, err, persist.ErrSyncFailed, "mode %s: %v", mode, err)
		require.ErrorIs(t, err, syscall.EIO)
		_, serr := os.Stat(out)
		require.ErrorIs(t, serr, os.ErrNotExist, "mode %s: no output", mode)
		requireClean(t, dir)
		t.Logf("%s: %v", mode, err)
	}
}
