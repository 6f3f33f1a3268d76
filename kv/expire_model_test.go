package kv

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestExpireModel runs random sequences of puts with and without
// deadlines, Expire, Persist, deletes, batches, reads (Get, GetAt, Scan),
// moves of the fake clock, expirer rounds, GC passes, checkpoints and
// reopens (clean and after a kill) against a Go map of value and deadline.
func TestExpireModel(t *testing.T) {
	for _, seed := range []uint64{3, 8} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { expireModelRun(t, seed, 2500) })
	}
}

type ttlVal struct {
	v  string
	dl int64 // 0: none
}

func expireModelRun(t *testing.T, seed uint64, n int) {
	rnd := structtest.NewRand(seed)
	t.Logf("seed %d", seed)
	c := newFakeClock(t0)
	o := ttlOptions(t, c)
	o.WorkersPerDevice = 1
	o.SegmentSize = 16 << 10
	o.DeviceSize = 24 * o.SegmentSize
	o.OrderedIndex = true
	o.MergeLogs = seed%2 == 1
	s := mustOpen(t, o)
	defer func() { s.Close() }()
	model := map[string]ttlVal{}
	live := func(k string) (ttlVal, bool) {
		m, ok := model[k]
		if ok && m.dl != 0 && c.ms.Load() > m.dl {
			return ttlVal{}, false
		}
		return m, ok
	}
	key := func() string { return fmt.Sprintf("key%03d", rnd.Intn(100)) }
	val := func(i int) string { return fmt.Sprintf("v%d-%s", i, make([]byte, rnd.Intn(200))) }
	// A deadline: mostly soon (so keys expire as the clock moves), some
	// already past, some none.
	deadline := func() int64 {
		switch r := rnd.Intn(10); {
		case r < 2:
			return 0
		case r < 3:
			return c.ms.Load() - int64(rnd.Intn(1000))
		default:
			return c.ms.Load() + int64(rnd.Intn(3000))
		}
	}
	for i := range n {
		switch op := rnd.Intn(100); {
		case op < 20:
			k, v, dl := key(), val(i), deadline()
			require.NoError(t, s.PutAt([]byte(k), []byte(v), dl), "op %d", i)
			model[k] = ttlVal{v, dl}
		case op < 25:
			k, v := key(), val(i)
			require.NoError(t, s.Put([]byte(k), []byte(v)), "op %d", i)
			model[k] = ttlVal{v, 0}
		case op < 30:
			k := key()
			require.NoError(t, s.Delete([]byte(k)), "op %d", i)
			delete(model, k)
		case op < 35:
			var b Batch
			for j := range 1 + rnd.Intn(6) {
				k := key()
				switch rnd.Intn(3) {
				case 0:
					b.Delete([]byte(k))
					delete(model, k)
				default:
					v, dl := val(i*10+j), deadline()
					b.PutAt([]byte(k), []byte(v), dl)
					model[k] = ttlVal{v, dl}
				}
			}
			require.NoError(t, s.Apply(&b), "op %d", i)
		case op < 42:
			k, dl := key(), deadline()
			if dl == 0 {
				dl = c.ms.Load() + 5000
			}
			ok, err := s.Expire([]byte(k), dl)
			require.NoError(t, err, "op %d", i)
			m, was := live(k)
			require.Equal(t, was, ok, "op %d: expire %s", i, k)
			switch {
			case was && dl <= c.ms.Load():
				delete(model, k)
			case was:
				model[k] = ttlVal{m.v, dl}
			}
		case op < 46:
			k := key()
			ok, err := s.Persist([]byte(k))
			require.NoError(t, err, "op %d", i)
			m, was := live(k)
			require.Equal(t, was && m.dl != 0, ok, "op %d: persist %s", i, k)
			if ok {
				model[k] = ttlVal{m.v, 0}
			}
		case op < 75:
			k := key()
			v, dl, err := s.GetAt([]byte(k))
			if m, ok := live(k); ok {
				require.NoError(t, err, "op %d: get %s", i, k)
				require.Equal(t, m, ttlVal{string(v), dl}, "op %d: get %s", i, k)
			} else {
				require.ErrorIs(t, err, ErrNotFound, "op %d: get %s (model %+v, now %d)", i, k, model[k], c.ms.Load())
			}
		case op < 77:
			from, to := key(), key()
			want := 0
			for k := range model {
				if _, ok := live(k); ok && k >= from && k < to {
					want++
				}
			}
			got := 0
			require.NoError(t, s.Scan([]byte(from), []byte(to), func(k, v []byte) bool {
				m, ok := live(string(k))
				require.True(t, ok, "op %d: scan returned %s, absent or expired", i, k)
				require.Equal(t, m.v, string(v))
				got++
				return true
			}))
			require.Equal(t, want, got, "op %d: scan [%s, %s)", i, from, to)
		case op < 87:
			c.advance(int64(rnd.Intn(400)))
		case op < 90:
			_, err := s.expireAll()
			require.NoError(t, err, "op %d", i)
		case op < 93:
			_, err := s.GC()
			require.NoError(t, err, "op %d", i)
		case op < 95:
			require.NoError(t, s.Checkpoint(), "op %d", i)
		case op < 97:
			require.NoError(t, s.Close(), "op %d", i)
			s = mustOpen(t, o)
		default:
			s.abandon()
			s = mustOpen(t, o)
		}
	}
	_, err := s.expireAll()
	require.NoError(t, err)
	require.NoError(t, s.Check())
	keys, dls := 0, 0
	for k := range model {
		if m, ok := live(k); ok {
			keys++
			if m.dl != 0 {
				dls++
			}
		}
	}
	st := s.Stats()
	require.Equal(t, int64(keys), st.Keys)
	require.Equal(t, int64(dls), st.Expires)
	t.Logf("stats: %d keys, %d with a deadline, %d expired since the last open, %d tombstones, %d GC passes",
		st.Keys, st.Expires, st.ExpiredKeys, st.Tombstones, st.GCPasses)
}
