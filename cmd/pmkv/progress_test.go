package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreProgress (issue 26 point 5): with -progress on, the store's
// long work draws bars on standard error — recovery at open, the GC pass,
// the checkpoint at close — each named by its step; with -progress off
// (and by default, standard error not being a terminal) nothing is drawn.
func TestStoreProgress(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv")
	}
	dir := filepath.Join(t.TempDir(), "store")
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "key%05d\tvalue-%d\n", i, i)
	}
	file := filepath.Join(t.TempDir(), "in.tsv")
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	code, _, stderr := pmkv(t, append(small(dir), "load", "-progress", "off", file)...)
	require.Zero(t, code, stderr)
	require.Empty(t, stderr)

	code, _, stderr = pmkv(t, append(small(dir), "gc", "-progress", "on")...)
	require.Zero(t, code, stderr)
	for _, step := range []string{"recover: checkpoint", "recover: logs", "recover: index", "checkpoint: entries"} {
		require.Contains(t, stderr, step)
	}
	require.Contains(t, stderr, "(0/3000)", "the checkpoint's bar counts the index entries")

	code, _, stderr = pmkv(t, append(small(dir), "gc", "-progress", "off")...)
	require.Zero(t, code, stderr)
	require.Empty(t, stderr)
	code, _, stderr = pmkv(t, append(small(dir), "stats")...)
	require.Zero(t, code, stderr)
	require.Empty(t, stderr, "no bar when standard error is not a terminal")
}
