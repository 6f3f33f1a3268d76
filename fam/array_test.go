package fam_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"testing"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// object is what Array and LogArray have in common.
type object interface {
	Update(i int, val []byte) error
	Read(i int, dst []byte) error
	Len() int
	Size() int
	Close() error
	Check() error
}

type kind struct {
	name      string
	create    func(r *persist.Region, off, size, count int) (object, error)
	open      func(r *persist.Region, off int) (object, error)
	footprint func(size, count int) (int, error)
}

var logOpts = &fam.LogOptions{Lanes: 3, LaneBytes: 4096}

var kinds = []kind{
	{"fam",
		func(r *persist.Region, off, size, count int) (object, error) {
			return fam.Create(r, &fam.Options{Offset: off, ObjectSize: size, Count: count})
		},
		func(r *persist.Region, off int) (object, error) { return fam.Open(r, &fam.Options{Offset: off}) },
		func(size, count int) (int, error) { return fam.Footprint(&fam.Options{ObjectSize: size, Count: count}) }},
	{"log",
		func(r *persist.Region, off, size, count int) (object, error) {
			return fam.CreateLog(r, &fam.LogOptions{Offset: off, ObjectSize: size, Count: count, Lanes: logOpts.Lanes, LaneBytes: logOpts.LaneBytes})
		},
		func(r *persist.Region, off int) (object, error) { return fam.OpenLog(r, &fam.LogOptions{Offset: off}) },
		func(size, count int) (int, error) {
			return fam.LogFootprint(&fam.LogOptions{ObjectSize: size, Count: count, Lanes: logOpts.Lanes, LaneBytes: logOpts.LaneBytes})
		}},
}

func fill(b []byte, seed uint64) {
	for i := 0; i < len(b); i += 8 {
		seed = seed*6364136223846793005 + 1442695040888963407
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], seed)
		copy(b[i:], w[:])
	}
}

func TestArrayBasics(t *testing.T) {
	for _, k := range kinds {
		for _, size := range []int{4, 8, 16, 32, 64, 124, 128, 256, 1024} {
			t.Run(fmt.Sprintf("%s/%d", k.name, size), func(t *testing.T) {
				r := structtest.Region(t, 1<<20)
				a, err := k.create(r, 128, size, 37)
				require.NoError(t, err)
				checked(t, a)
				require.Equal(t, 37, a.Len())
				require.Equal(t, size, a.Size())
				got := make([]byte, size)
				for i := range a.Len() {
					require.NoError(t, a.Read(i, got))
					require.Equal(t, make([]byte, size), got)
				}
				want := make([][]byte, a.Len())
				for round := range 60 {
					i := round * 7 % a.Len()
					v := make([]byte, size)
					fill(v, uint64(round)+1)
					require.NoError(t, a.Update(i, v))
					want[i] = v
				}
				check := func(a object) {
					for i := range a.Len() {
						require.NoError(t, a.Read(i, got))
						if want[i] == nil {
							require.Equal(t, make([]byte, size), got)
						} else {
							require.Equal(t, want[i], got, "object %d", i)
						}
					}
				}
				check(a)
				require.NoError(t, a.Close())
				b, err := k.open(r, 128)
				require.NoError(t, err)
				checked(t, b)
				check(b)
			})
		}
	}
}

