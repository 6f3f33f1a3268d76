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

// freer is a device whose file system can say how much space it has and
// how much of it is free.
type freer interface {
	space() (free, total int64, err error)
}

// checkCreate refuses to create a store on dm when its file system could
// never hold DeviceSize (limit bytes), or has less free space than the n
// first segments take at once: a page each, and a window per log (grow.go).
func checkCreate(dm deviceMedia, n, windows int, limit int64) error {
	f, ok := dm.(freer)
	if !ok || n <= 0 {
		return nil
	}
	avail, total, err := f.space()
	if err != nil {
		return nil // no answer: the creation itself reports a full disk
	}
	if limit > total {
		return fmt.Errorf("%w: device %s: DeviceSize %s is more than its file system holds (%s, %s free): give a smaller DeviceSize",
			ErrNoSpace, dm.name(), persist.FormatSize(limit), mib(total), mib(avail))
	}
	if need := int64(n)*4096 + int64(windows); need > avail {
		return fmt.Errorf("%w: device %s: a new store takes %s at first, and %s is free there (DeviceSize %s is the most it may take)",
			ErrNoSpace, dm.name(), mib(need), mib(avail), persist.FormatSize(limit))
	}
	return nil
}

// checkSpace refuses to add a segment of size bytes to dm (segment seg)
// when its file system has less free space than the segment may take.
func checkSpace(dm deviceMedia, seg int, size, limit int64) error {
	f, ok := dm.(freer)
	if !ok {
		return nil
	}
	avail, _, err := f.space()
	if err != nil {
		return nil // no answer: the extension reports a full disk
	}
	if size > avail {
		return fmt.Errorf("%w: device %s: segment %d may take %s, and %s is free there: free space, or give a smaller DeviceSize (now %s) to stop the store short of it",
			ErrNoSpace, dm.name(), seg, persist.FormatSize(size), mib(avail), persist.FormatSize(limit))
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
