package main

import (
	"os"
	"strings"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort"
)

// deviceNames lists the shipped device profiles for the flag's help.
func deviceNames() string { return strings.Join(persist.DeviceNames(), ", ") }

// applyDevice puts the emulated device of -device (else BRAID_DEVICE) into
// o: a fresh device for each sorter, so that one mode's runs do not charge
// another's. Without -profile (or BRAID_PROFILE) the thread-pool
// controller reads the device's profile: the pools a real device of that
// profile would get.
func (f *sortFlags) applyDevice(o *sort.Options) error {
	spec, from := f.device, "-device"
	if spec == "" {
		spec, from = os.Getenv("BRAID_DEVICE"), "BRAID_DEVICE="+os.Getenv("BRAID_DEVICE")
	}
	if spec == "" {
		return nil
	}
	dev, err := persist.OpenDevice(spec, nil)
	if err != nil {
		return usagef("%s: %v", from, err)
	}
	o.Device = dev
	if o.Profile == nil && dev.Emulating() {
		p := dev.Profile()
		o.Profile, o.ProfileName = &p, "device "+dev.Name()
	}
	return nil
}
