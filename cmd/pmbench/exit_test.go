package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/persist/device"
	"github.com/stretchr/testify/require"
)

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	file := filepath.Join(t.TempDir(), "bench.pm")
	var out, errOut bytes.Buffer
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	code := run(ctx, []string{"-force-pmem", "-file", file, "-size", "8M", "-duration", "1m", "-threads", "1"}, &out, &errOut)
	require.Equal(t, cli.ExitInterrupted, code)
	require.Contains(t, errOut.String(), "interrupted")
	require.NoFileExists(t, file, "the file is removed when interrupted")
}

// closedPipe is the write end of a pipe whose read end is closed: every
// write to it fails with EPIPE.
func closedPipe(t *testing.T) *os.File {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	t.Cleanup(func() { w.Close() })
	return w
}

// TestBrokenPipe: a report that cannot be written (its reader went away)
// is exit status 141, quietly, and the file is removed.
func TestBrokenPipe(t *testing.T) {
	for _, args := range [][]string{nil, {"-json"}} {
		file := filepath.Join(t.TempDir(), "bench.pm")
		var errOut bytes.Buffer
		code := run(context.Background(), append(slices.Concat(copyArgs, args), "-file", file), closedPipe(t), &errOut)
		require.Equal(t, cli.ExitBrokenPipe, code, "%v: stderr: %s", args, errOut.String())
		require.Empty(t, errOut.String(), "%v", args)
		require.NoFileExists(t, file, "%v: the file is removed", args)
	}
	// Another write error is reported, and the file removed too.
	file := filepath.Join(t.TempDir(), "bench.pm")
	var errOut bytes.Buffer
	code := run(context.Background(), append(slices.Clone(copyArgs), "-file", file), failWriter{}, &errOut)
	require.Equal(t, cli.ExitFail, code)
	require.Contains(t, errOut.String(), "pmbench: write the report: disk full\n")
	require.NoFileExists(t, file)
}

// TestBrokenPipeProcess: pmbench -mode copy ... | head, as a process whose
// stdout is a pipe nobody reads. Unhandled, the write to fd 1 raises
// SIGPIPE and kills it before the file is removed.
func TestBrokenPipeProcess(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bench.pm")
	cmd := exec.Command(os.Args[0], append(slices.Clone(copyArgs), "-file", file)...)
	cmd.Env = append(os.Environ(), "PMBENCH_TEST_MAIN=1")
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = closedPipe(t), &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", errOut.String())
	require.Equal(t, cli.ExitBrokenPipe, ee.ExitCode(), "%v; stderr: %s", ee.ProcessState, errOut.String())
	require.Empty(t, errOut.String())
	require.NoFileExists(t, file, "the file is removed when the reader goes away")
}