func TestArrayTyped(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	a8, err := fam.Create(r, &fam.Options{ObjectSize: 8, Count: 4})
	require.NoError(t, err)
	for _, v := range []uint64{0, 1, 1 << 31, 1 << 63, ^uint64(0), 0x8000000180000001} {
		require.NoError(t, a8.UpdateUint64(3, v))
		got, err := a8.Uint64(3)
		require.NoError(t, err)
		require.Equal(t, v, got)
		b := make([]byte, 8)
		require.NoError(t, a8.Read(3, b))
		require.Equal(t, v, binary.LittleEndian.Uint64(b))
	}
	off, err := fam.Footprint(&fam.Options{ObjectSize: 8, Count: 4})
	require.NoError(t, err)
	a16, err := fam.Create(r, &fam.Options{Offset: off, ObjectSize: 16, Count: 4})
	require.NoError(t, err)
	v := [16]byte{0xff, 1, 2, 0x80, 4, 5, 6, 0x7f, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x80}
	require.NoError(t, a16.Update16(2, v))
	got, err := a16.Read16(2)
	require.NoError(t, err)
	require.Equal(t, v, got)
	b := make([]byte, 16)
	require.NoError(t, a16.Read(2, b))
	require.Equal(t, v[:], b)
	require.NoError(t, a16.Update(1, v[:]))
	got, err = a16.Read16(1)
	require.NoError(t, err)
	require.Equal(t, v, got)
	require.NoError(t, a16.Check())

	// Typed helpers refuse arrays of another size.
	require.ErrorIs(t, a16.UpdateUint64(0, 1), fam.ErrSize)
	_, err = a16.Uint64(0)
	require.ErrorIs(t, err, fam.ErrSize)
	require.ErrorIs(t, a8.Update16(0, v), fam.ErrSize)
	_, err = a8.Read16(0)
	require.ErrorIs(t, err, fam.ErrSize)
	require.ErrorIs(t, a8.UpdateUint64(4, 1), fam.ErrIndex)
	_, err = a16.Read16(-1)
	require.ErrorIs(t, err, fam.ErrIndex)
}

func TestFootprint(t *testing.T) {
	n, err := fam.Footprint(&fam.Options{ObjectSize: 16, Count: 10})
	require.NoError(t, err)
	require.Equal(t, 64+10*64, n)
	n, err = fam.Footprint(&fam.Options{ObjectSize: 64, Count: 10})
	require.NoError(t, err)
	require.Equal(t, 64+10*192, n)
	_, err = fam.Footprint(&fam.Options{ObjectSize: 6, Count: 10})
	require.ErrorIs(t, err, fam.ErrSize)
	_, err = fam.Footprint(&fam.Options{ObjectSize: 16, Count: 0})
	require.ErrorIs(t, err, fam.ErrInvalid)
	_, err = fam.Footprint(&fam.Options{ObjectSize: 16, Count: math.MaxInt}) // overflows int
	require.ErrorIs(t, err, fam.ErrInvalid)
	n, err = fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 10})
	require.NoError(t, err)
	require.Equal(t, 64+4*(64<<10)+10*16, n)
	_, err = fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 10, LaneBytes: 100})
	require.ErrorIs(t, err, fam.ErrInvalid)
	_, err = fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 10, LaneBytes: 64})
	require.ErrorIs(t, err, fam.ErrInvalid)
	_, err = fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 10, Lanes: -1})
	require.ErrorIs(t, err, fam.ErrInvalid)
	_, err = fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 10, Lanes: 5000})
	require.ErrorIs(t, err, fam.ErrInvalid)
	// The most lanes of the largest size: 1 TiB of logs, which a 32-bit
	// int cannot count.
	n, err = fam.LogFootprint(&fam.LogOptions{ObjectSize: 16, Count: 10, Lanes: 1024, LaneBytes: 1 << 30})
	if bits.UintSize == 64 {
		require.NoError(t, err)
		require.Equal(t, uint64(64+1024<<30+10*16), uint64(n))
	} else {
		require.ErrorIs(t, err, fam.ErrInvalid)
		require.ErrorContains(t, err, "32-bit address space")
	}
}

func TestCreateErrors(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	for _, k := range kinds {
		for _, c := range []struct {
			name             string
			r                *persist.Region
			off, size, count int
			want             error
		}{
			{"nil region", nil, 0, 16, 1, fam.ErrInvalid},
			{"size 0", r, 0, 0, 1, fam.ErrSize},
			{"size 3", r, 0, 3, 1, fam.ErrSize},
			{"size 6", r, 0, 6, 1, fam.ErrSize},
			{"size -4", r, 0, -4, 1, fam.ErrSize},
			{"size too large", r, 0, fam.MaxSize + 4, 1, fam.ErrSize},
			{"count 0", r, 0, 16, 0, fam.ErrInvalid},
			{"count -1", r, 0, 16, -1, fam.ErrInvalid},
			{"offset unaligned", r, 8, 16, 1, fam.ErrInvalid},
			{"offset negative", r, -64, 16, 1, fam.ErrInvalid},
			{"offset past end", r, 1 << 16, 16, 1, fam.ErrTooSmall},
			{"too many objects", r, 0, 16, 10000, fam.ErrTooSmall},
			{"huge count", r, 0, 16, math.MaxInt, fam.ErrInvalid},
		} {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				_, err := k.create(c.r, c.off, c.size, c.count)
				require.ErrorIs(t, err, c.want)
				t.Log(err)
			})
		}
	}
}

