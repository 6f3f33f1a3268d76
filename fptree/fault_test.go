package fptree

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// A failed sync (msync EIO) fails the tree's region for good: the Put (or
// PutBatch, Delete) that met it and every later change return
// persist.ErrSyncFailed, nothing is acknowledged after it, every
// acknowledged key reads, and the tree reopened from its file holds them.
// A full tree is ErrFull with every acknowledged key kept
// (TestTooSmallAndFull).
func TestSyncFailure(t *testing.T) {
	for after := 5; after <= 80; after += 25 {
		r, faults := structtest.MapFaulty(t, 64<<10)
		require.Equal(t, persist.ModeMsync, r.Info().Mode)
		tr, err := Create(r, &Options{LeafSlots: 4})
		require.NoError(t, err)
		faults.Fail(r, after)
		acked := map[uint64]uint64{}
		var failed error
		inflight := map[uint64]bool{}
		for op := range 200 {
			k := uint64(op*7919) % 97
			var err error
			switch op % 5 {
			case 3:
				_, err = tr.Delete(k)
			case 4:
				keys := []uint64{k, k + 100, k + 200}
				err = tr.PutBatch(keys, []uint64{1, 2, 3})
				if err == nil {
					acked[k], acked[k+100], acked[k+200] = 1, 2, 3
				} else if failed == nil {
					inflight[k], inflight[k+100], inflight[k+200] = true, true, true
				}
			default:
				err = tr.Put(k, uint64(op))
				if err == nil {
					acked[k] = uint64(op)
				} else if failed == nil {
					inflight[k] = true
				}
			}
			if op%5 == 3 {
				if err == nil {
					delete(acked, k)
				} else if failed == nil {
					inflight[k] = true
				}
			}
			switch {
			case err == nil && failed != nil:
				t.Fatalf("after %d syncs: op %d acknowledged after a failed sync (%v)", after, op, failed)
			case err != nil && !errors.Is(err, persist.ErrSyncFailed):
				t.Fatalf("after %d syncs: op %d: %v, want persist.ErrSyncFailed", after, op, err)
			case err != nil && failed == nil:
				failed = err
			}
		}
		require.Error(t, failed, "after %d syncs", after)
		verify := func(tr *Tree) {
			for k, v := range acked {
				if inflight[k] {
					continue // the change that met the failure: old or new
				}
				got, ok, err := tr.Get(k)
				require.NoError(t, err)
				require.True(t, ok, "after %d syncs: key %d", after, k)
				require.Equal(t, v, got, "key %d", k)
			}
		}
		verify(tr)
		require.NoError(t, tr.Close())
		path := r.Info().Path
		require.NoError(t, r.Close())
		r2, err := persist.Map(path, nil) // without the faults
		require.NoError(t, err)
		tr2, err := Open(r2, nil)
		require.NoError(t, err)
		verify(tr2)
		require.NoError(t, tr2.Check())
		require.NoError(t, tr2.Close())
		require.NoError(t, r2.Close())
	}
}
