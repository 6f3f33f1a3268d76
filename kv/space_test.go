package kv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist"
)

// segFiles lists a device's segment and identity files.
func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "seg-*"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, idFile)); err == nil {
		m = append(m, idFile)
	}
	return m
}

// TestNoSpace (issue 26 point 4): a store whose DeviceSize its file system
// could never hold is refused before any segment is made, with the sizes
// and the option named.
func TestNoSpace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("statfs sizes of tmpfs")
	}
	o := testOptions(t, 1)
	o.DeviceSize = 1 << 50 // a PiB: no tmpfs here has it
	_, err := Open(o)
	require.ErrorIs(t, err, ErrNoSpace)
	require.ErrorIs(t, err, persist.ErrFull)
	require.Contains(t, err.Error(), "DeviceSize 1048576 GiB is more than its file system holds")
	require.Contains(t, err.Error(), "DeviceSize")
	require.Empty(t, segFiles(t, o.Devices[0]), "nothing created")
}

// TestFailedCreateRemovesWhatItMade: a creation that fails on its second
// device removes the segments and identity it made on the first, and
// leaves the file it found on the second.
func TestFailedCreateRemovesWhatItMade(t *testing.T) {
	o := testOptions(t, 2)
	foreign := filepath.Join(o.Devices[1], "seg-00000.kv")
	require.NoError(t, os.WriteFile(foreign, []byte("not a segment"), 0o644))
	_, err := Open(o)
	require.Error(t, err)
	require.Empty(t, segFiles(t, o.Devices[0]), "the first device's new segments removed")
	b, err := os.ReadFile(foreign)
	require.NoError(t, err)
	require.Equal(t, "not a segment", string(b))
}
