package raftstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// What hashicorp/raft-wal v0.4.0 gets wrong, shown not to happen here:
// a store reopened after a tail truncation reads what it held, entries
// deleted from the front are raft.ErrLogNotFound, and Close lets go of
// every file.

// TestReopenAfterTailTruncation: a follower drops conflicting entries
// (DeleteRange of a suffix that spans segments), appends the leader's,
// and the reopened store holds exactly the new log.
func TestReopenAfterTailTruncation(t *testing.T) {
	s, path := openTemp(t, &small)
	require.NoError(t, s.StoreLogs(entries(1, 200, 1)))
	require.Greater(t, s.segmentsUsed(), 2, "the log must span segments")
	for _, cut := range []uint64{180, 150, 120} {
		require.NoError(t, s.DeleteRange(cut, 200))
		last, err := s.LastIndex()
		require.NoError(t, err)
		require.Equal(t, cut-1, last)
		require.NoError(t, s.StoreLogs(entries(cut, 200, cut)))
	}
	want := raft.NewInmemStore()
	require.NoError(t, want.StoreLogs(entries(1, 119, 1)))
	require.NoError(t, want.StoreLogs(entries(120, 200, 120)))
	sameAs(t, s, want)
	require.NoError(t, s.Close())
	s, err := Open(path, fast(nil))
	require.NoError(t, err)
	sameAs(t, s, want)
	// A truncation that leaves nothing but the first entry, reopened.
	require.NoError(t, s.DeleteRange(2, 200))
	require.NoError(t, s.Close())
	s, err = Open(path, fast(nil))
	require.NoError(t, err)
	require.NoError(t, want.DeleteRange(2, 200))
	sameAs(t, s, want)
	require.NoError(t, s.Close())
}

// TestDeletedFrontNotFound: after compaction the deleted entries answer
// raft.ErrLogNotFound (the very value: raft compares with ==), before and
// after a reopen, and FirstIndex moves.
func TestDeletedFrontNotFound(t *testing.T) {
	s, path := openTemp(t, &small)
	require.NoError(t, s.StoreLogs(entries(1, 200, 1)))
	require.NoError(t, s.DeleteRange(1, 150))
	for pass := range 2 {
		first, err := s.FirstIndex()
		require.NoError(t, err)
		require.Equal(t, uint64(151), first, "pass %d", pass)
		for i := uint64(0); i <= 150; i++ {
			err := s.GetLog(i, new(raft.Log))
			require.True(t, err == raft.ErrLogNotFound, "GetLog(%d) after deleting 1..150: %v", i, err)
		}
		var l raft.Log
		require.NoError(t, s.GetLog(151, &l))
		equalLog(t, entry(151, 1), &l)
		require.NoError(t, s.Close())
		s, err = Open(path, fast(nil))
		require.NoError(t, err)
	}
	// Deleting everything: nothing is found, and the log starts again
	// wherever raft puts it (after a snapshot install), even below.
	require.NoError(t, s.DeleteRange(0, 1<<63))
	require.True(t, s.GetLog(200, new(raft.Log)) == raft.ErrLogNotFound)
	require.NoError(t, s.StoreLogs(entries(40, 60, 2)))
	require.NoError(t, s.Close())
	s, err := Open(path, fast(nil))
	require.NoError(t, err)
	want := raft.NewInmemStore()
	require.NoError(t, want.StoreLogs(entries(40, 60, 2)))
	sameAs(t, s, want)
	require.NoError(t, s.Close())
}

// TestCloseReleasesFiles: after Close the process holds no descriptor of
// the store's file and no mapping of it.
func TestCloseReleasesFiles(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd on this system")
	}
	s, path := openTemp(t, &small)
	require.NoError(t, s.StoreLogs(entries(1, 50, 1)))
	require.NoError(t, s.Set([]byte("k"), []byte("v")))
	require.True(t, holds(t, path), "an open store maps its file")
	require.NoError(t, s.Close())
	require.False(t, holds(t, path), "a closed store holds its file")
	// And the file can be opened again, and removed.
	s, err := Open(path, fast(nil))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.False(t, holds(t, path))
	require.NoError(t, os.Remove(path))
}

// holds reports whether this process has path open or mapped.
func holds(t *testing.T, path string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, fd := range fds {
		if dst, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && dst == path {
			return true
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	return strings.Contains(string(maps), path)
}
