package kv

import (
	"fmt"
	"os"
	"strings"

	pmdevice "github.com/braid-pm/braid/persist/device"
)

// Emulated devices (Options.Emulate). persist's BRAID_DEVICE would make one
// device for the whole process; a store makes one per device directory
// instead, so that its devices add up as real ones do (SKYE's device
// scaling). Writes are charged by the segments' Copy, Set and Persist;
// reads are declared where the store reads records: Store.record (gets)
// and the replay of recovery.

// resolveEmulation takes BRAID_DEVICE when Emulate is not set, checks the
// profile, and lets it size the workers when there is no Profile.
func (c *config) resolveEmulation() error {
	if c.Emulate == nil {
		spec := strings.TrimSpace(os.Getenv("BRAID_DEVICE"))
		if spec == "" || spec == "dram" {
			return nil
		}
		d, err := pmdevice.Open(spec, nil)
		if err != nil {
			return fmt.Errorf("%w: BRAID_DEVICE=%s: %v", ErrInvalid, spec, err)
		}
		p := d.Profile()
		c.Emulate = &p
	}
	if _, err := pmdevice.New(c.Emulate, nil); err != nil {
		return fmt.Errorf("%w: Options.Emulate: %v", ErrInvalid, err)
	}
	if c.Profile == nil && c.Emulate.Model != nil {
		c.Profile = c.Emulate
	}
	return nil
}

// emulated is a new emulated device for device directory dev, or nil. On
// a NUMA node (numa.go) it charges accesses from other nodes at the
// profile's remote cost.
func (c *config) emulated(dev int) (*pmdevice.Device, error) {
	if c.Emulate == nil || c.Emulate.Model == nil {
		return nil, nil
	}
	var o *pmdevice.Options
	if n := c.deviceNode(dev); n >= 0 {
		o = &pmdevice.Options{NUMA: &pmdevice.NUMA{Node: n, SysfsRoot: c.SysfsRoot}}
	}
	return pmdevice.New(c.Emulate, o)
}

// Emulated returns the emulated device of each of Options.Devices (nil
// entries without Options.Emulate), to read what they were charged
// (persist.Device.Stats).
func (s *Store) Emulated() []*pmdevice.Device {
	out := make([]*pmdevice.Device, len(s.devs))
	for i, d := range s.devs {
		if f, ok := d.dm.(*fileDevice); ok {
			out[i] = f.emu
		}
	}
	return out
}
