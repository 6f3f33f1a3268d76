package structtest

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/braid-pm/braid/persist"
)

// FailSyncs makes every sync of r after the first after ones fail with EIO
// (persist.InjectFaults), until t ends, and returns the count of r's syncs
// so far. The hooks are process-wide: a test that calls it must not run
// in parallel.
func FailSyncs(t testing.TB, r *persist.Region, after int) *int {
	t.Helper()
	n := new(int)
	restore := persist.InjectFaults(&persist.Faults{Sync: func(x *persist.Region, off, size int) error {
		if x != r {
			return nil
		}
		*n++
		if *n > after {
			return syscall.EIO
		}
		return nil
	}})
	t.Cleanup(restore)
	return n
}

// SyncFailure is the sync-failure test of an object array a over r, a
// region made durable with msync (MapFile): after `after` good syncs every
// sync fails (FailSyncs). It updates objects until one Update fails, then
// asserts that the failure is persist.ErrSyncFailed, that no later Update
// is acknowledged (each returns ErrSyncFailed) or changes its object, that
// every acknowledged value still reads (the object of the Update that
// failed: its old value or the new one, as after a crash during it), and
// that the array opened with open from r's file mapped again (the hooks
// removed) holds every acknowledged value.
func SyncFailure(t testing.TB, r *persist.Region, a Objects, open func(*persist.Region) (Objects, error), after int) {
	t.Helper()
	syncs := FailSyncs(t, r, after)
	n, size := a.Len(), a.Size()
	acked := make([][]byte, n)
	rng := NewRand(uint64(after))
	var failed error
	inflight, next := -1, []byte(nil)
	for op := 0; op < 4*after+16; op++ {
		i := op % n
		v := make([]byte, size)
		rng.Fill(v)
		err := a.Update(i, v)
		switch {
		case err == nil && failed != nil:
			t.Fatalf("Update %d of object %d acknowledged after a failed sync (%v)", op, i, failed)
		case err == nil:
			acked[i] = v
		case !errors.Is(err, persist.ErrSyncFailed):
			t.Fatalf("Update %d of object %d: %v, want persist.ErrSyncFailed", op, i, err)
		case failed == nil:
			// Like a crash during it: the object is its old value or v.
			failed, inflight, next = err, i, v
		}
	}
	if failed == nil {
		t.Fatalf("no Update failed in %d syncs", *syncs)
	}
	if !errors.Is(r.Failed(), persist.ErrSyncFailed) {
		t.Fatalf("the region is not failed: %v", r.Failed())
	}
	buf := make([]byte, size)
	verify := func(a Objects, when string) {
		t.Helper()
		for i, v := range acked {
			if v == nil {
				continue
			}
			err := a.Read(i, buf)
			if err == nil && i == inflight && bytes.Equal(buf, next) {
				continue
			}
			if err != nil || !bytes.Equal(buf, v) {
				t.Fatalf("%s: object %d reads %x, %v; acknowledged %x", when, i, buf, err, v)
			}
		}
	}
	verify(a, "after the failed sync")
	persist.InjectFaults(nil)
	if err := a.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("close the failed region: %v", err)
	}
	r2, err := persist.Map(r.Info().Path, nil)
	if err != nil {
		t.Fatalf("map %s again: %v", r.Info().Path, err)
	}
	defer r2.Close()
	b, err := open(r2)
	if err != nil {
		t.Fatalf("reopen after the failed sync: %v", err)
	}
	defer b.Close()
	verify(b, "reopened")
}

// Remap closes r, a region of a file, maps the file again read-write and
// returns the new region, closed when t ends: how a test sees what the
// file holds after a failure, as a restarted program would.
func Remap(t testing.TB, r *persist.Region) *persist.Region {
	t.Helper()
	path := r.Info().Path
	if err := r.Close(); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
	r2, err := persist.Map(path, nil)
	if err != nil {
		t.Fatalf("map %s again: %v", path, err)
	}
	t.Cleanup(func() { r2.Close() })
	return r2
}
