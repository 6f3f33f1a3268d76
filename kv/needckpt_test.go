package kv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMissingCheckpointRefused: once GC has freed metadata segments a
// checkpoint covered, the logs no longer hold every key, and a store
// whose checkpoint directory is lost must not open as what is left of
// its logs (that lost 1,161 of 3,000 keys with `check` saying ok, found
// by an outside review): kv.id says a checkpoint is needed, and Open
// refuses with ErrCorrupt, writing nothing. Put the directory back and
// every key is there. A store whose metadata was never cleaned opens
// from its logs alone, as before.
func TestMissingCheckpointRefused(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice = 1
	o.DeviceSize = 24 * o.SegmentSize
	s := mustOpen(t, o)
	val := bytes.Repeat([]byte("v"), 16)
	const keys, rounds = 1000, 16
	for round := range rounds {
		for i := range keys {
			require.NoError(t, s.Put(fmt.Appendf(nil, "key%04d", i), append(val, byte(round))))
		}
		require.NoError(t, s.Checkpoint())
		_, err := s.GC()
		require.NoError(t, err)
	}
	require.True(t, s.needsCkpt, "the workload must free metadata segments a checkpoint covered")
	require.NoError(t, s.Close())
	id, err := os.ReadFile(filepath.Join(o.Devices[0], idFile))
	require.NoError(t, err)
	require.Contains(t, string(id), idNeedsCheckpoint)

	moved := o.CheckpointDir + ".away"
	require.NoError(t, os.Rename(o.CheckpointDir, moved))
	before := storeFiles(t, o)
	_, err = Open(o)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "holds no usable one")
	ro := *o
	ro.ReadOnly = true
	_, err = Open(&ro)
	require.Error(t, err, "a read-only open refuses it too")
	require.NoError(t, os.RemoveAll(o.CheckpointDir)) // what the refused Open may have made
	require.Equal(t, before, storeFiles(t, o), "a refused Open writes nothing to the devices")

	require.NoError(t, os.Rename(moved, o.CheckpointDir))
	s = mustOpen(t, o)
	for i := range keys {
		v, err := s.Get(fmt.Appendf(nil, "key%04d", i))
		require.NoError(t, err, "key %d", i)
		require.Equal(t, append(val, rounds-1), v)
	}
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// TestIDLine: kv.id's line round-trips with and without the mark, and
// anything else is ErrBadFormat.
func TestIDLine(t *testing.T) {
	for _, need := range []bool{false, true} {
		for _, files := range []int{0, 17} {
			want := idInfo{storeID: 0xabc, dev: 1, devs: 2, segSize: 1 << 20, files: files, needsCkpt: need}
			got, err := parseID(idLine(want))
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	}
	for _, bad := range []string{"", "braid kv store 1 device 0 of 1", "braid kv store 1 device 0 of 1 segment 5 extra", "braid kv store 1 device 0 of 1 segment 5 files x", "hello"} {
		_, err := parseID([]byte(bad))
		require.ErrorIs(t, err, ErrBadFormat, "%q", bad)
	}
}
