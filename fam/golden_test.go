package fam_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// goldenValues updates object i of n objects i times with values that name
// the object and the update, so that every FAM block and record differs.
func goldenValues(t *testing.T, n, size int, update func(int, []byte) error) {
	v := make([]byte, size)
	for i := range n {
		for u := range i {
			for j := range v {
				v[j] = byte(0x10*(i+1) + u + 3*j)
			}
			require.NoError(t, update(i, v))
		}
	}
}

// TestGoldenLayout pins the on-media bytes of an Array (header line and
// the FAM blocks of objects updated 0 to 4 times: versions 0..3 and the
// wrap to 0; 8 and 16 bytes take the typed paths, 128 has two meta blocks)
// and of a LogArray (header, two lanes with their generation lines and
// redo records, the objects). A layout change fails here until the format
// version changes with it (then -update-golden).
func TestGoldenLayout(t *testing.T) {
	const off = 128
	for _, size := range []int{8, 16, 128} {
		name := fmt.Sprintf("array-%d", size)
		t.Run(name, func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			a, err := goldenCreate(r, off, size, 5)
			require.NoError(t, err)
			goldenValues(t, 5, size, a.Update)
			n, err := goldenFootprint(size, 5)
			require.NoError(t, err)
			structtest.Golden(t, name, r.Bytes()[off:off+n])
			require.NoError(t, a.Close())
		})
	}
	for _, size := range []int{12, 64} {
		name := fmt.Sprintf("logarray-%d", size)
		t.Run(name, func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			a, err := goldenCreateLog(r, off, size, 5)
			require.NoError(t, err)
			goldenValues(t, 5, size, a.Update)
			n, err := goldenLogFootprint(size, 5)
			require.NoError(t, err)
			structtest.Golden(t, name, r.Bytes()[off:off+n])
			require.NoError(t, a.Close())
		})
	}
}

var goldenLog = &fam.LogOptions{Lanes: 2, LaneBytes: 512}

func goldenCreate(r *persist.Region, off, size, count int) (*fam.Array, error) {
	return fam.Create(r, &fam.Options{Offset: off, ObjectSize: size, Count: count})
}

func goldenFootprint(size, count int) (int, error) {
	return fam.Footprint(&fam.Options{ObjectSize: size, Count: count})
}

func goldenCreateLog(r *persist.Region, off, size, count int) (*fam.LogArray, error) {
	return fam.CreateLog(r, &fam.LogOptions{Offset: off, ObjectSize: size, Count: count, Lanes: goldenLog.Lanes, LaneBytes: goldenLog.LaneBytes})
}

func goldenLogFootprint(size, count int) (int, error) {
	return fam.LogFootprint(&fam.LogOptions{ObjectSize: size, Count: count, Lanes: goldenLog.Lanes, LaneBytes: goldenLog.LaneBytes})
}
