package raftstore

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftbench "github.com/hashicorp/raft/bench"
	"github.com/stretchr/testify/require"
)

// The LogStore and StableStore helpers hashicorp/raft ships (its bench
// package), each on a fresh store: as benchmarks (go test -bench), and
// as a test that runs each helper for a fixed count of iterations and
// fails when the helper fails (testing.Benchmark returns N 0 then).

var helpers = []struct {
	name string
	fn   func(*testing.B, *Store)
}{
	{"FirstIndex", func(b *testing.B, s *Store) { raftbench.FirstIndex(b, s) }},
	{"LastIndex", func(b *testing.B, s *Store) { raftbench.LastIndex(b, s) }},
	{"GetLog", func(b *testing.B, s *Store) { raftbench.GetLog(b, s) }},
	{"StoreLog", func(b *testing.B, s *Store) { raftbench.StoreLog(b, s) }},
	{"StoreLogs", func(b *testing.B, s *Store) { raftbench.StoreLogs(b, s) }},
	{"DeleteRange", func(b *testing.B, s *Store) { raftbench.DeleteRange(b, s) }},
	{"Set", func(b *testing.B, s *Store) { raftbench.Set(b, s) }},
	{"Get", func(b *testing.B, s *Store) { raftbench.Get(b, s) }},
	{"SetUint64", func(b *testing.B, s *Store) { raftbench.SetUint64(b, s) }},
	{"GetUint64", func(b *testing.B, s *Store) { raftbench.GetUint64(b, s) }},
}

// helperOptions holds what the helpers write in 300 iterations.
var helperOptions = Options{Segments: 4, SegmentSize: 256 << 10, StableSize: 64 << 10}

// benchOptions holds what the helpers write at benchmark counts.
var benchOptions = Options{Segments: 16, SegmentSize: 64 << 20, StableSize: 1 << 20}

var (
	_ raft.LogStore    = (*Store)(nil)
	_ raft.StableStore = (*Store)(nil)
)

func TestRaftBenchHelpers(t *testing.T) {
	old := flag.Lookup("test.benchtime").Value.String()
	require.NoError(t, flag.Set("test.benchtime", "300x"))
	defer flag.Set("test.benchtime", old)
	for _, h := range helpers {
		t.Run(h.name, func(t *testing.T) {
			runs := 0
			r := testing.Benchmark(func(b *testing.B) {
				s, _ := openTemp(b, &helperOptions)
				defer s.Close()
				runs++
				h.fn(b, s)
			})
			require.Equal(t, 300, r.N, "the helper failed (testing.Benchmark reports N 0 for a failed benchmark)")
			require.Positive(t, runs)
		})
	}
}

func BenchmarkRaft(b *testing.B) {
	for _, h := range helpers {
		b.Run(h.name, func(b *testing.B) {
			s := openShm(b)
			b.ResetTimer()
			h.fn(b, s)
		})
	}
}

// openShm opens a store of benchOptions in /dev/shm (tmpfs) where there
// is one, with the PMem path forced: the benchmarks measure the store,
// not the page cache of a disk file. Closed and removed at the end.
func openShm(b *testing.B) *Store {
	dir := "/dev/shm"
	if _, err := os.Stat(dir); err != nil {
		dir = b.TempDir()
	}
	f, err := os.MkdirTemp(dir, "raftstore-bench-")
	require.NoError(b, err)
	s, err := Open(filepath.Join(f, "raft.pm"), fast(&benchOptions))
	require.NoError(b, err)
	b.Cleanup(func() {
		s.Close()
		os.RemoveAll(f)
	})
	return s
}

// BenchmarkStoreLogs16 appends 128-byte entries in batches of 16.
func BenchmarkStoreLogs16(b *testing.B) {
	s := openShm(b)
	logs := make([]*raft.Log, 16)
	for i := range logs {
		logs[i] = &raft.Log{Term: 1, Data: make([]byte, 128)}
	}
	next := uint64(1)
	b.ResetTimer()
	for b.Loop() {
		for _, l := range logs {
			l.Index = next
			next++
		}
		if err := s.StoreLogs(logs); err != nil {
			b.Fatal(err)
		}
	}
}
