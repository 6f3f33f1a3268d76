//go:build linux

package persist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

const page = 4096

// load reads b[i] under Guard.
func load(r *persist.Region, i int) (byte, error) {
	var v byte
	err := r.Guard(func() error {
		v = r.Bytes()[i]
		return nil
	})
	return v, err
}

// store writes b[i] under Guard.
func store(r *persist.Region, i int, v byte) error {
	return r.Guard(func() error {
		r.Bytes()[i] = v
		return nil
	})
}

// A poisoned range faults, on loads and stores, at page granularity; the
// guard names the whole poisoned range; the other pages work; Unpoison
// gives the bytes back.
func TestPoison(t *testing.T) {
	if os.Getpagesize() != page {
		t.Skipf("page size %d", os.Getpagesize())
	}
	r, err := persist.Anonymous(4*page, nil)
	require.NoError(t, err)
	defer r.Close()
	for p := range 4 {
		r.Bytes()[p*page+100] = byte(p + 1)
	}
	require.NoError(t, r.Poison(page+10, 5))
	require.NoError(t, r.Poison(2*page, page)) // merged with the first
	require.Equal(t, []persist.Range{{Lo: page, Hi: 3 * page}}, r.Poisoned())
	require.Equal(t, []persist.Range{{Lo: page, Hi: 3 * page}}, r.Info().Poisoned)
	require.Contains(t, r.String(), "1 poisoned ranges (8 KiB)")
	require.Equal(t, []persist.Range{{Lo: 2 * page, Hi: 2*page + 10}}, r.PoisonedIn(2*page, 10))
	require.Empty(t, r.PoisonedIn(0, page))

	for _, off := range []int{page, page + 100, 3*page - 1} {
		_, err := load(r, off)
		var me *persist.MediaError
		require.ErrorAs(t, err, &me, "load at %d", off)
		require.ErrorIs(t, err, persist.ErrMedia)
		require.ErrorIs(t, err, persist.ErrCorrupt)
		require.Equal(t, int64(off), me.Off)
		lo, hi := me.Range()
		require.Equal(t, [2]int64{page, 3 * page}, [2]int64{lo, hi}, "the poisoned range, not only the page")
		require.Equal(t, fmt.Sprintf("persist: media error: fault at offset %d of the region (bytes %d to %d of its %d are poisoned)",
			off, page, 3*page, 4*page), err.Error())
		require.ErrorIs(t, store(r, off, 9), persist.ErrMedia, "a store faults too")
	}
	for _, p := range []int{0, 3} {
		v, err := load(r, p*page+100)
		require.NoError(t, err)
		require.Equal(t, byte(p+1), v)
		require.NoError(t, store(r, p*page+200, 7))
		require.NoError(t, r.Persist(r.Bytes()[p*page:p*page+page]))
	}
	// Persist of a poisoned range faults in the flush: guarded, an error.
	err = r.Guard(func() error { return r.Persist(r.Bytes()[page : page+64]) })
	if r.Info().Mode == persist.ModeFlush {
		require.ErrorIs(t, err, persist.ErrMedia)
	}

	require.NoError(t, r.Unpoison(page, 1)) // one page of the two
	require.Equal(t, []persist.Range{{Lo: 2 * page, Hi: 3 * page}}, r.Poisoned())
	v, err := load(r, page+100)
	require.NoError(t, err)
	require.Equal(t, byte(2), v, "the bytes are as they were")
	_, err = load(r, 2*page)
	require.ErrorIs(t, err, persist.ErrMedia)
	require.NoError(t, r.Unpoison(0, r.Size()))
	require.Empty(t, r.Poisoned())
	v, err = load(r, 2*page+100)
	require.NoError(t, err)
	require.Equal(t, byte(3), v)
}

func TestPoisonBadArguments(t *testing.T) {
	r, err := persist.Anonymous(2*page, nil)
	require.NoError(t, err)
	for _, c := range [][2]int{{-1, 1}, {0, 0}, {0, -1}, {page, page + 1}, {2 * page, 1}} {
		require.ErrorIs(t, r.Poison(c[0], c[1]), persist.ErrRange, "%v", c)
		require.ErrorIs(t, r.Unpoison(c[0], c[1]), persist.ErrRange, "%v", c)
	}
	require.NoError(t, r.Poison(0, 1))
	require.NoError(t, r.Close())
	require.ErrorIs(t, r.Poison(0, 1), persist.ErrClosed)
	require.ErrorIs(t, r.Unpoison(0, 1), persist.ErrClosed)
}

// A simulated region can poison the whole pages of its memory, not a page
// that passes its edge (it is someone else's); Close gives the memory back
// readable.
func TestPoisonSimulated(t *testing.T) {
	buf := make([]byte, 8*page)
	skip := int((page - uintptr(unsafe.Pointer(&buf[0]))%page) % page)
	mem := buf[skip : skip+4*page+8]
	r, err := persist.NewSimulated(mem, persist.ModeFlush, &recorder{}, nil)
	require.NoError(t, err)
	require.NoError(t, r.Poison(page, 2*page))
	require.ErrorIs(t, r.Poison(4*page, 8), persist.ErrUnsupported, "the last page is partly outside")
	_, err = load(r, 2*page)
	require.ErrorIs(t, err, persist.ErrMedia)

	odd, err := persist.NewSimulated(buf[skip+8:skip+3*page], persist.ModeFlush, &recorder{}, nil)
	require.NoError(t, err)
	require.ErrorIs(t, odd.Poison(0, 8), persist.ErrUnsupported, "the first page starts before the region")
	require.NoError(t, odd.Poison(page, 1), "a page inside")
	require.NoError(t, odd.Close())

	require.NoError(t, r.Close())
	for i := range buf {
		buf[i] = 1 // every page readable and writable again
	}
}

// Grow keeps the poisoned pages poisoned (where the mapping moved to), and
// every other byte.
func TestPoisonGrow(t *testing.T) {
	path := filepath.Join(structtest.TempShm(t), "grow.pm")
	r := mustMap(t, path, &persist.Options{Size: 4 * page, Create: true, ForcePMem: true})
	for p := range 4 {
		r.Bytes()[p*page] = byte(p + 1)
	}
	require.NoError(t, r.Poison(page, page))
	require.NoError(t, r.Grow(64*page))
	require.Equal(t, []persist.Range{{Lo: page, Hi: 2 * page}}, r.Poisoned())
	_, err := load(r, page)
	require.ErrorIs(t, err, persist.ErrMedia)
	for _, p := range []int{0, 2, 3} {
		v, err := load(r, p*page)
		require.NoError(t, err)
		require.Equal(t, byte(p+1), v)
	}
	require.NoError(t, store(r, 63*page, 1))
}
