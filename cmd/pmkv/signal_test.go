package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pmkvProcess starts this test binary as pmkv.
func pmkvProcess(t *testing.T, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), "BRAID_PMKV_MAIN=1")
	var stderr strings.Builder
	c.Stderr = &stderr
	require.NoError(t, c.Start())
	return c, &stderr
}

// waitFiles waits (by polling, bounded by count) until dir holds files.
func waitFiles(t *testing.T, dir string) {
	t.Helper()
	for range 2000 {
		if hasFiles(dir) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never got files", dir)
}

func exitCode(t *testing.T, c *exec.Cmd, stderr *strings.Builder) int {
	t.Helper()
	err := c.Wait()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "%v: %s", err, stderr)
	return ee.ExitCode()
}

// SIGINT during bench and during load: exit 130, the store closed, and
// pmkv check passes on it after; every key load stored has its value.
func TestInterruptLeavesStoreConsistent(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv (the stand-in has no durability)")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "bench")
	c, stderr := pmkvProcess(t, append([]string{"bench", "-records", "2000000", "-progress", "off"}, small(dir)...)...)
	waitFiles(t, filepath.Join(dir, "dev0"))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, c.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, exitCode(t, c, stderr), stderr.String())
	require.Contains(t, stderr.String(), "pmkv: interrupted")
	require.Contains(t, mustRun(t, cmd("check", dir)...), "ok: ")

	// load reads its records from a pipe: once the test has written
	// 30,000 lines into it, most of them have been read and applied.
	dir = filepath.Join(base, "load")
	c = exec.Command(os.Args[0], append(append([]string{"load"}, small(dir)...), "-group", "100", "-")...)
	c.Env = append(os.Environ(), "BRAID_PMKV_MAIN=1")
	stderr = &strings.Builder{}
	c.Stderr = stderr
	stdin, err := c.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, c.Start())
	w := bufio.NewWriter(stdin)
	for i := range 30_000 {
		fmt.Fprintf(w, "k%07d\tv%07d\n", i, i)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, c.Process.Signal(syscall.SIGINT))
	for i := 30_000; i < 31_000; i++ {
		fmt.Fprintf(w, "k%07d\tv%07d\n", i, i)
	}
	w.Flush() // may fail: the reader stopped
	stdin.Close()
	require.Equal(t, 130, exitCode(t, c, stderr), stderr.String())
	require.Contains(t, mustRun(t, cmd("check", dir)...), "ok: ")
	scan := mustRun(t, cmd("scan", dir, "", "")...)
	lines := strings.Split(strings.TrimSuffix(scan, "\n"), "\n")
	t.Logf("%d of the 31000 records loaded before SIGINT", len(lines))
	require.Greater(t, len(lines), 1000, "loading when interrupted")
	require.Less(t, len(lines), 31_000, "interrupted before the end")
	for i, l := range lines {
		require.Equal(t, fmt.Sprintf("k%07d\tv%07d", i, i), l, "the records before the interrupt, in order, each whole")
	}
	// It said how many are stored and how to resume (issue 26 point 5);
	// resuming with that -skip stores the rest.
	m := regexp.MustCompile(`pmkv load: ([0-9,]+) records stored \(durable\); rerun with -skip ([0-9]+) to resume`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())
	require.Equal(t, strconv.Itoa(len(lines)), m[2])
	require.Equal(t, m[2], strings.ReplaceAll(m[1], ",", ""))
	all := filepath.Join(base, "all.txt")
	var text []byte
	for i := range 31_000 {
		text = fmt.Appendf(text, "k%07d\tv%07d\n", i, i)
	}
	require.NoError(t, os.WriteFile(all, text, 0o644))
	mustRun(t, cmd("load", dir, "-skip", m[2], all)...)
	require.Equal(t, string(text), mustRun(t, cmd("scan", dir, "", "")...))
}
