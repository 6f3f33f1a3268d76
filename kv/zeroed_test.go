package kv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNewSegmentsNotZeroed: on a new store the workers' first metadata
// logs start on new segment files, which are zeros, without zeroing them
// again (that was a whole segment of media writes per worker before the
// first put: 0.9 s of emulated device time per device at optane-1dimm:10);
// a reopened store takes no segment for zeros (it zeroes a metadata
// segment before its log starts, and counts that in MediaBytes).
func TestNewSegmentsNotZeroed(t *testing.T) {
	o := testOptions(t, 1)
	o.SegmentSize, o.DeviceSize = 1<<20, 16<<20
	s := mustOpen(t, o)
	require.NoError(t, s.Put([]byte("k"), []byte("v")))
	used := 0
	for _, g := range s.devs[0].list() {
		// A segment is taken for zeros until it is formatted.
		require.Equal(t, g.kind == kindFree, g.zeroed, "segment %d (kind %d)", g.idx, g.kind)
		if g.kind != kindFree {
			used++
		}
	}
	require.Positive(t, used)
	st := s.Stats()
	require.Less(t, st.MediaBytes, uint64(64<<10), "a new store's first put streamed %d bytes", st.MediaBytes)
	require.NoError(t, s.Close())

	// Reopened: the segments are old files now, none taken for zeros; the
	// store still works across metadata-segment switches.
	s = mustOpen(t, o)
	for _, g := range s.devs[0].list() {
		require.False(t, g.zeroed, "segment %d of a reopened store taken for zeros", g.idx)
	}
	for i := range 60000 {
		require.NoError(t, s.Put([]byte{byte(i), byte(i >> 8), byte(i >> 16)}, nil))
	}
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
	s = mustOpen(t, o)
	v, err := s.Get([]byte{1, 0, 0})
	require.NoError(t, err)
	require.Empty(t, v)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}
