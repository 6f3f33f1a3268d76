package fam_test

import (
	"testing"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// TestOneOpenArrayPerArea: a second Create or Open over the bytes of an
// open array (its own kind, the other kind, a cow.Array, a walog log) is
// refused with ErrBusy and writes nothing; after Close the array opens
// again, and a closed array refuses everything with ErrClosed.
func TestOneOpenArrayPerArea(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := structtest.Region(t, 1<<20)
			const off = 4096
			n, err := k.footprint(16, 10)
			require.NoError(t, err)
			a, err := k.create(r, off, 16, 10)
			require.NoError(t, err)
			v := []byte("0123456789abcdef")
			require.NoError(t, a.Update(3, v))

			for _, k2 := range kinds {
				_, err = k2.open(r, off)
				if k2.name == k.name {
					require.ErrorIs(t, err, persist.ErrBusy)
					require.ErrorContains(t, err, "overlaps")
					t.Log(err)
				} else {
					require.ErrorIs(t, err, fam.ErrBadFormat, "the header is read before the claim")
				}
				// The same bytes, more from below, from its last line on.
				for _, c := range [][2]int{{off, 10}, {0, 100}, {(off + n - 1) &^ 63, 1}} {
					_, err = k2.create(r, c[0], 16, c[1])
					require.ErrorIs(t, err, persist.ErrBusy, "%s.create at %d", k2.name, c[0])
				}
			}
			_, err = cow.Create(r, &cow.Options{Offset: off, ObjectSize: 16, Count: 10})
			require.ErrorIs(t, err, persist.ErrBusy)
			_, err = walog.Create(r, &walog.Options{Offset: off, Size: 4096})
			require.ErrorIs(t, err, persist.ErrBusy)

			got := make([]byte, 16)
			require.NoError(t, a.Read(3, got))
			require.Equal(t, v, got, "untouched by the refusals")
			require.NoError(t, a.Update(4, v))

			// Bytes of the region next to it are free.
			c, err := k.create(r, (off+n+63)&^63, 16, 10)
			require.NoError(t, err)
			require.NoError(t, c.Close())
			if off >= n {
				structtest.RequireFree(t, r, 0, off)
			}

			require.NoError(t, a.Close())
			require.ErrorIs(t, a.Close(), fam.ErrClosed)
			require.ErrorIs(t, a.Update(3, v), fam.ErrClosed)
			require.ErrorIs(t, a.Read(3, got), fam.ErrClosed)
			if fa, ok := a.(*fam.Array); ok {
				require.ErrorIs(t, fa.Update16(3, [16]byte{}), fam.ErrClosed)
				_, err = fa.Read16(3)
				require.ErrorIs(t, err, fam.ErrClosed)
				require.ErrorIs(t, fa.Check(), fam.ErrClosed)
			}
			structtest.RequireFree(t, r, off, n)

			b, err := k.open(r, off)
			require.NoError(t, err)
			for _, i := range []int{3, 4} {
				require.NoError(t, b.Read(i, got))
				require.Equal(t, v, got)
			}
			require.NoError(t, b.Close())
			structtest.RequireFree(t, r, off, n)
		})
	}
}

// TestFailedOpenClaimsNothing: Opens that fail after their claim (in
// recovery, on a read-only region) and Creates that fail after theirs
// release it.
func TestFailedOpenClaimsNothing(t *testing.T) {
	t.Run("fam/recovery", func(t *testing.T) {
		r := structtest.Region(t, 1<<16)
		n, err := fam.Footprint(&fam.Options{ObjectSize: 16, Count: 4})
		require.NoError(t, err)
		a, err := fam.Create(r, &fam.Options{ObjectSize: 16, Count: 4})
		require.NoError(t, err)
		require.NoError(t, a.Update(2, make([]byte, 16)))
		require.NoError(t, a.Close())
		r.Bytes()[64+2*64+16+7] ^= 0x80 // object 2, block 2: version 1 -> 3
		_, err = fam.Open(r, nil)
		require.ErrorIs(t, err, fam.ErrCorrupt)
		structtest.RequireFree(t, r, 0, n)
	})
	t.Run("log/recovery", func(t *testing.T) {
		r := structtest.Region(t, 1<<16)
		n, err := fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 4, Lanes: logOpts.Lanes, LaneBytes: logOpts.LaneBytes})
		require.NoError(t, err)
		a, err := fam.CreateLog(r, &fam.LogOptions{ObjectSize: 16, Count: 4, Lanes: logOpts.Lanes, LaneBytes: logOpts.LaneBytes})
		require.NoError(t, err)
		require.NoError(t, a.Close())
		persist.Store64(r.Bytes()[64+4096:], 0) // lane 1's generation word: never written so
		_, err = fam.OpenLog(r, nil)
		require.ErrorIs(t, err, fam.ErrCorrupt)
		structtest.RequireFree(t, r, 0, n)
	})
	for _, k := range kinds {
		t.Run(k.name+"/read-only", func(t *testing.T) {
			rw, reopen := structtest.MapFile(t, 1<<16)
			a, err := k.create(rw, 0, 16, 4)
			require.NoError(t, err)
			require.NoError(t, a.Close())
			ro := reopen()
			n, err := k.footprint(16, 4)
			require.NoError(t, err)
			_, err = k.create(ro, 0, 16, 4) // fails in Invalidate, after the claim
			require.ErrorIs(t, err, persist.ErrReadOnly)
			structtest.RequireFree(t, ro, 0, n)
			b, err := k.open(ro, 0)
			require.NoError(t, err)
			require.NoError(t, b.Close())
		})
	}
	t.Run("fam/read-only-torn", func(t *testing.T) {
		rw, reopen := structtest.MapFile(t, 1<<16)
		a, err := fam.Create(rw, &fam.Options{ObjectSize: 8, Count: 4})
		require.NoError(t, err)
		require.NoError(t, a.UpdateUint64(2, 7))
		rw.Bytes()[64+2*64+8+7] ^= 0x40 // a torn update: Open must roll back, and cannot
		ro := reopen()
		_, err = fam.Open(ro, nil)
		require.ErrorIs(t, err, persist.ErrReadOnly)
		n, err := fam.Footprint(&fam.Options{ObjectSize: 8, Count: 4})
		require.NoError(t, err)
		structtest.RequireFree(t, ro, 0, n)
	})
}
