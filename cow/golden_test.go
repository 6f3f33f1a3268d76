package cow_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// TestGoldenLayout pins the on-media bytes of an Array: the header line and
// the slots of three objects updated 0, 1 and 2 times, for each slot shape
// (sel and both copies in one line; sel and copy 0 in line 0; sel alone)
// with and without checksums. A layout change fails here until the format
// version changes with it (then -update-golden).
func TestGoldenLayout(t *testing.T) {
	for _, sum := range []bool{false, true} {
		for _, size := range []int{16, 40, 100} {
			name := fmt.Sprintf("array-%d", size)
			if sum {
				name += "-checksum"
			}
			t.Run(name, func(t *testing.T) {
				const off = 128
				r := structtest.Region(t, 1<<16)
				a, err := createArray(r, off, size, 3, sum)
				require.NoError(t, err)
				v := make([]byte, size)
				for i := range 3 {
					for u := range i {
						for j := range v {
							v[j] = byte(0x10*(i+1) + u + j)
						}
						require.NoError(t, a.Update(i, v))
					}
				}
				n, err := footprint(size, 3)
				require.NoError(t, err)
				structtest.Golden(t, name, r.Bytes()[off:off+n])
				require.NoError(t, a.Close())
			})
		}
	}
}

func createArray(r *persist.Region, off, size, count int, sum bool) (*cow.Array, error) {
	return cow.Create(r, &cow.Options{Offset: off, ObjectSize: size, Count: count, Checksum: sum})
}

func footprint(size, count int) (int, error) {
	return cow.Footprint(&cow.Options{ObjectSize: size, Count: count})
}
