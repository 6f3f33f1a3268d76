package cow_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

func fill(b []byte, seed uint64) {
	for i := range b {
		seed = seed*6364136223846793005 + 1442695040888963407
		b[i] = byte(seed >> 56)
	}
}

func TestFootprint(t *testing.T) {
	for _, c := range []struct{ size, stride int }{
		{1, 64}, {8, 64}, {16, 64}, {24, 64}, {25, 128}, {28, 128}, {32, 128}, {56, 128},
		{57, 192}, {64, 192}, {65, 320}, {128, 320}, {1024, 64 + 2048},
	} {
		n, err := cow.Footprint(&cow.Options{ObjectSize: c.size, Count: 3})
		require.NoError(t, err)
		require.Equal(t, 64+3*c.stride, n, "size %d", c.size)
	}
	_, err := cow.Footprint(&cow.Options{ObjectSize: 0, Count: 3})
	require.ErrorIs(t, err, cow.ErrSize)
	_, err = cow.Footprint(&cow.Options{ObjectSize: cow.MaxSize + 1, Count: 3})
	require.ErrorIs(t, err, cow.ErrSize)
	_, err = cow.Footprint(&cow.Options{ObjectSize: 16, Count: 0})
	require.ErrorIs(t, err, cow.ErrInvalid)
}

func TestBasics(t *testing.T) {
	for _, sum := range []bool{false, true} {
		for _, size := range []int{1, 7, 8, 16, 24, 28, 29, 32, 56, 57, 64, 100, 256, 1024} {
			t.Run(fmt.Sprintf("%d/checksum=%v", size, sum), func(t *testing.T) {
				testBasics(t, size, sum)
			})
		}
	}
}

func testBasics(t *testing.T, size int, sum bool) {
	r := structtest.Region(t, 1<<20)
	a, err := cow.Create(r, &cow.Options{Offset: 64, ObjectSize: size, Count: 23, Checksum: sum})
	require.NoError(t, err)
	checked(t, a)
	require.Equal(t, sum, a.Checksum())
	require.Equal(t, 23, a.Len())
	require.Equal(t, size, a.Size())
	got := make([]byte, size)
	want := make([][]byte, a.Len())
	for i := range a.Len() {
		require.NoError(t, a.Read(i, got))
		require.Equal(t, make([]byte, size), got)
		want[i] = make([]byte, size)
	}
	for round := range 50 {
		i := round * 5 % a.Len()
		v := make([]byte, size)
		fill(v, uint64(round)+1)
		require.NoError(t, a.Update(i, v))
		want[i] = v
	}
	require.NoError(t, a.Close())
	b, err := cow.Open(r, &cow.Options{Offset: 64})
	require.NoError(t, err)
	checked(t, b)
	require.Equal(t, sum, b.Checksum())
	require.NoError(t, b.Check())
	for i := range b.Len() {
		require.NoError(t, b.Read(i, got))
		require.Equal(t, want[i], got, "object %d", i)
	}
	n, err := b.Updates(0)
	require.NoError(t, err)
	require.Equal(t, uint64(3), n, "rounds 0, 23 and 46")
}

func TestCreateErrors(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	for _, c := range []struct {
		name             string
		r                *persist.Region
		off, size, count int
		want             error
	}{
		{"nil region", nil, 0, 16, 1, cow.ErrInvalid},
		{"size 0", r, 0, 0, 1, cow.ErrSize},
		{"size -1", r, 0, -1, 1, cow.ErrSize},
		{"size too large", r, 0, cow.MaxSize + 1, 1, cow.ErrSize},
		{"count 0", r, 0, 16, 0, cow.ErrInvalid},
		{"count huge", r, 0, 16, math.MaxInt, cow.ErrInvalid}, // the footprint overflows int
		{"offset unaligned", r, 32, 16, 1, cow.ErrInvalid},
		{"offset negative", r, -64, 16, 1, cow.ErrInvalid},
		{"offset past end", r, 1 << 16, 16, 1, cow.ErrTooSmall},
		{"too many objects", r, 0, 16, 2000, cow.ErrTooSmall},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cow.Create(c.r, &cow.Options{Offset: c.off, ObjectSize: c.size, Count: c.count})
			require.ErrorIs(t, err, c.want)
			t.Log(err)
		})
	}
}

func TestOpenErrors(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	mem := r.Bytes()
	_, err := cow.Open(r, nil)
	require.ErrorIs(t, err, cow.ErrNoArray)
	_, err = cow.Open(r, &cow.Options{Offset: 1<<16 - 32})
	require.ErrorIs(t, err, cow.ErrInvalid)
	a, err := cow.Create(r, &cow.Options{ObjectSize: 16, Count: 10})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	for _, c := range []struct {
		name string
		at   int
	}{{"magic", 3}, {"format", 8}, {"flags", 12}, {"flags", 13}, {"size", 16}, {"stride", 20}, {"count", 24}, {"aux", 33}, {"crc", 58}} {
		mem[c.at] ^= 0x04
		_, err := cow.Open(r, nil)
		require.ErrorIs(t, err, cow.ErrCorrupt, c.name)
		require.ErrorIs(t, err, persist.ErrCorrupt, c.name)
		t.Logf("%s: %v", c.name, err)
		mem[c.at] ^= 0x04
	}
	a, err = cow.Open(r, nil)
	require.NoError(t, err, "the failed Opens claimed nothing")
	require.NoError(t, a.Close())
	short, err := persist.Anonymous(256, nil)
	require.NoError(t, err)
	defer short.Close()
	copy(short.Bytes(), mem[:64])
	_, err = cow.Open(short, nil)
	require.ErrorIs(t, err, cow.ErrTooSmall)
}

