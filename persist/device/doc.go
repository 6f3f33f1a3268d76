// Package device is braid's device model: the device profile that
// cmd/pmbench measures and the layers above read (thread-pool sizes, the
// streaming-store threshold), the shipped profiles of Optane and CXL
// devices, and the emulated Device that runs a profile's model on DRAM —
// a region mapped with one (persist.Options.Device, BRAID_DEVICE) charges
// it for the bytes it writes back and the reads it declares, and the
// calling goroutine sleeps for the device time they cost. persist holds
// only the small interface a region charges (persist.Device); this
// package implements it. The persist README's "Emulated devices" has the
// model, the profiles and the reproduced figures.
package device

import "github.com/braid-pm/braid/internal/perr"

// ErrInvalid is returned for a bad profile, spec or option; it matches
// persist.ErrInvalid under errors.Is.
var ErrInvalid = perr.New("device: invalid argument", perr.ErrInvalid)
