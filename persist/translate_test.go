package persist_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// TestRegionError: a closed or read-only region's error becomes the
// package's sentinel (still matching persist's), with what needed it;
// others pass through.
func TestRegionError(t *testing.T) {
	closed := persist.NewError("pkg: the region is closed", persist.ErrClosed)
	ro := persist.NewError("pkg: the region is read-only", persist.ErrReadOnly)
	require.NoError(t, persist.RegionError(nil, closed, ro, "x"))
	err := persist.RegionError(fmt.Errorf("wrapped: %w", persist.ErrClosed), closed, ro, "Open")
	require.ErrorIs(t, err, closed)
	require.ErrorIs(t, err, persist.ErrClosed)
	require.EqualError(t, err, "pkg: the region is closed (Open)")
	err = persist.RegionError(persist.ErrReadOnly, closed, ro, "Create needs a writable region")
	require.ErrorIs(t, err, persist.ErrReadOnly)
	require.EqualError(t, err, "pkg: the region is read-only (Create needs a writable region)")
	require.Equal(t, persist.ErrRange, persist.RegionError(persist.ErrRange, closed, ro, "x"))
}
