//go:build linux

package persist

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fullDisk makes every fallocate fail with ENOSPC until the test ends.
func fullDisk(t *testing.T) {
	saved := fallocate
	fallocate = func(fd int, mode uint32, off, n int64) error { return unix.ENOSPC }
	t.Cleanup(func() { fallocate = saved })
}

// A full file system is an error when the file is created, opened for
// writing or grown — never a SIGBUS on a later store — and a failed create
// leaves no file behind, a failed Grow the file and mapping as they were.
func TestFullDiskIsAnErrorAtMapAndGrow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.pm")
	existing := filepath.Join(dir, "existing.pm")
	require.NoError(t, os.WriteFile(existing, make([]byte, 8192), 0o644))
	r, err := Map(filepath.Join(dir, "grow.pm"), &Options{Size: 8192, Create: true})
	require.NoError(t, err)
	defer r.Close()

	fullDisk(t)
	_, err = Map(path, &Options{Size: 1 << 20, Create: true})
	require.ErrorIs(t, err, unix.ENOSPC)
	require.ErrorContains(t, err, "preallocate")
	_, serr := os.Stat(path)
	require.ErrorIs(t, serr, os.ErrNotExist, "the failed create is removed")

	_, err = Map(existing, nil)
	require.ErrorIs(t, err, unix.ENOSPC, "opening for writing preallocates too")
	ro, err := Map(existing, &Options{ReadOnly: true})
	require.NoError(t, err, "a read-only mapping allocates nothing")
	ro.Close()
	sp, err := Map(existing, &Options{Sparse: true})
	require.NoError(t, err, "Sparse skips preallocation")
	sp.Close()

	r.Bytes()[100] = 7
	err = r.Grow(1 << 20)
	require.ErrorIs(t, err, unix.ENOSPC)
	require.Equal(t, 8192, r.Size())
	require.Equal(t, byte(7), r.Bytes()[100])
	st, err := os.Stat(filepath.Join(dir, "grow.pm"))
	require.NoError(t, err)
	require.Equal(t, int64(8192), st.Size(), "the file is cut back to the size still mapped")
}

func TestPlatformEADR(t *testing.T) {
	root := t.TempDir()
	glob := filepath.Join(root, "region*", "persistence_domain")
	require.False(t, platformEADR(glob), "no NVDIMM region: not eADR")
	region := func(name, domain string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name, "persistence_domain"), []byte(domain+"\n"), 0o644))
	}
	region("region0", "cpu_cache")
	require.True(t, platformEADR(glob))
	region("region1", "cpu_cache")
	require.True(t, platformEADR(glob))
	region("region2", "memory_controller")
	require.False(t, platformEADR(glob), "one ADR region: lines must be flushed")
	t.Logf("this machine: eADR=%v", platformEADR(eadrGlob))
}
