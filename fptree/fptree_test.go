package fptree

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

func closedErr(err error) bool { return errors.Is(err, persist.ErrClosed) }

// mustCreate creates a tree on r, checked when the test ends.
func mustCreate(t testing.TB, r *persist.Region, o *Options) *Tree {
	t.Helper()
	tr, err := Create(r, o)
	require.NoError(t, err)
	return structtest.Checked(t, tr, closedErr)
}

func mustOpen(t testing.TB, r *persist.Region, o *Options) *Tree {
	t.Helper()
	tr, err := Open(r, o)
	require.NoError(t, err)
	return structtest.Checked(t, tr, closedErr)
}

func TestBasic(t *testing.T) {
	for _, m := range []int{4, 5, 16, 40, 64} {
		r := structtest.Region(t, 1<<20)
		tr := mustCreate(t, r, &Options{LeafSlots: m})
		rnd := structtest.NewRand(uint64(m))
		want := map[uint64]uint64{}
		for i := range 3000 {
			k := rnd.Uint64() % 5000
			switch rnd.Intn(4) {
			case 0:
				ok, err := tr.Delete(k)
				require.NoError(t, err)
				_, had := want[k]
				require.Equal(t, had, ok)
				delete(want, k)
			default:
				require.NoError(t, tr.Put(k, uint64(i)))
				want[k] = uint64(i)
			}
		}
		require.NoError(t, tr.Put(0, 7))
		require.NoError(t, tr.Put(math.MaxUint64, 8))
		want[0], want[math.MaxUint64] = 7, 8
		require.NoError(t, tr.Check())
		require.Equal(t, len(want), tr.Len())
		for k, v := range want {
			got, ok, err := tr.Get(k)
			require.NoError(t, err)
			require.True(t, ok, "key %d", k)
			require.Equal(t, v, got)
		}
		_, ok, err := tr.Get(5001)
		require.NoError(t, err)
		require.False(t, ok)
		n := 0
		prev := uint64(0)
		require.NoError(t, tr.Scan(0, math.MaxUint64, func(k, v uint64) bool {
			if n > 0 {
				require.Greater(t, k, prev)
			}
			require.Equal(t, want[k], v)
			prev = k
			n++
			return true
		}))
		require.Equal(t, len(want), n)
		require.NoError(t, tr.Close())
		tr = mustOpen(t, r, nil)
		require.Equal(t, len(want), tr.Len())
		for k, v := range want {
			got, ok, err := tr.Get(k)
			require.NoError(t, err)
			require.True(t, ok, "key %d after reopen", k)
			require.Equal(t, v, got)
		}
		require.NoError(t, tr.Close())
	}
}
