// Package conform holds the error-vocabulary conformance test: one test
// over every kind of braid persistent structure (kv through an adapter)
// that asserts the same shared sentinel for the same situation. It has
// test files only: it imports every structure, which no package below
// them may.
package conform

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/fptree"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// handle is an open structure.
type handle interface{ Close() error }

// kind adapts one kind of structure to the conformance test. Every
// structure lives at offset 0 of a region of regionSize bytes.
type kind struct {
	name string
	// create makes a small structure of the kind.
	create func(r *persist.Region) (handle, error)
	// open opens what is there with default options.
	open func(r *persist.Region) (handle, error)
	// read and write are one operation of each sort on an open handle.
	read, write func(h handle) error
	// tooSmall creates a structure in a region too small for it.
	tooSmall func(r *persist.Region) error
	// mismatch opens the structure create made with options that
	// contradict it.
	mismatch func(r *persist.Region) error
	// header is the byte range of the header, at each offset of copies
	// (a kind that keeps copies repairs one from another): a byte flipped
	// in every copy makes it corrupt.
	header [2]int
	copies []int
}

const regionSize = 1 << 20

var kinds = []kind{
	{
		name:   "walog",
		create: func(r *persist.Region) (handle, error) { return walog.Create(r, &walog.Options{Size: 64 << 10}) },
		open:   func(r *persist.Region) (handle, error) { return walog.Open(r, nil) },
		read:   func(h handle) error { return h.(*walog.Log).Check() },
		write:  func(h handle) error { _, err := h.(*walog.Log).Append([]byte("x")); return err },
		tooSmall: func(r *persist.Region) error {
			_, err := walog.Create(r, &walog.Options{Size: 2 * regionSize})
			return err
		},
		mismatch: func(r *persist.Region) error {
			_, err := walog.Open(r, &walog.Options{Size: 128 << 10})
			return err
		},
		header: [2]int{0, 64},
		copies: []int{0, walog.BlockSize},
	},
	{
		name:   "pagelog",
		create: func(r *persist.Region) (handle, error) { return pagelog.Create(r, &pagelog.Options{Pages: 16}) },
		open:   func(r *persist.Region) (handle, error) { return pagelog.Open(r, nil) },
		read:   func(h handle) error { return h.(*pagelog.Store).Read(0, make([]byte, pagelog.DefaultPageSize)) },
		write:  func(h handle) error { return h.(*pagelog.Store).Write(0, make([]byte, pagelog.DefaultPageSize)) },
		tooSmall: func(r *persist.Region) error {
			_, err := pagelog.Create(r, &pagelog.Options{Pages: 1 << 20})
			return err
		},
		mismatch: func(r *persist.Region) error {
			_, err := pagelog.Open(r, &pagelog.Options{PageSize: 2 * pagelog.DefaultPageSize})
			return err
		},
		header: [2]int{0, 64},
		copies: []int{0, 4096},
	},
	{
		name:   "cow",
		create: func(r *persist.Region) (handle, error) { return cow.Create(r, &cow.Options{ObjectSize: 16, Count: 10}) },
		open:   func(r *persist.Region) (handle, error) { return cow.Open(r, nil) },
		read:   func(h handle) error { return h.(*cow.Array).Read(0, make([]byte, 16)) },
		write:  func(h handle) error { return h.(*cow.Array).Update(0, make([]byte, 16)) },
		tooSmall: func(r *persist.Region) error {
			_, err := cow.Create(r, &cow.Options{ObjectSize: 1 << 10, Count: 1 << 20})
			return err
		},
		mismatch: func(r *persist.Region) error {
			_, err := cow.Open(r, &cow.Options{ObjectSize: 32})
			return err
		},
		header: [2]int{0, 64},
	},
	{
		name:   "fam",
		create: func(r *persist.Region) (handle, error) { return fam.Create(r, &fam.Options{ObjectSize: 16, Count: 10}) },
		open:   func(r *persist.Region) (handle, error) { return fam.Open(r, nil) },
		read:   func(h handle) error { return h.(*fam.Array).Read(0, make([]byte, 16)) },
		write:  func(h handle) error { return h.(*fam.Array).Update(0, make([]byte, 16)) },
		tooSmall: func(r *persist.Region) error {
			_, err := fam.Create(r, &fam.Options{ObjectSize: 16, Count: 1 << 20})
			return err
		},
		mismatch: func(r *persist.Region) error {
			_, err := fam.Open(r, &fam.Options{ObjectSize: 32})
			return err
		},
		header: [2]int{0, 64},
	},
	{
		name: "fam-log",
		create: func(r *persist.Region) (handle, error) {
			return fam.CreateLog(r, &fam.LogOptions{ObjectSize: 16, Count: 10, Lanes: 3, LaneBytes: 4096})
		},
		open:  func(r *persist.Region) (handle, error) { return fam.OpenLog(r, nil) },
		read:  func(h handle) error { return h.(*fam.LogArray).Read(0, make([]byte, 16)) },
		write: func(h handle) error { return h.(*fam.LogArray).Update(0, make([]byte, 16)) },
		tooSmall: func(r *persist.Region) error {
			_, err := fam.CreateLog(r, &fam.LogOptions{ObjectSize: 16, Count: 1 << 20, Lanes: 3, LaneBytes: 4096})
			return err
		},
		mismatch: func(r *persist.Region) error {
			_, err := fam.OpenLog(r, &fam.LogOptions{ObjectSize: 32})
			return err
		},
		header: [2]int{0, 64},
	},
	{
		name:   "fptree",
		create: func(r *persist.Region) (handle, error) { return fptree.Create(r, &fptree.Options{Size: 64 << 10}) },
		open:   func(r *persist.Region) (handle, error) { return fptree.Open(r, nil) },
		read:   func(h handle) error { _, _, err := h.(*fptree.Tree).Get(1); return err },
		write:  func(h handle) error { return h.(*fptree.Tree).Put(1, 2) },
		tooSmall: func(r *persist.Region) error {
			_, err := fptree.Create(r, &fptree.Options{Leaves: 1 << 20})
			return err
		},
		mismatch: func(r *persist.Region) error {
			_, err := fptree.Open(r, &fptree.Options{LeafSlots: 8})
			return err
		},
		header: [2]int{0, 64},
	},
}