func TestOpenErrors(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			mem := r.Bytes()
			_, err := k.open(r, 0)
			require.ErrorIs(t, err, fam.ErrNoArray)
			_, err = k.open(r, 1<<16-32)
			require.ErrorIs(t, err, fam.ErrInvalid)
			a, err := k.create(r, 0, 16, 10)
			require.NoError(t, err)
			require.NoError(t, a.Close())
			// The other kind's Open refuses it, as a wrong kind, not as
			// damage.
			other := kinds[0]
			if k.name == other.name {
				other = kinds[1]
			}
			_, err = other.open(r, 0)
			require.ErrorIs(t, err, fam.ErrBadFormat)
			require.NotErrorIs(t, err, persist.ErrCorrupt)
			t.Log(err)

			for _, c := range []struct {
				name string
				at   int
			}{{"magic", 0}, {"format", 8}, {"size", 16}, {"count", 24}, {"reserved", 44}, {"crc", 57}} {
				mem[c.at] ^= 0x10
				_, err := k.open(r, 0)
				require.ErrorIs(t, err, fam.ErrCorrupt, c.name)
				require.ErrorIs(t, err, persist.ErrCorrupt, c.name)
				t.Logf("%s: %v", c.name, err)
				mem[c.at] ^= 0x10
			}
			a, err = k.open(r, 0)
			require.NoError(t, err, "the failed Opens claimed nothing")
			require.NoError(t, a.Close())

			// A region smaller than the header says (the array mapped short).
			short, err := persist.Anonymous(256, nil)
			require.NoError(t, err)
			defer short.Close()
			copy(short.Bytes(), mem[:64])
			_, err = k.open(short, 0)
			require.ErrorIs(t, err, fam.ErrTooSmall)
		})
	}
}

func TestBadArguments(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			a, err := k.create(r, 0, 16, 10)
			require.NoError(t, err)
			buf := make([]byte, 16)
			require.ErrorIs(t, a.Update(-1, buf), fam.ErrIndex)
			require.ErrorIs(t, a.Update(10, buf), fam.ErrIndex)
			require.ErrorIs(t, a.Read(10, buf), fam.ErrIndex)
			require.ErrorIs(t, a.Update(0, buf[:12]), fam.ErrSize)
			require.ErrorIs(t, a.Update(0, nil), fam.ErrSize)
			require.ErrorIs(t, a.Read(0, make([]byte, 20)), fam.ErrSize)
			require.NoError(t, r.Close())
			require.ErrorIs(t, a.Update(0, buf), persist.ErrClosed)
			require.ErrorIs(t, a.Read(0, buf), persist.ErrClosed)
			_, err = k.open(r, 0)
			require.ErrorIs(t, err, persist.ErrClosed)
		})
	}
}

