package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/persist/device"
)

// TestDeviceRun: -device measures an emulated device, compares its curves
// with the profile's, writes a profile with the measured model (which can
// be emulated in turn) and draws the curves with -plot.
func TestDeviceRun(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.json")
	plots := filepath.Join(dir, "plots")
	require.NoError(t, os.Mkdir(plots, 0o755))
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{
		"-quick", "-force-pmem", "-file", filepath.Join(dir, "bench.pm"), "-size", "8M", "-duration", "5ms", "-threads", "2",
		"-device", "optane-1dimm", "-profile", prof, "-plot", plots,
	}, &out, &errOut)
	require.Equal(t, cli.ExitOK, code, "stderr: %s", errOut.String())
	text := out.String()
	for _, want := range []string{"emulating device optane-1dimm", "emulated device optane-1dimm: measured bandwidth against the profile's",
		"sequential read", "random read", "write (streaming, durable)", "largest distance from the profile"} {
		require.Contains(t, text, want)
	}
	p, err := device.LoadProfile(prof)
	require.NoError(t, err)
	require.NotNil(t, p.Model)
	require.Len(t, p.Model.SeqRead, 2)
	require.Len(t, p.Model.Write, 2)
	require.Equal(t, 256, p.Model.Granularity, "the emulated profile's unit")
	require.Contains(t, p.Source, "emulating optane-1dimm")
	d, err := device.Open(prof, nil)
	require.NoError(t, err, "a measured profile can be emulated")
	require.True(t, d.Emulating())
	for _, f := range []string{"bandwidth-read-seq.svg", "bandwidth-read-seq.png", "bandwidth-write-nt-seq.svg", "bandwidth-read-rand.png"} {
		st, err := os.Stat(filepath.Join(plots, f))
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

// TestDeviceFlags: a device or plot directory that cannot be used is bad
// usage, found before anything is measured.
func TestDeviceFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-device", "optane-7dimm"}, "-device: "},
		{[]string{"-device", filepath.Join(dir, "missing.json")}, "-device: "},
		{[]string{"-plot", filepath.Join(dir, "missing")}, "-plot "},
		{[]string{"-mode", "copy", "-plot", dir}, "-plot draws the device mode's curves"},
		{[]string{"-mode", "scaling"}, "-mode scaling measures emulated devices"},
		{[]string{"-mode", "scaling", "-device", "dram"}, "-mode scaling measures emulated devices"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append(tc.args, "-file", filepath.Join(dir, "bench.pm")), &out, &errOut)
		require.Equal(t, cli.ExitUsage, code, "%v", tc.args)
		require.Contains(t, errOut.String(), tc.want)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// TestScalingRun: -mode scaling runs the device's load on 1, 2 and 4
// emulated devices and reports each count's bandwidth (the figures are
// the README's, measured on a slowed device; here only that every device
// count was measured).
func TestScalingRun(t *testing.T) {
	t.Setenv("BRAID_DEVICE", "")
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{
		"-mode", "scaling", "-force-pmem", "-file", filepath.Join(dir, "bench.pm"), "-size", "8M", "-duration", "5ms",
		"-device", "optane-1dimm", "-json",
	}, &out, &errOut)
	require.Equal(t, cli.ExitOK, code, "stderr: %s", errOut.String())
	var rep struct {
		Results []device.Point `json:"results"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	seen := map[string]bool{}
	for _, p := range rep.Results {
		require.Positive(t, p.GBs, "%+v", p)
		seen[p.Op+" "+p.Pattern] = true
		switch p.Op {
		case "write-nt":
			require.Zero(t, p.Threads%4, "4 writers per device (optane-1dimm's write peak): %+v", p)
		case "read":
			require.Zero(t, p.Threads%6, "6 readers per device (its read peak): %+v", p)
		}
	}
	for _, k := range []string{"1", "2", "4"} {
		for _, w := range []string{"write-nt %s-devices", "read %s-devices", "read %s-devices-mixed", "write-nt %s-devices-mixed"} {
			require.True(t, seen[fmt.Sprintf(w, k)], "%s: %v", fmt.Sprintf(w, k), seen)
		}
	}
	require.Len(t, rep.Results, 12)
}
