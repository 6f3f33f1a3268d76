package walog_test

import (
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// TestOneOpenLogPerArea: a second log on the area of an open one is
// refused (the two would overwrite each other's acknowledged entries);
// closing the first lets it open, and an Open that fails holds nothing.
func TestOneOpenLogPerArea(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 1<<16)
			l1 := mustCreate(t, r, &walog.Options{Format: f})
			_, err := l1.Append([]byte("one"))
			require.NoError(t, err)

			_, err = walog.Open(r, nil)
			require.ErrorIs(t, err, persist.ErrBusy)
			require.ErrorContains(t, err, "walog "+f.String()+" log at bytes 0..65536 overlaps")
			_, err = walog.Create(r, &walog.Options{Format: f, Offset: 4096, Size: 8192})
			require.ErrorIs(t, err, persist.ErrBusy, "an area inside the open log's")
			_, err = walog.Split(r, 2)
			require.NoError(t, err, "Split only computes parts")
			parts, _ := walog.Split(r, 2)
			_, err = walog.CreateSet(parts, nil)
			require.ErrorIs(t, err, persist.ErrBusy)

			_, err = l1.Append([]byte("two"))
			require.NoError(t, err, "the first log is untouched by the refusals")
			require.NoError(t, l1.Close())
			l2 := mustOpen(t, r, nil)
			require.Equal(t, []entry{{1, []byte("one")}, {2, []byte("two")}}, all(t, l2))
			require.NoError(t, l2.Close())

			// A failing Open releases its claim.
			_, err = walog.Open(r, &walog.Options{Format: f + 1})
			require.Error(t, err)
			l3 := mustOpen(t, r, nil)
			require.NoError(t, l3.Close())
		})
	}
}

// TestSetClaims: the members of a set claim their own parts; a failed
// CreateSet releases the members it had created.
func TestSetClaims(t *testing.T) {
	r := anon(t, 1<<20)
	parts, err := walog.Split(r, 4)
	require.NoError(t, err)
	blocker := mustCreate(t, r, &walog.Options{Offset: parts[2].Offset, Size: parts[2].Size})
	_, err = walog.CreateSet(parts, nil)
	require.ErrorIs(t, err, persist.ErrBusy)
	require.ErrorContains(t, err, "set member 2")
	require.NoError(t, blocker.Close())

	s, err := walog.CreateSet(parts, nil)
	require.NoError(t, err, "members 0 and 1 of the failed CreateSet were released")
	_, err = walog.OpenSet(parts, nil)
	require.ErrorIs(t, err, persist.ErrBusy)
	_, err = walog.Create(r, &walog.Options{Offset: parts[1].Offset, Size: parts[1].Size})
	require.ErrorIs(t, err, persist.ErrBusy, "a standalone log over an open member")
	require.NoError(t, s.Close())
	s, err = walog.OpenSet(parts, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// TestOpenShortRegion: a region shorter than the log its header describes
// (a truncated file, a smaller mapping) is a clear error naming both
// sizes, not corruption: the header's checksum holds.
func TestOpenShortRegion(t *testing.T) {
	mem := make([]byte, 64<<10)
	l := mustCreate(t, memRegion(t, mem), nil)
	_, err := l.Append([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	for _, salvage := range []bool{false, true} {
		_, err = walog.Open(memRegion(t, mem[:8192]), &walog.Options{Salvage: salvage})
		require.ErrorIs(t, err, walog.ErrTooSmall)
		require.ErrorIs(t, err, persist.ErrTooSmall)
		require.NotErrorIs(t, err, persist.ErrCorrupt)
		require.ErrorContains(t, err, "the log at offset 0 is 65536 bytes, the region has 8192")
	}
}
