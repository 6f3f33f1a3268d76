package fam_test

import (
	"testing"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// A failed sync (msync EIO) fails the array's region for good: the Update
// that met it and every later one return persist.ErrSyncFailed, nothing
// is acknowledged after it, the acknowledged values read, and the array
// reopened from its file holds them — for the FAM array and the log-based
// one. (Neither allocates after Create: a full device is the region's
// Map, persist.ErrFull.)
func TestSyncFailure(t *testing.T) {
	for _, c := range []struct {
		name   string
		create func(*persist.Region) (structtest.Objects, error)
		open   func(*persist.Region) (structtest.Objects, error)
	}{
		{"fam",
			func(r *persist.Region) (structtest.Objects, error) {
				return fam.Create(r, &fam.Options{ObjectSize: 40, Count: 32})
			},
			func(r *persist.Region) (structtest.Objects, error) { return fam.Open(r, nil) }},
		{"log",
			func(r *persist.Region) (structtest.Objects, error) {
				return fam.CreateLog(r, &fam.LogOptions{ObjectSize: 40, Count: 32, Lanes: 2, LaneBytes: 1024})
			},
			func(r *persist.Region) (structtest.Objects, error) { return fam.OpenLog(r, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, faults := structtest.MapFaulty(t, 64<<10)
			require.Equal(t, persist.ModeMsync, r.Info().Mode)
			a, err := c.create(r)
			require.NoError(t, err)
			structtest.SyncFailure(t, r, faults, a, c.open, 9)
		})
	}
}
