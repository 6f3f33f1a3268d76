package structtest

import (
	"bytes"
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/braid-pm/braid/persist"
)

// SyncFaults fail the syncs of one region on demand (EIO), for the
// sync-failure tests: map the region with Faults in its options (or give
// them to a structure that maps its own regions, such as kv), then Fail.
// They belong to the regions mapped with them: tests that use them may
// run in parallel. The zero value is ready; it fails nothing until Fail.
type SyncFaults struct {
	mu    sync.Mutex
	r     *persist.Region // the region whose syncs fail; nil: none
	after int             // syncs of r that succeed first
	syncs int             // syncs of r asked about since Fail
}

// Faults returns the persist.Faults to map regions with.
func (f *SyncFaults) Faults() *persist.Faults {
	return &persist.Faults{Sync: func(x *persist.Region, off, n int) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		if x != f.r || f.r == nil {
			return nil
		}
		f.syncs++
		if f.syncs > f.after {
			return syscall.EIO
		}
		return nil
	}}
}

// Fail makes every sync of r, a region mapped with f's Faults, after the
// first after ones fail with EIO, until Lift.
func (f *SyncFaults) Fail(r *persist.Region, after int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.r, f.after, f.syncs = r, after, 0
}

// Syncs returns how many syncs of the region were asked for since Fail.
func (f *SyncFaults) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// Lift ends the failures: the region that failed stays failed (persist's
// rule), regions mapped with f later sync normally.
func (f *SyncFaults) Lift() { f.Fail(nil, 0) }

// MapFaulty maps a new file of size bytes in t's temporary directory like
// MapFile (the msync path) with SyncFaults that fail nothing until Fail,
// closed when t ends.
func MapFaulty(t testing.TB, size int) (*persist.Region, *SyncFaults) {
	t.Helper()
	f := new(SyncFaults)
	path := filepath.Join(t.TempDir(), "region.pm")
	r, err := persist.Map(path, &persist.Options{Size: int64(size), Create: true, Faults: f.Faults()})
	if err != nil {
		t.Fatalf("map %d bytes at %s: %v", size, path, err)
	}
	t.Cleanup(func() { r.Close() })
	return r, f
}

// SyncFailure is the sync-failure test of an object array a over r, a
// region made durable with msync mapped with faults (MapFaulty): after
// `after` good syncs every sync fails. It updates objects until one Update fails, then
// asserts that the failure is persist.ErrSyncFailed, that no later Update
// is acknowledged (each returns ErrSyncFailed) or changes its object, that
// every acknowledged value still reads (the object of the Update that
// failed: its old value or the new one, as after a crash during it), and
// that the array opened with open from r's file mapped again (without
// the faults) holds every acknowledged value.
func SyncFailure(t testing.TB, r *persist.Region, faults *SyncFaults, a Objects, open func(*persist.Region) (Objects, error), after int) {
	t.Helper()
	faults.Fail(r, after)
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
		t.Fatalf("no Update failed in %d syncs", faults.Syncs())
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
