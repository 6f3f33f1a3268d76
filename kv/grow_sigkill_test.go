package kv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// The growth SIGKILL test: a child process puts keys and reports each
// acknowledged one on a pipe; a hook in its device growth kills it with
// SIGKILL in the middle of making a segment file (after the file is made
// and sized under its temporary name, before the rename). The parent
// reopens the store: it must open, hold every acknowledged key, and have
// removed the temporary file. The broken variant growInPlace (the file
// made under its own name, then sized) killed between the two steps
// leaves a segment file cut short, and the reopen fails: the test shows
// the ordering matters.
const (
	growChildEnv   = "BRAID_KV_GROW_CHILD"
	growBrokenEnv  = "BRAID_KV_GROW_BROKEN"
	growKillAtSeg  = 8 // the second segment a device of 2 workers adds (MinSegments(2) is 7)
	growChildValue = 100
)

func growKillOptions(dir string, broken bool) *Options {
	o := fakeNUMA(&Options{
		Devices:       []string{filepath.Join(dir, "dev0")},
		CheckpointDir: filepath.Join(dir, "ckpt"),
		SegmentSize:   64 << 10, DeviceSize: 64 * 64 << 10, WorkersPerDevice: 2, PMem: true,
	}, 1)
	o.broken.growInPlace = broken
	return o
}

func TestGrowKillChild(t *testing.T) {
	dir := os.Getenv(growChildEnv)
	if dir == "" {
		t.Skip("the child of TestGrowSigkill")
	}
	out := os.NewFile(3, "acks")
	o := growKillOptions(dir, os.Getenv(growBrokenEnv) != "")
	stage := "sized"
	if o.broken.growInPlace {
		stage = "created"
	}
	o.growHook = func(_ string, seg int, at string) error {
		if seg == growKillAtSeg && at == stage {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // (the signal is on its way)
		}
		return nil
	}
	s, err := Open(o)
	if err != nil {
		fmt.Fprintf(out, "X open: %v\n", err)
		os.Exit(1)
	}
	val := make([]byte, growChildValue)
	for i := 0; ; i++ {
		key := fmt.Sprintf("key%07d", i)
		if err := s.Put([]byte(key), val); err != nil {
			fmt.Fprintf(out, "X put: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintln(out, key)
	}
}

// growKill runs the child on a new store until it dies in its growth and
// returns the store's directory and the keys the child acknowledged.
func growKill(t *testing.T, broken bool) (string, []string) {
	sparseOnly(t)
	dir := structtest.TempShm(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dev0"), 0o755))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestGrowKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), growChildEnv+"="+dir)
	if broken {
		cmd.Env = append(cmd.Env, growBrokenEnv+"=1")
	}
	cmd.ExtraFiles = []*os.File{w}
	require.NoError(t, cmd.Start())
	w.Close()
	var keys []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		require.NotEqual(t, byte('X'), line[0], "child: %s", line)
		keys = append(keys, line)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "the child died: %v", err)
	ws := ee.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "killed by its growth hook: %v", err)
	require.NotEmpty(t, keys)
	return dir, keys
}

func TestGrowSigkill(t *testing.T) {
	dir, keys := growKill(t, false)
	tmps, _ := filepath.Glob(filepath.Join(dir, "dev0", ".seg-*.tmp"))
	require.Len(t, tmps, 1, "the child died with a segment half made")
	s, err := Open(growKillOptions(dir, false))
	require.NoError(t, err)
	for _, k := range keys {
		_, err := s.Get([]byte(k))
		require.NoError(t, err, "acknowledged key %s", k)
	}
	// The store grows past the segment the crash cut short.
	val := make([]byte, growChildValue)
	for i := range 2000 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "after%06d", i), val))
	}
	require.Greater(t, s.Stats().Devices[0].Segments, growKillAtSeg)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
	tmps, _ = filepath.Glob(filepath.Join(dir, "dev0", ".seg-*.tmp"))
	require.Empty(t, tmps, "Open removed the temporary file")
}

// TestGrowSigkillBroken: the variant that makes a segment in place is
// caught — the reopen after the kill fails on the short segment file.
func TestGrowSigkillBroken(t *testing.T) {
	dir, _ := growKill(t, true)
	_, err := Open(growKillOptions(dir, false))
	require.ErrorIs(t, err, ErrBadFormat, "a segment file cut short by the crash")
}
