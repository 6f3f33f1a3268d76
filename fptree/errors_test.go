package fptree

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// TestOptions: every bad option is ErrInvalid (and persist.ErrInvalid),
// named in the message; Footprint agrees with what Create takes.
func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{Offset: -64}, {Offset: 100}, {Size: -1}, {Leaves: 1}, {Leaves: -3},
		{LeafSlots: 3}, {LeafSlots: 65}, {Group: -1}, {Group: 65},
		{Leaves: 10, Size: 1000},
	} {
		err := o.Validate()
		require.ErrorIs(t, err, ErrInvalid, "%+v", o)
		require.ErrorIs(t, err, persist.ErrInvalid, "%+v", o)
		r := structtest.Region(t, 1<<16)
		_, err = Create(r, &o)
		require.ErrorIs(t, err, ErrInvalid, "%+v", o)
		_, err = Open(r, &o)
		require.ErrorIs(t, err, ErrInvalid, "%+v", o)
	}
	require.NoError(t, (*Options)(nil).Validate())
	_, err := Footprint(nil)
	require.ErrorIs(t, err, ErrInvalid)
	for _, m := range []int{4, 5, 16, 40, 48, 63, 64} {
		n, err := Footprint(&Options{Leaves: 10, LeafSlots: m})
		require.NoError(t, err)
		g := geometry(m)
		require.Equal(t, 128+10*g.stride, n)
		require.Zero(t, g.stride%64)
		require.GreaterOrEqual(t, g.kv, offFps+8*g.words, "the fingerprint words end before the slots")
		r := structtest.Region(t, 1<<20)
		tr, err := Create(r, &Options{Leaves: 10, LeafSlots: m, Offset: 64})
		require.NoError(t, err)
		used, capacity := tr.Leaves()
		require.Equal(t, 1, used)
		require.Equal(t, 10, capacity)
		require.NoError(t, tr.Close())
		structtest.RequireFree(t, r, 64, n)
		_, err = r.Claim(64, n+1, "probe") // the claim was exactly the footprint
		require.NoError(t, err)
	}
}

// TestTooSmallAndFull: an area that cannot hold two leaves is ErrTooSmall
// (and persist.ErrTooSmall) with the sizes; a tree whose leaves are all in
// use refuses the insert that needs a split with ErrFull, changes nothing,
// and still reads, updates and deletes; deletes that free leaves make room
// again.
func TestTooSmallAndFull(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	_, err := Create(r, &Options{Size: 128 + 128, LeafSlots: 4})
	require.ErrorIs(t, err, ErrTooSmall)
	require.ErrorIs(t, err, persist.ErrTooSmall)
	t.Log(err)
	_, err = Create(r, &Options{Offset: 1 << 16})
	require.ErrorIs(t, err, ErrTooSmall)
	_, err = Create(r, &Options{Size: 1 << 17})
	require.ErrorIs(t, err, ErrTooSmall)

	tr := mustCreate(t, r, &Options{Leaves: 3, LeafSlots: 4})
	var put []uint64
	for k := uint64(0); ; k++ {
		err := tr.Put(k*10, k)
		if err != nil {
			require.ErrorIs(t, err, ErrFull)
			require.Contains(t, err.Error(), "all 3 leaves")
			t.Log(err)
			break
		}
		put = append(put, k*10)
	}
	require.Equal(t, len(put), tr.Len())
	require.NoError(t, tr.Check())
	for _, k := range put {
		v, ok, err := tr.Get(k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, k/10, v)
		require.NoError(t, tr.Put(k, 99), "an update needs no split")
	}
	require.ErrorIs(t, tr.PutBatch([]uint64{1, 2, 3, 4, 5}, []uint64{1, 2, 3, 4, 5}), ErrFull)
	// Deleting every key of the last leaf (40 to 70: the splits of
	// 4-slot leaves filled in order left 0, 10 | 20, 30 | 40 .. 70)
	// frees it; then Put splits again.
	for _, k := range put {
		if k >= 40 {
			ok, err := tr.Delete(k)
			require.NoError(t, err)
			require.True(t, ok)
		}
	}
	used, _ := tr.Leaves()
	require.Equal(t, 2, used)
	for k := uint64(1); k < 4; k++ {
		require.NoError(t, tr.Put(k, k))
	}
	used, _ = tr.Leaves()
	require.Equal(t, 3, used, "the freed leaf was used again")
	require.NoError(t, tr.Check())
}

