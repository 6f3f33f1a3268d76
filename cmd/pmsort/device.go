package main

import (
	"time"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/persist/device"
	"github.com/braid-pm/braid/sort"
)

// deviceOptions: a sort's phases last from tens of milliseconds to many
// seconds, so its devices take a deeper token bucket than persist's
// default (2 ms): a lane idle for a while may run 10 ms ahead, which
// absorbs the late wake-ups of a loaded host (a sleeping sorter goroutine
// woken a few ms late no longer loses that time) and gives each phase
// change at most 10 ms of free device time.
var deviceOptions = &device.Options{Burst: 10 * time.Millisecond}

// applyDevice puts the emulated device of -device (else BRAID_DEVICE) into
// o: a fresh device for each sorter, so that one mode's runs do not charge
// another's. Without -profile (or BRAID_PROFILE) the thread-pool
// controller reads the device's profile: the pools a real device of that
// profile would get.
func (f *sortFlags) applyDevice(o *sort.Options) error {
	dev, err := cli.Device(f.device, deviceOptions)
	if err != nil || dev == nil {
		return err
	}
	o.Device = dev
	if o.Profile == nil && dev.Emulating() {
		p := dev.Profile()
		o.Profile, o.ProfileName = &p, "device "+dev.Name()
	}
	return nil
}
