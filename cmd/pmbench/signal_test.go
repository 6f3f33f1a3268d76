package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestSignalsProcess: pmbench as a process, stopped by SIGHUP (the
// terminal closed), SIGINT or SIGTERM while it measures, removes its -file
// (on tmpfs it is RAM, and a next pmbench would refuse to start over it)
// and exits 129 or 130, saying so.
func TestSignalsProcess(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		msg  string
	}{
		{syscall.SIGHUP, cli.ExitHangup, "pmbench: hung up (SIGHUP)\n"},
		{syscall.SIGINT, cli.ExitInterrupted, "pmbench: interrupted\n"},
		{syscall.SIGTERM, cli.ExitInterrupted, "pmbench: interrupted\n"},
	} {
		file := filepath.Join(structtest.TempShm(t), "bench.pm")
		cmd := exec.Command(os.Args[0], "-force-pmem", "-file", file, "-size", "8M", "-duration", "1m", "-threads", "1")
		cmd.Env = append(os.Environ(), "PMBENCH_TEST_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		for i := 0; i < 20000; i++ { // until the file exists (bounded)
			if _, err := os.Stat(file); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		require.FileExists(t, file)
		require.NoError(t, cmd.Process.Signal(c.sig))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v: %s", c.sig, stderr.String())
		require.Equal(t, c.code, ee.ExitCode(), "%v: %s", c.sig, stderr.String())
		require.Equal(t, c.msg, stderr.String(), "%v", c.sig)
		require.NoFileExists(t, file, "%v: the file is removed", c.sig)
	}
}

// TestFileShrinksProcess: the -file truncated by another program while
// pmbench measures it is an error naming the offset (exit status 1, the
// file removed), not a runtime fault dump.
func TestFileShrinksProcess(t *testing.T) {
	file := filepath.Join(structtest.TempShm(t), "bench.pm")
	cmd := exec.Command(os.Args[0], "-force-pmem", "-file", file, "-size", "8M", "-duration", "1m", "-threads", "1")
	cmd.Env = append(os.Environ(), "PMBENCH_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() }) // never leave it measuring for minutes
	// A truncation before Map has sized and preallocated the file is undone
	// by Map's fallocate, and pmbench would then measure for minutes
	// without faulting: truncate again (a bounded number of times) until
	// the process has ended, so that one truncation lands after Map.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	done := false
	for i := 0; i < 20000 && !done; i++ {
		if st, serr := os.Stat(file); serr == nil && st.Size() != 4096 {
			// (pmbench may remove the file in between.)
			if terr := os.Truncate(file, 4096); terr != nil && !errors.Is(terr, os.ErrNotExist) {
				require.NoError(t, terr)
			}
		}
		select {
		case err = <-exited:
			done = true
		case <-time.After(time.Millisecond):
		}
	}
	require.True(t, done, "pmbench did not end: %s", stderr.String())
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", stderr.String())
	require.Equal(t, cli.ExitFail, ee.ExitCode(), "%s", stderr.String())
	require.Contains(t, stderr.String(), "persist: media error: fault at offset ")
	require.Contains(t, stderr.String(), " of "+file)
	require.NotContains(t, stderr.String(), "goroutine")
	require.NoFileExists(t, file)
}
