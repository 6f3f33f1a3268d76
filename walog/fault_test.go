package walog_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// A failed sync (msync EIO) is final: the append (or batch) that met it
// and every later write return persist.ErrSyncFailed, nothing is
// acknowledged after it, every acknowledged entry still reads, and the
// log opened again from its file (without the faults) holds every
// acknowledged entry, and of the append that failed nothing or all.
func TestSyncFailure(t *testing.T) {
	for _, f := range formats {
		for _, after := range []int{2, 9, 40} {
			t.Run(fmt.Sprintf("%s/after-%d", f, after), func(t *testing.T) {
				r, faults := structtest.MapFaulty(t, 64<<10)
				require.Equal(t, persist.ModeMsync, r.Info().Mode)
				l, err := walog.Create(r, &walog.Options{Format: f, Chunk: 4096})
				require.NoError(t, err)
				faults.Fail(r, after)
				var acked, inflight [][]byte
				var failed error
				truncating := false // the write that failed is a Truncate
				for op := range 120 {
					p := crashPayload(uint64(op+1), 1+op*37%300)
					var err error
					batch := [][]byte{p}
					switch op % 7 {
					case 3:
						batch = [][]byte{p, crashPayload(uint64(op+1000), 20)}
						_, err = l.AppendBatch(batch)
					case 5:
						err = l.Truncate(uint64(len(acked)))
						batch = nil
					default:
						_, err = l.Append(p)
					}
					switch {
					case err == nil && failed != nil:
						t.Fatalf("op %d acknowledged after a failed sync (%v)", op, failed)
					case err == nil && batch == nil:
						acked = acked[:max(len(acked)-1, 0)] // Truncate(n) drops entry n, the last
					case err == nil:
						acked = append(acked, batch...)
					case !errors.Is(err, persist.ErrSyncFailed):
						t.Fatalf("op %d: %v, want persist.ErrSyncFailed", op, err)
					case failed == nil:
						failed, inflight, truncating = err, batch, batch == nil
					}
				}
				require.Error(t, failed, "no write failed in %d syncs", faults.Syncs())
				require.ErrorIs(t, r.Failed(), persist.ErrSyncFailed)
				require.ErrorIs(t, l.Reset(), persist.ErrSyncFailed)
				readAll := func(l *walog.Log) [][]byte {
					var got [][]byte
					it := l.Iter()
					for it.Next() {
						got = append(got, bytes.Clone(it.Entry()))
					}
					require.NoError(t, it.Err())
					return got
				}
				if truncating {
					// As after a crash during it: none or all of it.
					if got := readAll(l); len(got) < len(acked) {
						acked = acked[:len(acked)-1]
					}
				}
				require.Equal(t, acked, readAll(l), "after the failed sync")
				require.NoError(t, l.Close())
				r2 := structtest.Remap(t, r) // without the faults
				l2, err := walog.Open(r2, nil)
				require.NoError(t, err)
				defer l2.Close()
				got := readAll(l2)
				require.GreaterOrEqual(t, len(got), len(acked))
				require.Equal(t, acked, got[:len(acked)], "reopened")
				if len(got) > len(acked) {
					// Of the append that met the failure: a prefix of its
					// batch (the whole entry for a single append).
					require.LessOrEqual(t, len(got)-len(acked), len(inflight))
					require.Equal(t, inflight[:len(got)-len(acked)], got[len(acked):])
				}
				require.NoError(t, l2.Check())
			})
		}
	}
}

// A full log on a tiny file (the region cannot grow: the log never asks
// it to): Append is ErrFull, naming what it needed, every acknowledged
// entry reads, and the log opened again holds them.
func TestFullTinyFile(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r, _ := structtest.MapFile(t, 4096)
			l, err := walog.Create(r, &walog.Options{Format: f})
			require.NoError(t, err)
			var acked [][]byte
			for i := 0; ; i++ {
				p := crashPayload(uint64(i+1), 50)
				if _, err := l.Append(p); err != nil {
					require.ErrorIs(t, err, walog.ErrFull)
					require.Contains(t, err.Error(), "bytes needed")
					break
				}
				acked = append(acked, p)
			}
			require.NotEmpty(t, acked)
			_, err = l.AppendBatch([][]byte{make([]byte, 50), make([]byte, 50)})
			require.ErrorIs(t, err, walog.ErrFull)
			require.NoError(t, l.Check())
			require.NoError(t, l.Close())
			r2 := structtest.Remap(t, r)
			l2, err := walog.Open(r2, nil)
			require.NoError(t, err)
			defer l2.Close()
			it := l2.Iter()
			n := 0
			for ; it.Next(); n++ {
				require.Equal(t, acked[n], it.Entry())
			}
			require.NoError(t, it.Err())
			require.Equal(t, len(acked), n)
		})
	}
}