// TestClosed: after Close every operation is ErrClosed (and
// persist.ErrClosed); a tree over a region closed under it says so too.
func TestClosed(t *testing.T) {
	r := structtest.Region(t, 1<<20)
	tr, err := Create(r, &Options{LeafSlots: 4})
	require.NoError(t, err)
	require.NoError(t, tr.Put(1, 1))
	require.NoError(t, tr.Close())
	require.ErrorIs(t, tr.Close(), ErrClosed)
	_, _, err = tr.Get(1)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, persist.ErrClosed)
	require.ErrorIs(t, tr.Put(1, 2), ErrClosed)
	_, err = tr.Delete(1)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, tr.Scan(0, 10, func(k, v uint64) bool { return true }), ErrClosed)
	it := tr.Iter(0, 10)
	require.False(t, it.Next())
	require.ErrorIs(t, it.Err(), ErrClosed)
	require.ErrorIs(t, tr.GetBatch([]uint64{1}, make([]uint64, 1), make([]bool, 1)), ErrClosed)
	require.ErrorIs(t, tr.PutBatch([]uint64{1}, []uint64{1}), ErrClosed)
	require.ErrorIs(t, tr.Check(), ErrClosed)

	tr = mustOpen(t, r, nil)
	require.NoError(t, r.Close())
	_, _, err = tr.Get(1)
	require.ErrorIs(t, err, persist.ErrClosed)
	require.ErrorIs(t, tr.Put(2, 2), persist.ErrClosed)
	_, err = Open(r, nil)
	require.ErrorIs(t, err, persist.ErrClosed)
}

// TestClaim: a second tree (or anything that claims) over an open tree's
// area is persist.ErrBusy and writes nothing; after Close it opens.
func TestClaim(t *testing.T) {
	r := structtest.Region(t, 1<<20)
	tr := mustCreate(t, r, &Options{Size: 64 << 10, LeafSlots: 4})
	require.NoError(t, tr.Put(5, 5))
	_, err := Open(r, nil)
	require.ErrorIs(t, err, persist.ErrBusy)
	_, err = Create(r, &Options{Offset: 4096, Size: 8192})
	require.ErrorIs(t, err, persist.ErrBusy)
	other := mustCreate(t, r, &Options{Offset: 64 << 10, LeafSlots: 4}) // beside it: fine
	require.NoError(t, other.Close())
	require.NoError(t, tr.Close())
	tr = mustOpen(t, r, nil)
	v, ok, err := tr.Get(5)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(5), v)
}

// TestReadOnly: a tree in a read-only mapping opens and reads; changes
// are persist.ErrReadOnly; a tree that needs recovery does not open there.
func TestReadOnly(t *testing.T) {
	path := filepath.Join(structtest.TempShm(t), "t.pm")
	r, err := persist.Map(path, &persist.Options{Size: 1 << 20, Create: true, ForcePMem: true})
	require.NoError(t, err)
	tr, err := Create(r, &Options{LeafSlots: 4})
	require.NoError(t, err)
	for k := range uint64(50) {
		require.NoError(t, tr.Put(k, k+1))
	}
	require.NoError(t, tr.Close())
	require.NoError(t, r.Close())

	ro, err := persist.Map(path, &persist.Options{ReadOnly: true})
	require.NoError(t, err)
	defer ro.Close()
	tr = mustOpen(t, ro, nil)
	require.Equal(t, 50, tr.Len())
	v, ok, err := tr.Get(7)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(8), v)
	require.ErrorIs(t, tr.Put(1, 1), persist.ErrReadOnly)
	_, err = tr.Delete(1)
	require.ErrorIs(t, err, persist.ErrReadOnly)
	require.ErrorIs(t, tr.PutBatch([]uint64{1}, []uint64{1}), persist.ErrReadOnly)
	_, err = Create(ro, &Options{Offset: 1 << 19})
	require.ErrorIs(t, err, persist.ErrReadOnly)
	require.NoError(t, tr.Close())

	// A split log left set: recovery must write, which it cannot here.
	rw, err := persist.Map(path, nil)
	require.NoError(t, err)
	split := rw.Bytes()[logOff : logOff+8]
	persist.Store64(split, logWord(0, 1))
	require.NoError(t, rw.Persist(split))
	require.NoError(t, rw.Close())
	ro2, err := persist.Map(path, &persist.Options{ReadOnly: true})
	require.NoError(t, err)
	defer ro2.Close()
	_, err = Open(ro2, nil)
	require.ErrorIs(t, err, persist.ErrReadOnly)
	t.Log(err)
}

// TestBadArguments: batch slices of the wrong length are ErrInvalid.
func TestBadArguments(t *testing.T) {
	r := structtest.Region(t, 1<<20)
	tr := mustCreate(t, r, nil)
	require.ErrorIs(t, tr.GetBatch(make([]uint64, 3), make([]uint64, 2), make([]bool, 3)), ErrInvalid)
	require.ErrorIs(t, tr.GetBatch(make([]uint64, 3), make([]uint64, 3), make([]bool, 2)), ErrInvalid)
	require.ErrorIs(t, tr.PutBatch(make([]uint64, 3), make([]uint64, 2)), ErrInvalid)
	require.NoError(t, tr.GetBatch(nil, nil, nil))
	require.NoError(t, tr.PutBatch(nil, nil))
	_, err := Create(nil, nil)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Open(nil, nil)
	require.ErrorIs(t, err, ErrInvalid)
	require.False(t, errors.Is(ErrFull, persist.ErrCorrupt))
}