// TestExitStatuses: one case of every exit status's categories (pmbench
// -h and README.md state the rule). Status 2 leaves everything as it
// was; 1, 130 and 141 remove the measured file.
func TestExitStatuses(t *testing.T) {
	registerTestMode(t, mode{name: "zz-ok", run: func(b *bench) error {
		b.add(result{Point: device.Point{Op: "zz-op", Pattern: "seq", Size: 64, Threads: 1, GBs: 1, NsPerOp: 64}})
		return nil
	}})
	registerTestMode(t, mode{name: "zz-fail", run: func(*bench) error { return errors.New("the device went away") }})
	registerTestMode(t, mode{name: "zz-ctx", run: func(b *bench) error { return b.ctx.Err() }})
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.pm")
	require.NoError(t, os.WriteFile(existing, []byte("keep"), 0o644))
	link := filepath.Join(dir, "link.pm")
	require.NoError(t, os.Symlink("/dev/null", link))
	before, err := os.ReadDir(dir)
	require.NoError(t, err)
	file := filepath.Join(dir, "bench.pm")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	base := []string{"-mode", "zz-ok", "-force-pmem", "-size", "8M", "-duration", "1ms"}
	for _, tc := range []struct {
		what   string
		args   []string // after base, with -file file unless they give one
		ctx    context.Context
		stdout io.Writer
		code   int
		msg    string // in stderr
	}{
		{what: "success", code: cli.ExitOK},
		{what: "help", args: []string{"-h"}, code: cli.ExitOK, msg: "Exit status:\n  0    success"},
		{what: "usage: unknown flag", args: []string{"-nosuch"}, code: cli.ExitUsage, msg: "flag provided but not defined: -nosuch"},
		{what: "usage: bad flag value", args: []string{"-size", "12Q"}, code: cli.ExitUsage, msg: `invalid value "12Q" for flag -size`},
		{what: "usage: bad mode", args: []string{"-mode", "nosuch"}, code: cli.ExitUsage, msg: `-mode "nosuch"`},
		{what: "usage: argument", args: []string{"extra"}, code: cli.ExitUsage, msg: `unexpected argument "extra"`},
		{what: "usage: -file a directory", args: []string{"-file", dir}, code: cli.ExitUsage, msg: "-file " + dir + " is a directory"},
		{what: "usage: -file in no directory", args: []string{"-file", filepath.Join(dir, "no", "f.pm")}, code: cli.ExitUsage, msg: "does not exist"},
		{what: "usage: -file where nothing can be created", args: []string{"-file", "/proc/pmbench.pm"}, code: cli.ExitUsage, msg: "-file /proc/pmbench.pm: cannot create files in /proc"},
		{what: "usage: -file exists", args: []string{"-file", existing}, code: cli.ExitUsage, msg: "-file " + existing + " already exists"},
		{what: "usage: -overwrite of a link", args: []string{"-overwrite", "-file", link}, code: cli.ExitUsage, msg: "is a symbolic link, not a regular file"},
		{what: "usage: -profile in no directory", args: []string{"-mode", "copy", "-profile", filepath.Join(dir, "no", "p.json")}, code: cli.ExitUsage, msg: "-profile"},
		{what: "failure: measurement", args: []string{"-mode", "zz-fail"}, code: cli.ExitFail, msg: "pmbench: the device went away\n"},
		{what: "failure: report", stdout: failWriter{}, code: cli.ExitFail, msg: "pmbench: write the report: disk full\n"},
		{what: "interrupted", args: []string{"-mode", "zz-ctx"}, ctx: canceled, code: cli.ExitInterrupted, msg: "pmbench: interrupted\n"},
		{what: "broken pipe", stdout: closedPipe(t), code: cli.ExitBrokenPipe},
	} {
		t.Run(tc.what, func(t *testing.T) {
			args := slices.Concat(base, tc.args)
			if !slices.Contains(tc.args, "-file") {
				args = append(args, "-file", file)
			}
			ctx, stdout := tc.ctx, tc.stdout
			if ctx == nil {
				ctx = context.Background()
			}
			if stdout == nil {
				stdout = &bytes.Buffer{}
			}
			var errOut bytes.Buffer
			code := run(ctx, args, stdout, &errOut)
			require.Equal(t, tc.code, code, "stderr: %s", errOut.String())
			said := errOut.String()
			if tc.code == cli.ExitOK {
				// Help is output (pmbench -h | less): on stdout.
				if b, ok := stdout.(*bytes.Buffer); ok {
					said = b.String()
				}
				require.Empty(t, errOut.String())
			}
			if tc.msg == "" {
				require.Empty(t, errOut.String())
			}
			require.Contains(t, said, tc.msg)
			if tc.code == cli.ExitUsage {
				require.Equal(t, 2, strings.Count(errOut.String(), "\n"), "one line, then the pointer to -h: %q", errOut.String())
				require.Contains(t, errOut.String(), "Run 'pmbench -h' for the flags.")
			}
			require.NoFileExists(t, file, "removed, or never created")
			after, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Equal(t, before, after)
			b, err := os.ReadFile(existing)
			require.NoError(t, err)
			require.Equal(t, "keep", string(b))
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestPanicIsInternal: a panic (a bug) is exit status 3 with its stack,
// not the runtime's 2 (bad usage), after the file was removed.
func TestPanicIsInternal(t *testing.T) {
	registerTestMode(t, mode{name: "zz-panic", run: func(*bench) error { panic("a bug") }})
	file := filepath.Join(t.TempDir(), "bench.pm")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-mode", "zz-panic", "-force-pmem", "-size", "8M", "-duration", "1ms", "-file", file}, &out, &errOut)
	require.Equal(t, cli.ExitInternal, code)
	require.Contains(t, errOut.String(), "pmbench: internal error (a bug in pmbench; please report it): a bug")
	require.Contains(t, errOut.String(), "goroutine")
	require.NoFileExists(t, file)
}
