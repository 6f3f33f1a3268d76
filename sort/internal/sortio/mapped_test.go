package sortio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// On tmpfs the output is not preallocated; a piece whose pages cannot be
// allocated (here: the file was truncated behind the mapping, as a full
// file system would refuse them) is an ErrNoSpace error, not a SIGBUS.
func TestSparseOutputCannotAllocate(t *testing.T) {
	dir := structtest.ShmDir()
	if !DirOnTmpfs(dir) || !CanPopulate() {
		t.Skip("needs tmpfs at structtest.ShmDir() and MADV_POPULATE_WRITE")
	}
	path := filepath.Join(dir, fmt.Sprintf("braid-sort-test-%d", os.Getpid()))
	defer os.Remove(path)
	m, err := CreateMapped(path, 1<<20, true)
	require.NoError(t, err)
	defer m.Close()
	require.True(t, m.Sparse)
	require.NoError(t, m.Put(0, make([]byte, 8192)))
	require.NoError(t, os.Truncate(path, 4096))
	err = m.Put(64<<10, make([]byte, 8192))
	require.ErrorIs(t, err, ErrNoSpace)
}

// TestPopulateError: pages of a sparse file the file system refuses are
// reported as what happened — no space left on device (ErrNoSpace and
// ENOSPC) when the free space, read after the failure, does not cover them
// or the kernel said ENOSPC; otherwise a refusal that names the free space.
// Never the bare errno text (tmpfs says EFAULT, "bad address", when full).
func TestPopulateError(t *testing.T) {
	dir := t.TempDir()
	m := &Mapped{Path: filepath.Join(dir, ".out.pmsort-1-ab.tmp"), Label: "output " + filepath.Join(dir, "out"), Sparse: true}
	gone := &Mapped{Path: filepath.Join(dir, "gone", "pmsort-run-1"), Sparse: true}
	for _, c := range []struct {
		name string
		m    *Mapped
		n    int64
		err  error
		full bool
		text string
	}{
		{"ENOSPC", m, 4096, unix.ENOSPC, true, "no space left on device for output " + filepath.Join(dir, "out") + " (" + m.Path + "): cannot allocate 4096 bytes at offset 8192"},
		{"EFAULT, full", m, 1 << 60, unix.EFAULT, true, "no space left on device for output"},
		{"ENOMEM, full", m, 1 << 60, unix.ENOMEM, true, "no space left on device for output"},
		{"EFAULT, space free", m, 4096, unix.EFAULT, false, "the file system refused the pages (bad address) though " + dir + " has"},
		{"ENOMEM, space free", m, 4096, unix.ENOMEM, false, "(out of memory, or a size limit?)"},
		{"EFAULT, no statfs", gone, 4096, unix.EFAULT, true, "no space left on device for " + gone.Path + ": cannot allocate 4096 bytes at offset 8192 (" + filepath.Dir(gone.Path) + " has its free space unknown)"},
	} {
		err := c.m.populateError(8192, c.n, c.err)
		require.ErrorIs(t, err, ErrNoSpace, c.name)
		require.Equal(t, c.full, errors.Is(err, syscall.ENOSPC), c.name)
		require.Contains(t, err.Error(), c.text, c.name)
		if c.full {
			require.NotContains(t, err.Error(), "bad address", c.name)
		}
	}
}