// FAMBs of one object at versions no crash can leave are corruption, found
// by Open, Read, Update and Check, and nothing is returned as data.
func TestImpossibleVersions(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	a, err := fam.Create(r, &fam.Options{ObjectSize: 16, Count: 4})
	require.NoError(t, err)
	require.NoError(t, a.Update(2, make([]byte, 16)))
	mem := r.Bytes()
	obj := mem[64+2*64:]
	w := binary.LittleEndian.Uint64(obj[16:])
	binary.LittleEndian.PutUint64(obj[16:], w+2<<62) // version 1 -> 3, the others at 1
	buf := make([]byte, 16)
	require.ErrorIs(t, a.Read(2, buf), persist.ErrCorrupt)
	_, err = a.Read16(2)
	require.ErrorIs(t, err, fam.ErrCorrupt)
	require.ErrorIs(t, a.Update(2, buf), fam.ErrCorrupt)
	require.ErrorIs(t, a.Update16(2, [16]byte{}), fam.ErrCorrupt)
	require.ErrorIs(t, a.Check(), fam.ErrCorrupt)
	// Other objects are fine.
	require.NoError(t, a.Read(1, buf))
	// Two adjacent versions are what a crash leaves: Open rolls back.
	binary.LittleEndian.PutUint64(obj[16:], w+1<<62)
	require.ErrorIs(t, a.Read(2, buf), fam.ErrCorrupt, "before recovery")

	require.NoError(t, a.Close())
	binary.LittleEndian.PutUint64(obj[16:], w+2<<62)
	_, err = fam.Open(r, nil)
	require.ErrorIs(t, err, fam.ErrCorrupt)
	t.Log(err)
	binary.LittleEndian.PutUint64(obj[16:], w+1<<62)
	b, err := fam.Open(r, nil) // the failed Open claimed nothing
	require.NoError(t, err)
	require.Equal(t, 1, b.Recovered())
	require.NoError(t, b.Check())
	require.NoError(t, b.Read(2, buf))
	require.Equal(t, make([]byte, 16), buf)

	// A uint64 array too.
	a8, err := fam.Create(r, &fam.Options{Offset: 1024, ObjectSize: 8, Count: 2})
	require.NoError(t, err)
	mem[1024+64+8+7] ^= 0x80 // block 1: version 0 -> 2 (bit 63)
	_, err = a8.Uint64(0)
	require.ErrorIs(t, err, fam.ErrCorrupt)
	require.ErrorIs(t, a8.UpdateUint64(0, 1), fam.ErrCorrupt)
}

func TestModel(t *testing.T) {
	for _, k := range kinds {
		for _, size := range []int{8, 16, 64, 132} {
			t.Run(fmt.Sprintf("%s/%d", k.name, size), func(t *testing.T) {
				r := structtest.Region(t, 1<<20)
				a, err := k.create(r, 64, size, 50)
				require.NoError(t, err)
				reopen := func() (structtest.Objects, error) { return k.open(r, 64) }
				a = structtest.ObjectModel(t, a, reopen, uint64(size), 3000).(object)
				require.NoError(t, a.Check())
			})
		}
	}
}

// Many goroutines update disjoint objects at once (one writer per object).
func TestConcurrent(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := structtest.Region(t, 1<<20)
			const n, g, rounds = 64, 8, 200
			a, err := k.create(r, 0, 16, n)
			require.NoError(t, err)
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
			require.NoError(t, a.Close())
			b, err := k.open(r, 0)
			require.NoError(t, err)
			got := make([]byte, 16)
			for i := range n {
				require.NoError(t, b.Read(i, got))
				require.Equal(t, uint64(i), binary.LittleEndian.Uint64(got))
				require.Equal(t, uint64(rounds-1), binary.LittleEndian.Uint64(got[8:]))
			}
		})
	}
}

