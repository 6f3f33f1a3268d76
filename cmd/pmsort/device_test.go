package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchDevice: bench on an emulated device, with overlapped modes, a
// writer sweep and the phase plot in SVG and PNG; the pools come from the
// device's profile.
func TestBenchDevice(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "phases.svg")
	code, stdout, msg := pmsort(t, "bench", "-n", "20000", "-runs", "1", "-dir", dir, "-device", "optane-1dimm",
		"-modes", "ems,onepass-overlap", "-sweep-writers", "1,3", "-plot", svg)
	require.Equal(t, 0, code, msg)
	for _, want := range []string{"EMS", "OnePass-overlap", "OnePass-w1", "OnePass-w3", "emulating device optane-1dimm",
		"pools 6/3/", "profile device optane-1dimm", "plot: " + svg} {
		require.Contains(t, stdout, want)
	}
	for _, f := range []string{svg, filepath.Join(dir, "phases.png")} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.Positive(t, st.Size())
		require.NoError(t, os.Remove(f))
	}
	left, _ := os.ReadDir(dir)
	require.Empty(t, left)
}

// TestDeviceFlagErrors: a device, sweep or plot that cannot be used is bad
// usage (exit 2), found before anything is written.
func TestDeviceFlagErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	code, _, msg := pmsort(t, "gen", "1000", in)
	require.Equal(t, 0, code, msg)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sort", "-i", in, "-o", filepath.Join(dir, "out"), "-device", "optane-7dimm"}, "-device: "},
		{[]string{"bench", "-dir", dir, "-device", filepath.Join(dir, "missing.json")}, "-device: "},
		{[]string{"bench", "-dir", dir, "-sweep-writers", "1,0"}, "-sweep-writers"},
		{[]string{"bench", "-dir", dir, "-plot", filepath.Join(dir, "x.png")}, "-plot"},
	} {
		code, _, msg := pmsort(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, msg)
		require.Contains(t, msg, c.want)
	}
	t.Setenv("BRAID_DEVICE", "nvme")
	code, _, msg = pmsort(t, "sort", "-i", in, "-o", filepath.Join(dir, "out"))
	require.Equal(t, 2, code, msg)
	require.Contains(t, msg, "BRAID_DEVICE=nvme")
	left, _ := os.ReadDir(dir)
	require.Len(t, left, 1, "only the input")
}
