package cli

import (
	"os"
	"strings"

	"github.com/braid-pm/braid/persist/device"
)

// DeviceNames lists the shipped device profiles, for a -device flag's help.
func DeviceNames() string { return strings.Join(device.Names(), ", ") }

// Device opens the emulated device that a command's -device flag names
// (spec), else BRAID_DEVICE's; nil when neither is set. A name or file
// that is not a device profile is a usage error saying where it came
// from ("-device: ..." or "BRAID_DEVICE=x: ...").
func Device(spec string, opts *device.Options) (*device.Device, error) {
	from := "-device"
	if spec == "" {
		spec = os.Getenv("BRAID_DEVICE")
		from = "BRAID_DEVICE=" + spec
	}
	if spec == "" {
		return nil, nil
	}
	d, err := device.Open(spec, opts)
	if err != nil {
		return nil, Usagef("%s: %v", from, err)
	}
	return d, nil
}
