//go:build unix

package kv

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes a flock on path: exclusive for a store opened to write
// (the file created if missing), shared for a read-only one (the file
// must exist: a read-only open writes nothing). Another open of the store
// that conflicts, in this process or another, gets ErrBusy: readers share
// a store, a writer has it alone. The kernel drops the lock when the
// process dies, SIGKILL included.
func lockFile(path string, shared bool) (*os.File, error) {
	flag, how, mode := os.O_RDWR|os.O_CREATE, syscall.LOCK_EX, "an open"
	if shared {
		flag, how, mode = os.O_RDONLY, syscall.LOCK_SH, "a read-write open"
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, lockErr(path, err)
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by %s of the store (this or another process)", ErrBusy, path, mode)
		}
		return nil, fmt.Errorf("kv: lock %s: %w", path, err)
	}
	return f, nil
}

func unlockFile(f *os.File) error {
	// Closing the descriptor releases the flock.
	return f.Close()
}
