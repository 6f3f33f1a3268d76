package sort

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// Keys longer than the 16 bytes the loser tree compares as words, with a
// common 16-byte prefix: the merge's order rests on the deep comparison,
// from the tree's first build on (MergePass and EMS, several runs).
func TestMergeLongKeysCommonPrefix(t *testing.T) {
	dir := t.TempDir()
	f := Format{KeySize: 24, ValueSize: 8}
	rng := structtest.NewRand(7)
	const n = 20000
	b := make([]byte, n*32)
	for i := 0; i < n; i++ {
		rec := b[i*32 : (i+1)*32]
		copy(rec, "common-prefix-16")
		rng.Fill(rec[16:])
	}
	in := filepath.Join(dir, "in")
	require.NoError(t, os.WriteFile(in, b, 0o644))
	for _, mode := range []Mode{MergePass, EMS} {
		s, err := NewSorter(&Options{Mode: mode, Format: f, MemBudget: 4 << 20, WriteBuffer: 16 << 10})
		require.NoError(t, err)
		s.runCap = 3000
		out := filepath.Join(dir, "out-"+string(mode))
		rep, err := s.Sort(context.Background(), in, out)
		s.Close()
		require.NoError(t, err, "%s (seed %d)", mode, rng.Seed())
		require.Greater(t, rep.Runs, 2)
		requireSorted(t, f, b, out)
	}
}
