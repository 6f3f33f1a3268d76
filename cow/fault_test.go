package cow_test

import (
	"testing"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// A failed sync (msync EIO) fails the array's region for good: the Update
// that met it and every later one return persist.ErrSyncFailed, nothing
// is acknowledged after it, the acknowledged values read, and the array
// reopened from its file holds them. (cow allocates nothing after Create:
// a full device is the region's Map, persist.ErrFull.)
func TestSyncFailure(t *testing.T) {
	for _, sum := range []bool{false, true} {
		r, faults := structtest.MapFaulty(t, 64<<10)
		require.Equal(t, persist.ModeMsync, r.Info().Mode)
		opts := &cow.Options{ObjectSize: 40, Count: 32, Checksum: sum}
		a, err := cow.Create(r, opts)
		require.NoError(t, err)
		structtest.SyncFailure(t, r, faults, a, func(r *persist.Region) (structtest.Objects, error) { return cow.Open(r, nil) }, 9)
	}
}
