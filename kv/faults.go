package kv

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"

	"github.com/braid-pm/braid/persist"
)

// Failed durability calls are final (persist's ErrSyncFailed: after a
// failed msync the kernel may have dropped the pages, so a retry that
// succeeds would acknowledge writes that are gone). The first one the
// store meets fails it: no write is acknowledged after it — not even one
// whose own segment still syncs — and every later write returns the
// failure. Gets, Check, Checkpoint and Close go on.
type failure struct{ err atomic.Pointer[error] }

// fail records err if it is a failed durability call.
func (s *Store) fail(err error) {
	if err != nil && errors.Is(err, persist.ErrSyncFailed) {
		s.failed.err.CompareAndSwap(nil, &err)
	}
}

// failure is the store's failure, nil while it has none.
func (s *Store) failure() error {
	if s.c.ReadOnly {
		return ErrReadOnly // every write checks failure first (readonly.go)
	}
	if p := s.failed.err.Load(); p != nil {
		return fmt.Errorf("kv: a durability call failed, no write is acknowledged since: %w", *p)
	}
	return nil
}

// fullErr is err of what (a file or mapping that could not be
// allocated: ENOSPC, EDQUOT, persist.ErrFull, is an ErrNoSpace: the file
// system is full, where ErrFull is the store at its DeviceSize).
func fullErr(what string, err error) error {
	if errors.Is(err, persist.ErrFull) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %s: %w", ErrNoSpace, what, err)
	}
	return fmt.Errorf("kv: %s: %w", what, err)
}
