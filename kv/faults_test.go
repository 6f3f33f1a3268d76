package kv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// A failed msync of one worker's metadata segment (-pmem off: segments
// made durable with msync) fails the store: the write whose sync failed
// returns persist.ErrSyncFailed, no later write is acknowledged — puts,
// deletes, batches and async puts, those routed to the other worker's
// healthy segments included — every acknowledged value still reads, and
// after a reopen (the fault lifted) every acknowledged write is there, the
// failed one old or new as after a crash during it.
func TestSyncFailure(t *testing.T) {
	for _, after := range []int{0, 3, 17} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			o := testOptions(t, 1)
			o.PMem = false
			s := mustOpen(t, o)
			acked := map[string][]byte{}
			for i := range 2 { // one put per worker: each has its logs
				k, v := fmt.Sprintf("first%d", i), []byte("v")
				require.NoError(t, s.Put([]byte(k), v))
				acked[k] = v
			}
			syncs := structtest.FailSyncs(t, s.workers[0].m.g.r, after)
			var failed error
			var inflight string
			var inflightVal []byte // nil: a delete
			for op := range 200 {
				k := fmt.Sprintf("k%03d", op%40)
				v := bytes.Repeat([]byte{byte(op)}, 100+op)
				var err error
				del := op%7 == 3
				switch {
				case del:
					err = s.Delete([]byte(k))
				case op%3 == 0:
					var b Batch
					b.Put([]byte(k), v)
					err = s.Apply(&b)
				case op%3 == 1:
					done := make(chan error, 1)
					if err = s.PutAsync([]byte(k), v, func(_ Token, err error) { done <- err }); err == nil {
						err = <-done
					}
				default:
					err = s.Put([]byte(k), v)
				}
				switch {
				case err == nil && failed != nil:
					t.Fatalf("op %d on %s acknowledged after a failed sync (%v)", op, k, failed)
				case err == nil && del:
					delete(acked, k)
				case err == nil:
					acked[k] = v
				case !errors.Is(err, persist.ErrSyncFailed):
					t.Fatalf("op %d: %v, want persist.ErrSyncFailed", op, err)
				case failed == nil:
					failed, inflight = err, k
					if !del {
						inflightVal = v
					}
				}
			}
			require.Error(t, failed, "no write failed in %d syncs", *syncs)
			verify := func(s *Store, when string) {
				t.Helper()
				for k, v := range acked {
					got, err := s.Get([]byte(k))
					if k == inflight && (err == nil && bytes.Equal(got, inflightVal) || inflightVal == nil && errors.Is(err, ErrNotFound)) {
						continue
					}
					require.NoError(t, err, "%s: acknowledged %s", when, k)
					require.Equal(t, v, got, "%s: acknowledged %s", when, k)
				}
			}
			verify(s, "after the failed sync")
			require.NoError(t, s.Check())
			persist.InjectFaults(nil)
			_ = s.Close() // its checkpoint may fail on the failed region: the logs have it all
			s = mustOpen(t, o)
			defer s.Close()
			verify(s, "reopened")
			require.NoError(t, s.Put([]byte("after"), []byte("reopen")))
		})
	}
}
