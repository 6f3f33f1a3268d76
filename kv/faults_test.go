package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
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
			faults := new(structtest.SyncFaults)
			o.Faults = faults.Faults()
			s := mustOpen(t, o)
			acked := map[string][]byte{}
			for i := range 2 { // one put per worker: each has its logs
				k, v := fmt.Sprintf("first%d", i), []byte("v")
				require.NoError(t, s.Put([]byte(k), v))
				acked[k] = v
			}
			faults.Fail(s.workers[0].m.g.r, after)
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
			require.Error(t, failed, "no write failed in %d syncs", faults.Syncs())
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
			faults.Lift()
			_ = s.Close() // its checkpoint may fail on the failed region: the logs have it all
			s = mustOpen(t, o)
			defer s.Close()
			verify(s, "reopened")
			require.NoError(t, s.Put([]byte("after"), []byte("reopen")))
		})
	}
}

// fullDir is a checkpoint directory on a full disk: every write fails
// with ENOSPC, as os.File.Write reports it (its temp file removed).
type fullDir struct{ fileDir }

func (d fullDir) write(name string, _ []byte) error {
	return &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
}

// A checkpoint on a full disk is ErrNoSpace; the store goes on serving and
// taking writes, the previous checkpoint stands, and a reopen (the disk
// with room again) has every acknowledged write.
func TestFullCheckpointDir(t *testing.T) {
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	for i := range 100 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "a%03d", i), []byte("1")))
	}
	require.NoError(t, s.Checkpoint())
	names, err := s.ckdir.list()
	require.NoError(t, err)
	good := s.ckdir
	s.ckdir = fullDir{good}
	for i := range 100 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "b%03d", i), []byte("2")))
	}
	err = s.Checkpoint()
	require.ErrorIs(t, err, ErrNoSpace)
	require.ErrorIs(t, err, persist.ErrFull)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 1, strings.Count(err.Error(), "kv:"), "%v", err)
	require.NoError(t, s.Put([]byte("c"), []byte("3")))
	v, err := s.Get([]byte("b042"))
	require.NoError(t, err)
	require.Equal(t, "2", string(v))
	after, err := good.list()
	require.NoError(t, err)
	require.Equal(t, names, after, "the checkpoints before the full disk stand")
	require.ErrorIs(t, s.Close(), ErrNoSpace) // its checkpoint fails too
	s = mustOpen(t, o)
	defer s.Close()
	for i := range 100 {
		for _, k := range []string{fmt.Sprintf("a%03d", i), fmt.Sprintf("b%03d", i)} {
			_, err := s.Get([]byte(k))
			require.NoError(t, err, k)
		}
	}
	v, err = s.Get([]byte("c"))
	require.NoError(t, err)
	require.Equal(t, "3", string(v))
}

// A device whose file system is full (fallocate ENOSPC at a log's
// extension, injected): a put there is ErrNoSpace naming the device and
// segment, nothing acknowledged is lost, and with room again the store
// takes writes.
func TestFullDeviceGrow(t *testing.T) {
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	for i := range 100 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%03d", i), []byte("v")))
	}
	require.NoError(t, s.Close())
	full := *o
	full.Faults = &persist.Faults{Alloc: func(string, int64, int64) error { return syscall.ENOSPC }}
	s = mustOpen(t, &full)
	var err error
	for i := 0; err == nil && i < 1<<20; i++ {
		err = s.Put(fmt.Appendf(nil, "x%07d", i), bytes.Repeat([]byte("v"), 1000))
	}
	require.ErrorIs(t, err, ErrNoSpace)
	require.ErrorIs(t, err, persist.ErrFull)
	require.NotErrorIs(t, err, ErrFull, "the file system is full, not the store")
	require.Contains(t, err.Error(), o.Devices[0])
	require.NoError(t, s.Close())
	s = mustOpen(t, o)
	defer s.Close()
	for i := range 100 {
		_, err := s.Get(fmt.Appendf(nil, "k%03d", i))
		require.NoError(t, err)
	}
	require.NoError(t, s.Put([]byte("more"), []byte("v")))
}
