package cli

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDevice: -device wins over BRAID_DEVICE, neither is no device, and a
// name that is no profile is a usage error saying where it came from.
func TestDevice(t *testing.T) {
	t.Setenv("BRAID_DEVICE", "")
	d, err := Device("", nil)
	require.NoError(t, err)
	require.Nil(t, d)

	d, err = Device("optane-1dimm", nil)
	require.NoError(t, err)
	require.Equal(t, "optane-1dimm", d.Name())
	require.True(t, d.Emulating())

	t.Setenv("BRAID_DEVICE", "cxl-mssd")
	d, err = Device("", nil)
	require.NoError(t, err)
	require.Equal(t, "cxl-mssd", d.Name())
	d, err = Device("optane-6dimm", nil)
	require.NoError(t, err)
	require.Equal(t, "optane-6dimm", d.Name(), "the flag wins")

	t.Setenv("BRAID_DEVICE", "nosuch")
	_, err = Device("", nil)
	var ue UsageError
	require.True(t, errors.As(err, &ue), "%v", err)
	require.Contains(t, err.Error(), `BRAID_DEVICE=nosuch: `)
	require.Contains(t, err.Error(), `no device profile "nosuch"`)
	_, err = Device("alsonot", nil)
	require.True(t, errors.As(err, &ue))
	require.Contains(t, err.Error(), `-device: `)
	require.Contains(t, DeviceNames(), "optane-1dimm")
}