// is checks that err matches want and none of the other shared sentinels
// of the vocabulary (a closed handle is not "corrupt", "nothing here" is
// not "another kind").
func is(t *testing.T, err, want error, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.ErrorIs(t, err, want, "%s: %v", what, err)
	for _, other := range []error{persist.ErrClosed, persist.ErrEmpty, persist.ErrBadFormat, persist.ErrCorrupt, persist.ErrTooSmall,
		persist.ErrReadOnly, persist.ErrInvalid, persist.ErrBusy} {
		if other != want {
			require.NotErrorIs(t, err, other, "%s: %v", what, err)
		}
	}
}

// TestConformance: the same sentinel of package persist for the same
// situation, in every kind.
func TestConformance(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Run("closed", func(t *testing.T) {
				r := structtest.Region(t, regionSize)
				h, err := k.create(r)
				require.NoError(t, err)
				require.NoError(t, h.Close())
				is(t, k.read(h), persist.ErrClosed, "a read after Close")
				is(t, k.write(h), persist.ErrClosed, "a write after Close")
				is(t, h.Close(), persist.ErrClosed, "a second Close")
			})
			t.Run("empty", func(t *testing.T) {
				_, err := k.open(structtest.Region(t, regionSize))
				is(t, err, persist.ErrEmpty, "Open of zeros")
			})
			t.Run("foreign", func(t *testing.T) {
				for _, o := range kinds {
					if o.name == k.name {
						continue
					}
					// The other structure open (the header is read before
					// the claim: not ErrBusy), then closed.
					r := structtest.Region(t, regionSize)
					h, err := o.create(r)
					require.NoError(t, err)
					_, err = k.open(r)
					is(t, err, persist.ErrBadFormat, "Open over an open "+o.name)
					require.NoError(t, h.Close())
					_, err = k.open(r)
					is(t, err, persist.ErrBadFormat, "Open of a "+o.name)
				}
				// Bytes that are no header at all.
				r := structtest.Region(t, regionSize)
				rng := structtest.NewRand(uint64(len(k.name)))
				for range 100 {
					rng.Fill(r.Bytes()[:8192])
					_, err := k.open(r)
					is(t, err, persist.ErrBadFormat, fmt.Sprintf("Open of random bytes %x...", r.Bytes()[:16]))
				}
			})
			t.Run("too-small", func(t *testing.T) {
				is(t, k.tooSmall(structtest.Region(t, regionSize)), persist.ErrTooSmall, "Create too large for the region")
			})
			t.Run("read-only", func(t *testing.T) {
				rw, ro := structtest.MapFile(t, regionSize)
				h, err := k.create(rw)
				require.NoError(t, err)
				require.NoError(t, h.Close())
				r := ro()
				_, err = k.create(r)
				is(t, err, persist.ErrReadOnly, "Create in a read-only region")
				h, err = k.open(r)
				require.NoError(t, err, "Open in a read-only region")
				is(t, k.write(h), persist.ErrReadOnly, "a write in a read-only region")
				require.NoError(t, k.read(h), "a read in a read-only region")
				require.NoError(t, h.Close())
			})
			t.Run("mismatch", func(t *testing.T) {
				r := structtest.Region(t, regionSize)
				h, err := k.create(r)
				require.NoError(t, err)
				require.NoError(t, h.Close())
				is(t, k.mismatch(r), persist.ErrInvalid, "Open with contradicting Options")
			})
			t.Run("corrupt-header", func(t *testing.T) {
				r := structtest.Region(t, regionSize)
				h, err := k.create(r)
				require.NoError(t, err)
				require.NoError(t, h.Close())
				copies := k.copies
				if copies == nil {
					copies = []int{0}
				}
				flip := func(i int) {
					for _, c := range copies {
						r.Bytes()[c+i] ^= 0x10
					}
				}
				for i := k.header[0] + 8; i < k.header[1]; i += 7 { // past the magic
					flip(i)
					_, err := k.open(r)
					flip(i)
					is(t, err, persist.ErrCorrupt, fmt.Sprintf("Open with header byte %d flipped", i))
				}
			})
		})
	}
}
