package kvpeers

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/ycsb"
)

func tempShm(t *testing.T) string {
	d, err := os.MkdirTemp("/dev/shm", "kvpeers-test-")
	if err != nil {
		d = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	return d
}

var small = Options{KVDeviceSize: 32 << 20, KVSegmentSize: 1 << 20}

// Every adapter keeps the same contract: puts read back, overwrites win,
// deletes make keys absent (ErrNotFound, an absent delete is no error),
// scans go in key order from the first key at or after from, at most n,
// stop when fn says so, and see neither deleted keys nor other ones; what
// was acknowledged is there after a reopen.
func TestContract(t *testing.T) {
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			dir := tempShm(t)
			db, info, err := Open(engine, dir, small)
			require.NoError(t, err)
			require.NotEmpty(t, info.Durability)
			keys := []string{}
			for i := range 200 {
				k := fmt.Sprintf("key%04d", i*5)
				keys = append(keys, k)
				require.NoError(t, db.Put([]byte(k), []byte("v1-"+k)))
			}
			for _, k := range keys[:50] {
				require.NoError(t, db.Put([]byte(k), []byte("v2-"+k)))
			}
			for _, k := range keys[50:60] {
				require.NoError(t, db.Delete([]byte(k)))
			}
			require.NoError(t, db.Delete([]byte("never")))
			check := func(db ycsb.DB) {
				for i, k := range keys {
					v, err := db.Get([]byte(k))
					switch {
					case i < 50:
						require.NoError(t, err)
						require.Equal(t, "v2-"+k, string(v))
					case i < 60:
						require.True(t, errors.Is(err, ycsb.ErrNotFound), "%s: %v", k, err)
					default:
						require.NoError(t, err)
						require.Equal(t, "v1-"+k, string(v))
					}
				}
				_, err := db.Get([]byte("key0001"))
				require.ErrorIs(t, err, ycsb.ErrNotFound)
				var got []string
				require.NoError(t, db.Scan([]byte("key0243"), 20, func(k, v []byte) bool {
					got = append(got, string(k)+"="+string(v))
					return true
				}))
				// key0245.. : indexes 49 (v2), then 50..59 deleted, then 60.. (v1)
				want := []string{"key0245=v2-key0245"}
				for i := 60; len(want) < 20; i++ {
					want = append(want, keys[i]+"=v1-"+keys[i])
				}
				require.Equal(t, want, got)
				got = got[:0]
				require.NoError(t, db.Scan([]byte(""), 100, func(k, v []byte) bool {
					got = append(got, string(k))
					return len(got) < 3
				}))
				require.Equal(t, keys[:3], got)
				got = got[:0]
				require.NoError(t, db.Scan([]byte("key0990"), 10, func(k, v []byte) bool {
					got = append(got, string(k))
					return true
				}))
				require.Equal(t, []string{"key0990", "key0995"}, got)
				require.True(t, slices.IsSorted(keys))
			}
			check(db)
			require.NoError(t, db.Close())
			db, _, err = Open(engine, dir, small)
			require.NoError(t, err)
			check(db)
			require.NoError(t, db.Close())
			require.Positive(t, DiskBytes(dir))
		})
	}
}

// The driver runs over every adapter with every read verified.
func TestDriverOverEveryEngine(t *testing.T) {
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			db, _, err := Open(engine, tempShm(t), small)
			require.NoError(t, err)
			defer db.Close()
			b, err := ycsb.New(db, ycsb.Config{Records: 500, ValueSize: 100, Clients: 2, Verify: true, Seed: 3})
			require.NoError(t, err)
			_, err = b.Load(t.Context())
			require.NoError(t, err)
			for _, w := range ycsb.Core {
				res, err := b.Run(t.Context(), w, ycsb.Run{Operations: 500})
				require.NoError(t, err, w.Name)
				require.True(t, res.Verify.AllCorrect(), "%s: %+v", w.Name, *res.Verify)
			}
		})
	}
}
