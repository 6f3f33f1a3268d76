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

// Issue 18's faults beyond power loss, for the sorter (tests only; the
// sorter's code is unchanged): poisoned media in the input and in a run
// file, and a failed sync of the output. Each fails with a clear error —
// persist.ErrMedia naming the file and the offset, persist.ErrSyncFailed —
// and leaves neither the output nor a temporary file behind.

// poisonMapped poisons the page at off of every file whose name has the
// suffix as Map maps it (persist.Faults.Mapped), until t ends.
func poisonMapped(t *testing.T, suffix string, off int) {
	restore := persist.InjectFaults(&persist.Faults{Mapped: func(r *persist.Region) {
		if strings.HasSuffix(r.Info().Path, suffix) && r.Size() > off {
			require.NoError(t, r.Poison(off, 1))
		}
	}})
	t.Cleanup(restore)
}

func TestSortPoisonedInput(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 30000}) // 3 MB
	poisonMapped(t, filepath.Base(in), 1<<20)
	for _, mode := range []Mode{OnePass, MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 4 << 20, WriteBuffer: 16 << 10})
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
	_, err := sortbench.Validate(context.Background(), in, sortbench.ValidateOptions{})
	require.ErrorIs(t, err, persist.ErrMedia, "validate")
}

// A run file whose page goes bad as it is mapped: the run's writes fault
// (a store to poisoned media faults as a load does).
func TestSortPoisonedRunFile(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 30000})
	restore := persist.InjectFaults(&persist.Faults{Mapped: func(r *persist.Region) {
		if filepath.Dir(r.Info().Path) == tmp && r.Size() > 8192 {
			require.NoError(t, r.Poison(4096, 1))
		}
	}})
	defer restore()
	for _, mode := range []Mode{MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 1 << 20, WriteBuffer: 16 << 10, TempDir: tmp})
		require.ErrorIs(t, err, persist.ErrMedia, "mode %s", mode)
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
	restore := persist.InjectFaults(&persist.Faults{Sync: func(r *persist.Region, off, n int) error {
		if strings.Contains(filepath.Base(r.Info().Path), "out") {
			return syscall.EIO
		}
		return nil
	}})
	defer restore()
	for _, mode := range []Mode{OnePass, MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 4 << 20, WriteBuffer: 16 << 10})
		require.ErrorIs(t, err, persist.ErrSyncFailed, "mode %s: %v", mode, err)
		require.ErrorIs(t, err, syscall.EIO)
		_, serr := os.Stat(out)
		require.ErrorIs(t, serr, os.ErrNotExist, "mode %s: no output", mode)
		requireClean(t, dir)
		t.Logf("%s: %v", mode, err)
	}
}