func TestBadArguments(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	a, err := cow.Create(r, &cow.Options{ObjectSize: 16, Count: 10})
	require.NoError(t, err)
	buf := make([]byte, 16)
	require.ErrorIs(t, a.Update(-1, buf), cow.ErrIndex)
	require.ErrorIs(t, a.Update(10, buf), cow.ErrIndex)
	require.ErrorIs(t, a.Read(10, buf), cow.ErrIndex)
	_, err = a.Updates(10)
	require.ErrorIs(t, err, cow.ErrIndex)
	require.ErrorIs(t, a.Update(0, buf[:15]), cow.ErrSize)
	require.ErrorIs(t, a.Read(0, make([]byte, 17)), cow.ErrSize)
	require.NoError(t, r.Close())
	require.ErrorIs(t, a.Update(0, buf), persist.ErrClosed)
	require.ErrorIs(t, a.Read(0, buf), persist.ErrClosed)
	require.ErrorIs(t, a.Check(), persist.ErrClosed)
	_, err = a.Updates(0)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = cow.Open(r, nil)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = cow.Create(r, &cow.Options{ObjectSize: 16, Count: 10})
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = cow.Create(r, &cow.Options{Offset: 1 << 20, ObjectSize: 16, Count: 10, Checksum: true}) // past the end, closed first
	require.ErrorIs(t, err, persist.ErrClosed)
}

func TestModel(t *testing.T) {
	for _, size := range []int{8, 16, 40, 64, 200} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			r := structtest.Region(t, 1<<20)
			a, err := cow.Create(r, &cow.Options{ObjectSize: size, Count: 40, Checksum: size%16 == 0})
			require.NoError(t, err)
			reopen := func() (structtest.Objects, error) { return cow.Open(r, nil) }
			a = structtest.ObjectModel(t, a, reopen, uint64(size), 3000).(*cow.Array)
			require.NoError(t, a.Check())
		})
	}
}

func TestConcurrent(t *testing.T) {
	r := structtest.Region(t, 1<<20)
	const n, g, rounds = 64, 8, 200
	a, err := cow.Create(r, &cow.Options{ObjectSize: 16, Count: n, Checksum: true})
	require.NoError(t, err)
	checked(t, a)
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for w := range g {
		wg.Go(func() {
			v := make([]byte, 16)
			got := make([]byte, 16)
			for round := range rounds {
				for i := w; i < n; i += g {
					binary.LittleEndian.PutUint64(v, uint64(i))
					binary.LittleEndian.PutUint64(v[8:], uint64(round))
					if err := a.Update(i, v); err != nil {
						errs <- err
						return
					}
					if err := a.Read(i, got); err != nil || string(got) != string(v) {
						errs <- fmt.Errorf("object %d round %d: %x, %v", i, round, got, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got := make([]byte, 16)
	for i := range n {
		require.NoError(t, a.Read(i, got))
		require.Equal(t, uint64(rounds-1), binary.LittleEndian.Uint64(got[8:]))
		u, err := a.Updates(i)
		require.NoError(t, err)
		require.Equal(t, uint64(rounds), u)
	}
}

// A read-only region: Create refuses before any store (a store would be a
// fatal fault), Open, Read and Check work, Update refuses.
func TestReadOnly(t *testing.T) {
	rw, reopen := structtest.MapFile(t, 1<<16)
	a, err := cow.Create(rw, &cow.Options{ObjectSize: 16, Count: 4, Checksum: true})
	require.NoError(t, err)
	v := []byte("0123456789abcdef")
	require.NoError(t, a.Update(2, v))
	ro := reopen()
	for _, off := range []int{0, 4096} { // over an array and over zeros
		_, err = cow.Create(ro, &cow.Options{Offset: off, ObjectSize: 16, Count: 4})
		require.ErrorIs(t, err, persist.ErrReadOnly)
		t.Log(err)
	}
	b, err := cow.Open(ro, nil)
	require.NoError(t, err)
	got := make([]byte, 16)
	require.NoError(t, b.Read(2, got))
	require.Equal(t, v, got)
	require.NoError(t, b.Check())
	require.ErrorIs(t, b.Update(2, got), persist.ErrReadOnly)
	require.NoError(t, b.Read(2, got))
	require.Equal(t, v, got)
}

func TestValidate(t *testing.T) {
	require.NoError(t, (&cow.Options{Offset: 128, ObjectSize: 16, Count: 1}).Validate())
	for _, c := range []struct {
		opts *cow.Options
		want error
	}{
		{nil, cow.ErrSize},
		{&cow.Options{Count: 1}, cow.ErrSize},
		{&cow.Options{ObjectSize: 16}, cow.ErrInvalid},
		{&cow.Options{Offset: 8, ObjectSize: 16, Count: 1}, cow.ErrInvalid},
		{&cow.Options{Offset: -64, ObjectSize: 16, Count: 1}, cow.ErrInvalid},
		{&cow.Options{ObjectSize: 16, Count: math.MaxInt}, cow.ErrInvalid},
	} {
		err := c.opts.Validate()
		require.ErrorIs(t, err, c.want, "%+v", c.opts)
		require.ErrorIs(t, err, persist.ErrInvalid, "%+v", c.opts)
		_, ferr := cow.Footprint(c.opts)
		require.Equal(t, err, ferr)
	}
}

// checked runs a's Check when the test ends (structtest.Checked); a
// closed array is skipped.
func checked(t *testing.T, a *cow.Array) *cow.Array {
	return structtest.Checked(t, a, func(err error) bool { return errors.Is(err, persist.ErrClosed) })
}
