package kv

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestModel runs long random sequences of puts, deletes, batches, gets,
// scans, checkpoints, GC passes and reopens (clean and after a
// simulated kill: the store is dropped without Close) against a Go map.
func TestModel(t *testing.T) {
	for _, v := range pathVariants {
		for _, seed := range []uint64{1, 7} {
			t.Run(fmt.Sprintf("%s/%d", v.name, seed), func(t *testing.T) { modelRun(t, v, seed, 3000) })
		}
	}
}

func modelRun(t *testing.T, v pathVariant, seed uint64, n int) {
	rnd := structtest.NewRand(seed)
	t.Logf("seed %d", seed)
	o := v.apply(testOptions(t, 2))
	o.WorkersPerDevice = 1
	o.SegmentSize = 16 << 10
	o.DeviceSize = 24 * o.SegmentSize
	o.OrderedIndex = true
	o.MergeLogs = seed%2 == 1
	s := mustOpen(t, o)
	defer func() { s.Close() }()
	model := map[string]string{}
	key := func() string { return fmt.Sprintf("key%03d", rnd.Intn(200)) }
	val := func(i int) string { return fmt.Sprintf("v%d-%s", i, make([]byte, rnd.Intn(300))) }
	for i := range n {
		switch op := rnd.Intn(100); {
		case op < 40:
			k, v := key(), val(i)
			require.NoError(t, s.Put([]byte(k), []byte(v)), "op %d", i)
			model[k] = v
		case op < 50:
			k := key()
			require.NoError(t, s.Delete([]byte(k)), "op %d", i)
			delete(model, k)
		case op < 55:
			var b Batch
			for j := range 1 + rnd.Intn(8) {
				k := key()
				if rnd.Intn(3) == 0 {
					b.Delete([]byte(k))
					delete(model, k)
				} else {
					v := val(i*10 + j)
					b.Put([]byte(k), []byte(v))
					model[k] = v
				}
			}
			require.NoError(t, s.Apply(&b), "op %d", i)
		case op < 90:
			k := key()
			v, err := s.Get([]byte(k))
			if want, ok := model[k]; ok {
				require.NoError(t, err, "op %d: get %s", i, k)
				require.Equal(t, want, string(v), "op %d: get %s", i, k)
			} else {
				require.ErrorIs(t, err, ErrNotFound, "op %d: get %s", i, k)
			}
		case op < 92:
			from, to := key(), key()
			var got []string
			require.NoError(t, s.Scan([]byte(from), []byte(to), func(k, v []byte) bool {
				require.Equal(t, model[string(k)], string(v))
				got = append(got, string(k))
				return true
			}))
			want := 0
			for k := range model {
				if k >= from && k < to {
					want++
				}
			}
			require.Len(t, got, want, "op %d: scan [%s, %s)", i, from, to)
		case op < 94:
			_, err := s.GC()
			require.NoError(t, err, "op %d", i)
		case op < 96:
			require.NoError(t, s.Checkpoint(), "op %d", i)
		case op < 98:
			require.NoError(t, s.Close(), "op %d", i)
			s = mustOpen(t, o)
		default:
			// A kill: no checkpoint, nothing closed but the mappings and
			// locks (what the kernel does for a killed process).
			s.abandon()
			s = mustOpen(t, o)
		}
	}
	require.NoError(t, s.Check())
	st := s.Stats()
	require.Equal(t, int64(len(model)), st.Keys)
	t.Logf("stats: %d keys, %d tombstones, space amplification %.2f, %d GC passes, %d moved, %d segments freed",
		st.Keys, st.Tombstones, st.SpaceAmplification, st.GCPasses, st.GCMoved, st.SegmentsFreed)
}

// abandon drops the store as a killed process would: the workers stop
// after what they were given, nothing is checkpointed.
func (s *Store) abandon() {
	s.ops.Lock()
	s.closed.Store(true)
	s.ops.Unlock()
	s.shutdown()
}
