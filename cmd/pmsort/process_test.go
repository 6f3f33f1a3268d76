package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// pmsortProcess starts this test binary as pmsort with args.
func pmsortProcess(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BRAID_PMSORT_MAIN=1", "BRAID_FORCE_PMEM=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Start())
	return cmd, stderr, &stdout
}

// waitExit waits for cmd and returns its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	return ee.ExitCode()
}

// waitFor polls (a bounded number of times) until a file matching glob
// exists.
func waitFor(t *testing.T, glob string) {
	t.Helper()
	for i := 0; i < 20000; i++ {
		if m, _ := filepath.Glob(glob); len(m) > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no %s appeared", glob)
}

// TestSignalsProcess: SIGHUP (the terminal closed), SIGINT and SIGTERM
// during sort, gen and bench stop the work, remove every file it made and
// exit 129 or 130, saying so.
func TestSignalsProcess(t *testing.T) {
	dir := structtest.TempShm(t)
	in := filepath.Join(dir, "in")
	code, _, msg := pmsort(t, "gen", "100000", in)
	require.Equal(t, 0, code, msg)
	cases := []struct {
		sig  syscall.Signal
		code int
		msg  string
	}{
		{syscall.SIGHUP, 129, "pmsort: hung up (SIGHUP)\n"},
		{syscall.SIGINT, 130, "pmsort: interrupted\n"},
		{syscall.SIGTERM, 130, "pmsort: interrupted\n"},
	}
	type work struct {
		args []string
		glob string // exists once the work is under way
	}
	sortWork := work{[]string{"sort", "-progress", "off", "-mode", "mergepass", "-mem", "1MiB", "-wbuf", "64KiB", "-i", in, "-o", filepath.Join(dir, "out")},
		filepath.Join(dir, "pmsort-run-*")}
	for _, c := range cases {
		works := []work{sortWork}
		if c.sig == syscall.SIGHUP { // SIGINT and SIGTERM: TestInterrupted covers every command
			works = append(works,
				work{[]string{"gen", "5000000", filepath.Join(dir, "gen")}, filepath.Join(dir, ".gen.pmsort-*.tmp")},
				work{[]string{"bench", "-n", "100000", "-runs", "50", "-dir", dir}, filepath.Join(dir, "pmsort-bench-*.out")})
		}
		for _, w := range works {
			cmd, stderr, _ := pmsortProcess(t, w.args...)
			waitFor(t, w.glob)
			require.NoError(t, cmd.Process.Signal(c.sig))
			msg, _ := io.ReadAll(stderr)
			require.Equal(t, c.code, waitExit(t, cmd), "%v %v: %s", c.sig, w.args, msg)
			require.Equal(t, c.msg, string(msg), "%v %v", c.sig, w.args)
			left, _ := filepath.Glob(filepath.Join(dir, "*"))
			hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
			require.Equal(t, []string{in}, append(left, hidden...), "%v %v: files left behind", c.sig, w.args)
		}
	}
}

// TestInputShrinksProcess: the input truncated by another program during
// 'pmsort sort' (a SIGBUS on the next read of the mapping) is an error
// that says so, exit status 1, and nothing left behind — not a runtime
// fault dump.
func TestInputShrinksProcess(t *testing.T) {
	dir := structtest.TempShm(t)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	code, _, msg := pmsort(t, "gen", "100000", in)
	require.Equal(t, 0, code, msg)
	// (EMS has copied the whole input into its runs by the time it
	// writes output: a truncation then changes nothing it reads.)
	for _, mode := range []string{"onepass", "mergepass"} {
		cmd, stderr, _ := pmsortProcess(t, "sort", "-f", "-progress", "on", "-wbuf", "64KiB", "-mem", "8MiB",
			"-mode", mode, "-i", in, "-o", out)
		// The bar appears once the first output bytes are written: the
		// sort has most of its reads of the input still to do.
		r := bufio.NewReader(stderr)
		first, err := r.ReadString('%')
		require.NoError(t, err, "%s: %s", mode, first)
		require.NoError(t, os.Truncate(in, 100000))
		rest, _ := io.ReadAll(r)
		msg := first + string(rest)
		require.Equal(t, 1, waitExit(t, cmd), "%s: %s", mode, msg)
		require.Contains(t, msg, "pmsort sort: "+in+" changed size during the sort: it was 10000000 bytes when mapped, 100000 now", mode)
		require.NotContains(t, msg, "fatal error")
		require.NotContains(t, msg, "goroutine")
		left, _ := filepath.Glob(filepath.Join(dir, "*"))
		hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
		require.Equal(t, []string{in}, append(left, hidden...), "%s: files left behind", mode)
		code, _, msg = pmsort(t, "gen", "100000", in)
		require.Equal(t, 0, code, msg)
	}
	require.False(t, strings.Contains(msg, "sort: sort:"))
}
