package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// gen -b 10 f reads as gensort does: a bare -b is starting record 0, then
// NUM_RECS 10 and FILE_NAME f.
func TestGenBareB(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	code, _, msg := pmsort(t, "gen", "-b", "10", a)
	require.Equal(t, 0, code, msg)
	code, _, msg = pmsort(t, "gen", "10", b)
	require.Equal(t, 0, code, msg)
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	require.Len(t, ab, 1000)
	require.Equal(t, bb, ab)
}

// A BRAID_PROFILE that cannot be loaded is bad usage, as -profile is.
func TestBraidProfileUsage(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	code, _, msg := pmsort(t, "gen", "100", in)
	require.Equal(t, 0, code, msg)
	t.Setenv("BRAID_PROFILE", filepath.Join(dir, "missing.json"))
	for _, args := range [][]string{
		{"sort", "-i", in, "-o", filepath.Join(dir, "out")},
		{"bench", "-n", "100", "-dir", dir},
	} {
		code, _, msg = pmsort(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, msg)
		require.Contains(t, msg, "BRAID_PROFILE="+filepath.Join(dir, "missing.json")+": ")
	}
	left, _ := os.ReadDir(dir)
	require.Len(t, left, 1)
}

// Help is output: -h of every command (and 'pmsort help CMD') goes to
// standard output, so that 'pmsort sort -h | less' shows it.
func TestHelpToStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"help"}, {"gen", "-h"}, {"validate", "-h"}, {"sort", "-h"}, {"bench", "-h"}, {"help", "sort"}} {
		code, stdout, stderr := pmsort(t, args...)
		require.Equal(t, 0, code, "%v", args)
		require.Empty(t, stderr, "%v", args)
		require.Contains(t, stdout, "sage", "%v", args)
	}
}

// procFD names an open file descriptor by path, as /dev/stdout does.
func procFD(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// gen writes a pipe (and so /dev/stdout) in order, the bytes it writes to a
// file; validate reads a pipe, as valsort does, -perm INPUT too. (Streams
// of several windows: sort's TestGenerateOutputs and TestValidatePipe.)
func TestPipes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in")
	code, _, msg := pmsort(t, "gen", "-s", "20000", file)
	require.Equal(t, 0, code, msg)
	want, err := os.ReadFile(file)
	require.NoError(t, err)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	got := make(chan []byte)
	go func() {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r)
		got <- b.Bytes()
	}()
	code, _, msg = pmsort(t, "gen", "-s", "-c", "20000", procFD(w))
	require.Equal(t, 0, code, msg)
	require.NoError(t, w.Close())
	require.True(t, bytes.Equal(want, <-got), "gen to a pipe differs from gen to a file")
	r.Close()

	code, _, fromFile := pmsort(t, "validate", file)
	require.Equal(t, 1, code, fromFile)
	feed := func(b []byte) *os.File {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		go func() {
			_, _ = w.Write(b)
			w.Close()
		}()
		t.Cleanup(func() { r.Close() })
		return r
	}
	code, _, fromPipe := pmsort(t, "validate", procFD(feed(want)))
	require.Equal(t, 1, code, fromPipe)
	require.Equal(t, fromFile, fromPipe, "validate of a pipe reports what validate of the file reports")

	sorted := filepath.Join(dir, "sorted")
	code, _, msg = pmsort(t, "sort", "-i", file, "-o", sorted)
	require.Equal(t, 0, code, msg)
	sortedBytes, err := os.ReadFile(sorted)
	require.NoError(t, err)
	code, _, msg = pmsort(t, "validate", "-perm", procFD(feed(want)), procFD(feed(sortedBytes)))
	require.Equal(t, 0, code, msg)
	require.Contains(t, msg, "SUCCESS - all records are in order")
	require.Contains(t, msg, "Permutation of ")
	code, _, msg = pmsort(t, "validate", procFD(feed(sortedBytes[:250])))
	require.Equal(t, 1, code, msg)
	require.Contains(t, msg, ": bad record format: partial record found at end: size 250 is not a multiple of the record size 100")
}
