package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/braid-pm/braid/persist"
)

// A read-only open (Options.ReadOnly) reads a store and writes nothing:
// no file is created, changed or removed (the segments are mapped
// read-only, the checkpoint directory is not probed, a torn tail that a
// read-write open would zero is left as it is and reported), no start-up
// GC, no background work (merger, cleaner, pre-faulting, checkpoints), no
// checkpoint at Close. Readers share the store's lock; a writer excludes
// them (ErrBusy either way round), so that no segment changes under a
// reader.

// ErrReadOnly: a write (Put, Delete, Apply, GC, Checkpoint) on a store
// opened with Options.ReadOnly.
var ErrReadOnly = persist.NewError("kv: store is open read-only", persist.ErrReadOnly)

// lockErr is the error of a lock file that cannot be opened: a path that
// is not permitted names the permission (errors.Is(err, fs.ErrPermission)),
// not "invalid argument".
func lockErr(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("kv: device lock %s: permission denied (the store's files belong to another user, or the directory is read-only): %w", path, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: device lock %s does not exist: not a kv store, or one never opened read-write", ErrBadFormat, path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%w: device lock %s: %v", ErrInvalid, path, err)
}

// readOnlyCheckpoints is the checkpoint directory of a read-only open: it
// must exist (a read-only open creates nothing) and is not probed.
func readOnlyCheckpoints(dir string) (fileDir, error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: checkpoint directory: %v", ErrInvalid, err)
	case !st.IsDir():
		return nil, fmt.Errorf("%w: checkpoint directory %s is not a directory", ErrInvalid, dir)
	}
	return osDir(dir), nil
}

// writable is nil for a store opened to write, else ErrReadOnly.
func (s *Store) writable() error {
	if s.c.ReadOnly {
		return ErrReadOnly
	}
	return nil
}
