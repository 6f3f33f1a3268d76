package main

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// files is every file under dir: name -> bytes.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	}))
	return m
}

// TestReadOnlyCommands (issue 26, point 1): get, scan, stats, check and
// recover change no byte of the store (no checkpoint at close, no
// start-up GC), and gc reports its open's start-up pass with its own.
func TestReadOnlyCommands(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv")
	}
	dir := filepath.Join(t.TempDir(), "store")
	in := filepath.Join(t.TempDir(), "in.txt")
	var text []byte
	for round := range 4 {
		for i := range 3000 {
			text = fmt.Appendf(text, "k%05d\tv%d.%d%0200d\n", i, i, round, 0)
		}
	}
	require.NoError(t, os.WriteFile(in, text, 0o644))
	mustRun(t, cmd("load", dir, "-group", "500", in)...)
	before := files(t, dir)
	pad := fmt.Sprintf("%0200d", 0)
	require.Equal(t, "v42.3"+pad+"\n", mustRun(t, cmd("get", dir, "k00042")...))
	require.Equal(t, "k00001\tv1.3"+pad+"\n", mustRun(t, cmd("scan", dir, "k00001", "k00002")...))
	require.Regexp(t, `(?m)^keys\s+3000$`, mustRun(t, cmd("stats", dir)...))
	require.Contains(t, mustRun(t, cmd("check", dir)...), "ok: 3000 keys")
	require.Contains(t, mustRun(t, cmd("recover", dir)...), "3000")
	require.Equal(t, before, files(t, dir), "a read-only command changed the store")

	out := mustRun(t, cmd("gc", dir, "-json")...)
	require.Regexp(t, `"Startup": \{[^}]*"Moved": [1-9]`, out, "the open's pass moved the live entries of the overwritten segments")
}

// TestLoadProgress: -progress on draws load's bar on stderr (off a
// terminal too); the default (auto) draws none off a terminal.
func TestLoadProgress(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv")
	}
	dir := filepath.Join(t.TempDir(), "store")
	in := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(in, []byte("a\t1\nb\t2\n"), 0o644))
	code, _, stderr := pmkv(t, cmd("load", dir, "-progress", "on", in)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "load")
	code, _, stderr = pmkv(t, cmd("load", dir, in)...)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Equal(t, "953,000", commas(953000))
	require.Equal(t, "1,000,000", commas(1000000))
	require.Equal(t, "999", commas(999))
}

// TestCreateNoSpace (issue 26 point 4): a store bigger than the free
// space (a -device-size its file system could never hold) is refused with
// the sizes and the flag, exit 1,
// and the directories pmkv made for it are gone again.
func TestCreateNoSpace(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv")
	}
	dir := filepath.Join(t.TempDir(), "new", "store")
	code, _, stderr := pmkv(t, "put", "-dir", dir, "-segment", "1MiB", "-device-size", "1048576GiB", "k", "v")
	require.Equal(t, 1, code, stderr)
	require.Regexp(t, `^pmkv put: not enough free space for the store: device .*dev0: -device-size 1048576 GiB is more than its file system holds \([0-9.]+ MiB, [0-9.]+ MiB free\): give a smaller -device-size\n$`, stderr)
	require.NoDirExists(t, filepath.Dir(dir), "pmkv removed the directories it made")
}

// TestServeListenFails: serve that cannot listen (the address is taken)
// is a usage error, exit 2, and leaves no directory it made for a new
// store behind.
func TestServeListenFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "new", "store")
	code, _, stderr := pmkv(t, "serve", "-dir", dir, "-addr", ln.Addr().String())
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "address already in use")
	require.NoDirExists(t, filepath.Dir(dir), "pmkv removed the directories it made")
}
