package persist

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist/device"
)

// TestDeviceOff: a region without a device keeps its inline fast paths and
// charges nothing; the dram profile is no device.
func TestDeviceOff(t *testing.T) {
	dram, err := device.Open("dram", nil)
	require.NoError(t, err)
	require.False(t, dram.Emulating())
	for _, dev := range []Device{nil, (*device.Device)(nil), dram} {
		r, err := Anonymous(1<<16, &Options{Device: dev})
		require.NoError(t, err)
		require.Nil(t, r.dev)
		require.Empty(t, r.Info().Device)
		require.NotEqual(t, kSim, r.kind, "no device: the region keeps its own kind")
		require.NoError(t, r.Close())
	}
	d, err := device.Open("optane-1dimm", nil)
	require.NoError(t, err)
	r, err := Anonymous(1<<16, &Options{Device: d})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, kSim, r.kind)
	require.False(t, r.fastNT)
	require.Nil(t, r.Domain(), "an emulating mapping is still a real one")
	require.Contains(t, r.String(), "emulating device optane-1dimm")
}