// A read-only region: Create and CreateLog refuse before any store (a
// store would be a fatal fault); Open opens an array with nothing to roll
// back and refuses one with a torn object; Update refuses.
func TestReadOnly(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			rw, reopen := structtest.MapFile(t, 1<<20)
			a, err := k.create(rw, 0, 16, 4)
			require.NoError(t, err)
			v := []byte("0123456789abcdef")
			require.NoError(t, a.Update(1, v))
			ro := reopen()
			for _, off := range []int{0, 512 << 10} { // over an array and over zeros
				_, err = k.create(ro, off, 16, 4)
				require.ErrorIs(t, err, persist.ErrReadOnly)
				t.Log(err)
			}
			b, err := k.open(ro, 0)
			require.NoError(t, err)
			got := make([]byte, 16)
			require.NoError(t, b.Read(1, got))
			require.Equal(t, v, got)
			require.ErrorIs(t, b.Update(1, got), persist.ErrReadOnly)
			if fa, ok := b.(*fam.Array); ok {
				require.ErrorIs(t, fa.Update16(1, [16]byte{}), persist.ErrReadOnly)
				require.NoError(t, fa.Check())
			}
			require.NoError(t, b.Read(1, got))
			require.Equal(t, v, got)
		})
	}
	t.Run("fam/torn", func(t *testing.T) {
		rw, reopen := structtest.MapFile(t, 1<<16)
		a, err := fam.Create(rw, &fam.Options{ObjectSize: 8, Count: 4})
		require.NoError(t, err)
		require.NoError(t, a.UpdateUint64(2, 7))
		mem := rw.Bytes()
		mem[64+2*64+8+7] ^= 0x40 // object 2, block 1: version 1 -> 0, as a torn update leaves it
		ro := reopen()
		_, err = fam.Open(ro, nil)
		require.ErrorIs(t, err, persist.ErrReadOnly)
		t.Log(err)
	})
	t.Run("log/replay", func(t *testing.T) {
		rw, reopen := structtest.MapFile(t, 1<<16)
		opts := &fam.LogOptions{Lanes: 1, LaneBytes: 4096}
		a, err := fam.CreateLog(rw, &fam.LogOptions{ObjectSize: 16, Count: 4, Lanes: opts.Lanes, LaneBytes: opts.LaneBytes})
		require.NoError(t, err)
		require.NoError(t, a.Update(3, []byte("0123456789abcdef")))
		copy(rw.Bytes()[64+4096+3*16:], "XXXX") // the in-place write did not finish
		ro := reopen()
		_, err = fam.OpenLog(ro, nil)
		require.ErrorIs(t, err, persist.ErrReadOnly)
		t.Log(err)
	})
	t.Run("log/torn-record", func(t *testing.T) {
		rw, reopen := structtest.MapFile(t, 1<<16)
		opts := &fam.LogOptions{Lanes: 1, LaneBytes: 4096}
		a, err := fam.CreateLog(rw, &fam.LogOptions{ObjectSize: 16, Count: 4, Lanes: opts.Lanes, LaneBytes: opts.LaneBytes})
		require.NoError(t, err)
		v := []byte("0123456789abcdef")
		require.NoError(t, a.Update(3, v))
		rw.Bytes()[64+64+32+8] = 0xff // garbage after the last record: a writable OpenLog resets the lane
		ro := reopen()
		b, err := fam.OpenLog(ro, nil)
		require.NoError(t, err, "nothing to replay: the lane is left as it is")
		got := make([]byte, 16)
		require.NoError(t, b.Read(3, got))
		require.Equal(t, v, got)
		require.ErrorIs(t, b.Update(3, v), persist.ErrReadOnly)
	})
}

// Every entry point on a closed region is an error wrapping
// persist.ErrClosed.
func TestClosed(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r, err := persist.Anonymous(1<<20, nil)
			require.NoError(t, err)
			a, err := k.create(r, 0, 16, 4)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			for _, off := range []int{0, 8, 1 << 30} {
				_, err = k.create(r, off, 16, 4)
				require.ErrorIs(t, err, persist.ErrClosed, "offset %d", off)
				_, err = k.open(r, off)
				require.ErrorIs(t, err, persist.ErrClosed, "offset %d", off)
			}
			require.ErrorIs(t, a.Update(0, make([]byte, 16)), persist.ErrClosed)
			require.ErrorIs(t, a.Read(0, make([]byte, 16)), persist.ErrClosed)
			if fa, ok := a.(*fam.Array); ok {
				require.ErrorIs(t, fa.Check(), persist.ErrClosed)
				_, err = fa.Read16(0)
				require.ErrorIs(t, err, persist.ErrClosed)
			}
		})
	}
}

// checked runs a's Check when the test ends (structtest.Checked); a
// closed array is skipped.
func checked(t *testing.T, a object) object {
	return structtest.Checked(t, a, func(err error) bool { return errors.Is(err, persist.ErrClosed) })
}
