package kv

import (
	"errors"
	"fmt"
	"os"

	"github.com/braid-pm/braid/persist"
)

// Before segments are created, the device's file system is asked for its
// free space (statfs): a store that cannot fit is refused with the sizes
// and the option that sets them, instead of filling the disk and failing
// half way with "store is full". And a creation that fails removes the
// files it made (segments, identity), so that a failed create leaves the
// devices as they were.

// ErrNoSpace: the file system of a device has less free space than the
// segments to create need (the message names both and DeviceSize).
var ErrNoSpace = persist.NewError("kv: not enough free space for the store", persist.ErrFull)

// freer is a device whose file system can say how much space is free.
type freer interface{ free() (int64, error) }

// checkSpace refuses to create n segments of size bytes on d when its file
// system has less free space.
func checkSpace(dm deviceMedia, n int, size, deviceSize int64) error {
	f, ok := dm.(freer)
	if !ok || n <= 0 {
		return nil
	}
	avail, err := f.free()
	if err != nil {
		return nil // no answer: the creation itself reports a full disk
	}
	if need := int64(n) * size; need > avail {
		return fmt.Errorf("%w: device %s: %d segments of %s need %s, and %s is free there: give a smaller DeviceSize (now %s) or free space",
			ErrNoSpace, dm.name(), n, persist.FormatSize(size), persist.FormatSize(need), mib(avail), persist.FormatSize(deviceSize))
	}
	return nil
}

// unmake removes the files this open created on the device (after its
// regions were closed): a failed creation leaves nothing behind.
func (d *fileDevice) unmake() error {
	var errs []error
	for i := len(d.made) - 1; i >= 0; i-- {
		if err := os.Remove(d.made[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	d.made = nil
	return errors.Join(errs...)
}

// undoCreate removes what a failed Open of a new store made.
func (s *Store) undoCreate() {
	if !s.rep.Created {
		return
	}
	for _, d := range s.devs {
		if fd, ok := d.dm.(*fileDevice); ok {
			_ = fd.unmake()
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
