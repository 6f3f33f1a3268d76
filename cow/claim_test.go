package cow_test

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
// open array (or a fam array, a walog log over them) is refused with
// ErrBusy and writes nothing; after Close the array opens again, and a
// closed array refuses everything with ErrClosed.
func TestOneOpenArrayPerArea(t *testing.T) {
	for _, sum := range []bool{false, true} {
		r := structtest.Region(t, 1<<20)
		const off = 4096
		n, err := cow.Footprint(&cow.Options{ObjectSize: 16, Count: 10})
		require.NoError(t, err)
		a, err := cow.Create(r, &cow.Options{Offset: off, ObjectSize: 16, Count: 10, Checksum: sum})
		require.NoError(t, err)
		v := []byte("0123456789abcdef")
		require.NoError(t, a.Update(3, v))

		_, err = cow.Open(r, &cow.Options{Offset: off})
		require.ErrorIs(t, err, persist.ErrBusy)
		require.ErrorContains(t, err, "CoW array at bytes 4096..4800 overlaps CoW array at 4096..4800")
		// The same bytes, more from below, from its last line on.
		for _, c := range [][2]int{{off, 10}, {0, 100}, {off + n - 64, 1}} {
			_, err = cow.Create(r, &cow.Options{Offset: c[0], ObjectSize: 16, Count: c[1]})
			require.ErrorIs(t, err, persist.ErrBusy, "create at %d", c[0])
		}
		_, err = fam.Create(r, &fam.Options{Offset: off, ObjectSize: 16, Count: 10})
		require.ErrorIs(t, err, persist.ErrBusy)
		_, err = fam.Open(r, &fam.Options{Offset: off})
		require.ErrorIs(t, err, fam.ErrBadFormat, "the header is read before the claim")
		_, err = walog.Create(r, &walog.Options{Offset: off, Size: 4096})
		require.ErrorIs(t, err, persist.ErrBusy)

		got := make([]byte, 16)
		require.NoError(t, a.Read(3, got))
		require.Equal(t, v, got, "untouched by the refusals")
		require.NoError(t, a.Check())
		c, err := cow.Create(r, &cow.Options{Offset: off + n, ObjectSize: 16, Count: 10, Checksum: sum}) // the bytes right after it are free
		require.NoError(t, err)
		require.NoError(t, c.Close())

		require.NoError(t, a.Close())
		require.ErrorIs(t, a.Close(), cow.ErrClosed)
		require.ErrorIs(t, a.Update(3, v), cow.ErrClosed)
		require.ErrorIs(t, a.Read(3, got), cow.ErrClosed)
		require.ErrorIs(t, a.Check(), cow.ErrClosed)
		_, err = a.Updates(3)
		require.ErrorIs(t, err, cow.ErrClosed)
		structtest.RequireFree(t, r, off, n)

		b, err := cow.Open(r, &cow.Options{Offset: off})
		require.NoError(t, err)
		require.NoError(t, b.Read(3, got))
		require.Equal(t, v, got)
		require.NoError(t, b.Close())
		structtest.RequireFree(t, r, off, n)
	}
}

// TestFailedCreateClaimsNothing: a Create that fails after its claim (a
// read-only region, refused in Invalidate) and Opens that fail release
// it.
func TestFailedCreateClaimsNothing(t *testing.T) {
	rw, reopen := structtest.MapFile(t, 1<<16)
	a, err := cow.Create(rw, &cow.Options{ObjectSize: 16, Count: 4})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	rw.Bytes()[20] ^= 1 // the stride: the checksum fails
	ro := reopen()
	n, err := cow.Footprint(&cow.Options{ObjectSize: 16, Count: 4})
	require.NoError(t, err)
	_, err = cow.Create(ro, &cow.Options{ObjectSize: 16, Count: 4})
	require.ErrorIs(t, err, persist.ErrReadOnly)
	structtest.RequireFree(t, ro, 0, n)
	_, err = cow.Open(ro, nil)
	require.ErrorIs(t, err, cow.ErrCorrupt)
	structtest.RequireFree(t, ro, 0, n)
}

// TestOwnHeaderDamageIsCorrupt: any one byte of the array's own header
// changed (magic, fields, checksum, reserved) is ErrCorrupt, never
// ErrBadFormat or ErrNoArray.
func TestOwnHeaderDamageIsCorrupt(t *testing.T) {
	for _, sum := range []bool{false, true} {
		r := structtest.Region(t, 1<<16)
		a, err := cow.Create(r, &cow.Options{ObjectSize: 16, Count: 10, Checksum: sum})
		require.NoError(t, err)
		require.NoError(t, a.Close())
		mem := r.Bytes()
		for at := range 64 {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				mem[at] ^= x
				_, err := cow.Open(r, nil)
				mem[at] ^= x
				require.ErrorIs(t, err, cow.ErrCorrupt, "byte %d ^ %#02x", at, x)
				require.NotErrorIs(t, err, cow.ErrBadFormat)
			}
		}
		a, err = cow.Open(r, nil)
		require.NoError(t, err)
		require.NoError(t, a.Close())
	}
}
