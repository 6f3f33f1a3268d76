package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "64K": 64 << 10, "64k": 64 << 10, "64KiB": 64 << 10, "64KB": 64 << 10,
		"256M": 256 << 20, "256mib": 256 << 20, "512MiB": 512 << 20, "1G": 1 << 30, "1GiB": 1 << 30,
		"2gb": 2 << 30, "2T": 2 << 40, " 8M ": 8 << 20, "100B": 100, "1.5G": 3 << 29, "1.0M": 1 << 20,
		"0.5K": 512, "64 MiB": 64 << 20, ".5K": 512,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"": "bad size", "K": "bad size", "1I": "bad size", "1KK": "bad size", "-1": "bad size",
		"1e9": "bad size", "12 apples": "bad size", "NaN": "bad size", "Inf": "bad size", "0x10": "bad size",
		"1Q": "bad size", "1IB": "bad size", "1.5": "not a whole number", "0.3K": "not a whole number",
		"9999999999T": "too large", "4194304T": "too large", "99999999999999999999": "too large",
		"1e30": "bad size",
	} {
		_, err := ParseSize(in)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSize(%q) = %v; want an error with %q", in, err, msg)
		}
	}
	// The largest size below the bound parses; the bound does not.
	if n, err := ParseSize("4194303T"); err != nil || n != 4194303<<40 {
		t.Errorf("4194303T: %d, %v", n, err)
	}
}

func TestSizeFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := Size(1 << 30)
	fs.Var(&s, "size", "")
	if s.String() != "1 GiB" {
		t.Fatalf("String %q", s.String())
	}
	if err := fs.Parse([]string{"-size", "64KiB"}); err != nil || s != 64<<10 {
		t.Fatalf("-size 64KiB: %d, %v", s, err)
	}
	err := fs.Parse([]string{"-size", "64X"})
	if err == nil || !strings.Contains(err.Error(), `invalid value "64X" for flag -size: bad size`) {
		t.Fatalf("-size 64X: %v", err)
	}
	for n, want := range map[int64]string{0: "0 B", 100: "100 B", 4096: "4 KiB", 4097: "4097 B", 3 << 29: "1536 MiB", 2 << 30: "2 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{12: "12 B", 1536: "1.5 KiB", 64 << 20: "64.0 MiB", 3 << 29: "1.50 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestProgress(t *testing.T) {
	var p Progress
	if p.String() != "auto" {
		t.Fatalf("zero value %q", p.String())
	}
	for _, v := range []string{"auto", "on", "off"} {
		if err := p.Set(v); err != nil || string(p) != v {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if err := p.Set("yes"); err == nil || !strings.Contains(err.Error(), "want auto, on or off") {
		t.Fatalf("Set(yes): %v", err)
	}
	var buf bytes.Buffer // not a terminal
	for mode, want := range map[Progress]bool{"": false, "auto": false, "on": true, "off": false} {
		if got := mode.On(&buf); got != want {
			t.Errorf("%q.On(buffer) = %v", mode, got)
		}
	}
	if (Progress("off")).NewBar(&buf) != nil {
		t.Fatal("a bar when off")
	}
	var none *Bar // every method of no bar does nothing
	none.Start("x", 10)
	none.Set(5, 10)
	none.Stop()
	b := Progress("on").NewBar(&buf)
	b.Start("loading", 100)
	b.Set(50, 100)
	b.Set(200, 200) // the total may grow
	b.Stop()
	if !strings.Contains(buf.String(), "loading") {
		t.Fatalf("bar output %q", buf.String())
	}
}

func TestParseFlags(t *testing.T) {
	var out bytes.Buffer
	fs := NewFlags("pmx cmd", "[-n N] FILE", &out)
	n := fs.Int("n", 1, "a count")
	if err := ParseFlags(fs, []string{"-n", "3", "f"}); err != nil || *n != 3 {
		t.Fatalf("parse: %v, n=%d", err, *n)
	}
	if err := NArgs(fs, 1, "FILE"); err != nil {
		t.Fatal(err)
	}
	for want, c := range map[string]int{"missing FILE": 2, "want FILE, got 1 arguments: f": 0} {
		err := NArgs(fs, c, "FILE")
		if c == 0 {
			want = "want no arguments, got 1: f"
		}
		if c == 2 {
			want = "missing FILE"
		}
		var ue UsageError
		if !errors.As(err, &ue) || ue.Msg != want {
			t.Errorf("NArgs(%d): %v, want %q", c, err, want)
		}
	}
	err := ParseFlags(fs, []string{"-h"})
	if !errors.Is(err, ExitError{ExitOK}) || !strings.HasPrefix(out.String(), "usage: pmx cmd [-n N] FILE\n") || !strings.Contains(out.String(), "a count") {
		t.Fatalf("-h: %v, %q", err, out.String())
	}
	out.Reset()
	err = ParseFlags(fs, []string{"-nosuch"})
	var ue UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "flag provided but not defined: -nosuch") || out.Len() != 0 {
		t.Fatalf("bad flag: %v, printed %q", err, out.String())
	}
}

func TestStatus(t *testing.T) {
	canceled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	bg := context.Background()
	failure := errors.New("sort: no such file")
	r := Report{Prog: "pmx", Hint: "Run 'pmx -h' for the flags.", Message: func(err error) string { return strings.TrimPrefix(err.Error(), "sort: ") }}
	for _, c := range []struct {
		ctx  context.Context
		err  error
		code int
		out  string
	}{
		{bg, nil, ExitOK, ""},
		{bg, ExitError{ExitFail}, ExitFail, ""},
		{bg, fmt.Errorf("wrapped: %w", ExitError{ExitOK}), ExitOK, ""},
		{bg, Usagef("-n %d: want 1 or more", 0), ExitUsage, "pmx: -n 0: want 1 or more\nRun 'pmx -h' for the flags.\n"},
		{bg, failure, ExitFail, "pmx: no such file\n"},
		{bg, context.Canceled, ExitFail, "pmx: context canceled\n"}, // not canceled by a signal: a failure
		{canceled(context.Canceled), fmt.Errorf("sort: %w", context.Canceled), ExitInterrupted, "pmx: interrupted\n"},
		{canceled(ErrHangup), context.Canceled, ExitHangup, "pmx: hung up (SIGHUP)\n"},
		{canceled(ErrBrokenPipe), context.Canceled, ExitBrokenPipe, ""},
		// The write's EPIPE came back before the SIGPIPE cancelled ctx.
		{bg, fmt.Errorf("scan: %w", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}), ExitBrokenPipe, ""},
		{canceled(context.Canceled), failure, ExitFail, "pmx: no such file\n"}, // a failure on the way out
	} {
		var out bytes.Buffer
		if code := r.Status(c.ctx, c.err, &out); code != c.code || out.String() != c.out {
			t.Errorf("Status(%v) = %d, %q; want %d, %q", c.err, code, out.String(), c.code, c.out)
		}
	}
	// A usage error keeps its cause.
	if err := (UsageError{"x", failure}); !errors.Is(err, failure) {
		t.Fatal("UsageError does not unwrap")
	}
}

func TestApp(t *testing.T) {
	var ran []string
	app := &App{
		Name: "pmx", Short: "a test command", Exits: Exits{Fail: "it broke"}, GoFlags: true,
		Message: func(err error) string { return strings.TrimPrefix(err.Error(), "pkg: ") },
		Commands: []Command{
			{Name: "ok", Short: "succeeds", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
				fs := NewFlags("pmx ok", "[-v]", stdout)
				fs.Bool("v", false, "verbose")
				if err := ParseFlags(fs, args); err != nil {
					return err
				}
				ran = append(ran, "ok")
				fmt.Fprintln(stdout, "done")
				return nil
			}},
			{Name: "fail", Short: "fails", Run: func(context.Context, []string, io.Writer, io.Writer) error { return errors.New("pkg: it broke") }},
			{Name: "usage", Short: "bad usage", Run: func(context.Context, []string, io.Writer, io.Writer) error { return Usagef("missing FILE") }},
			{Name: "panic", Short: "a bug", Run: func(context.Context, []string, io.Writer, io.Writer) error { panic("oops") }},
			{Name: "wait", Short: "until canceled", Run: func(ctx context.Context, _ []string, _, _ io.Writer) error { <-ctx.Done(); return ctx.Err() }},
			{Name: "exit", Short: "reported already", Run: func(context.Context, []string, io.Writer, io.Writer) error { return ExitError{ExitFail} }},
		},
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx       context.Context
		args      []string
		code      int
		out, diag string // stdout contains, stderr equals (or starts with, for the panic)
	}{
		{context.Background(), []string{"ok"}, ExitOK, "done\n", ""},
		{context.Background(), []string{"ok", "-h"}, ExitOK, "usage: pmx ok [-v]", ""},
		{context.Background(), []string{"help", "ok"}, ExitOK, "usage: pmx ok [-v]", ""},
		{context.Background(), []string{"-h"}, ExitOK, "Exit status:\n  0    success (also -h)\n  1    the work failed: it broke\n", ""},
		{context.Background(), []string{"help"}, ExitOK, "a test command", ""},
		{context.Background(), []string{"ok", "-x"}, ExitUsage, "", "pmx ok: flag provided but not defined: -x\nRun 'pmx ok -h' for its usage.\n"},
		{context.Background(), []string{"fail"}, ExitFail, "", "pmx fail: it broke\n"},
		{context.Background(), []string{"usage"}, ExitUsage, "", "pmx usage: missing FILE\nRun 'pmx usage -h' for its usage.\n"},
		{context.Background(), []string{}, ExitUsage, "", "pmx: no command given\nRun 'pmx help' for the commands.\n"},
		{context.Background(), []string{"nosuch"}, ExitUsage, "", "pmx: unknown command \"nosuch\"\nRun 'pmx help' for the commands.\n"},
		{context.Background(), []string{"help", "a", "b"}, ExitUsage, "", "pmx: help takes one command, got 2 arguments: a b\nRun 'pmx help' for the commands.\n"},
		{context.Background(), []string{"help", "nosuch"}, ExitUsage, "", "pmx: help: unknown command \"nosuch\"\nRun 'pmx help' for the commands.\n"},
		{context.Background(), []string{"exit"}, ExitFail, "", ""},
		{canceled, []string{"wait"}, ExitInterrupted, "", "pmx: interrupted\n"},
		{context.Background(), []string{"panic"}, ExitInternal, "", "pmx: internal error (a bug in pmx; please report it): oops\n"},
	} {
		var out, diag bytes.Buffer
		code := app.Run(c.ctx, c.args, &out, &diag)
		okDiag := diag.String() == c.diag || (c.code == ExitInternal && strings.HasPrefix(diag.String(), c.diag) && strings.Contains(diag.String(), "goroutine"))
		if code != c.code || !strings.Contains(out.String(), c.out) || !okDiag {
			t.Errorf("%v: %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, out.String(), diag.String(), c.code, c.out, c.diag)
		}
	}
	if len(ran) != 1 {
		t.Fatalf("ok ran %d times", len(ran))
	}
}

// A signal cancels SignalContext's context with its cause; stop ends the
// notification.
func TestSignalContext(t *testing.T) {
	for _, c := range []struct {
		sig   syscall.Signal
		pipe  bool
		cause error
	}{
		{syscall.SIGHUP, true, ErrHangup},
		{syscall.SIGPIPE, true, ErrBrokenPipe},
		{syscall.SIGTERM, true, context.Canceled},
		{syscall.SIGINT, false, context.Canceled},
	} {
		ctx, stop := SignalContext(c.pipe)
		if err := syscall.Kill(os.Getpid(), c.sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%v did not cancel", c.sig)
		}
		if got := context.Cause(ctx); got != c.cause {
			t.Errorf("%v: cause %v, want %v", c.sig, got, c.cause)
		}
		stop()
	}
	// Without pipe, SIGPIPE is ignored: it neither cancels nor kills.
	ctx, stop := SignalContext(false)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGPIPE); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("SIGPIPE canceled a context that ignores it")
	}
}

// TestAppCobra: cobra parses the flags, with one dash or two, before or
// after the arguments; a value that starts with a dash stays a value; --
// ends the flags; the shared flags are listed once, by NAME -h.
func TestAppCobra(t *testing.T) {
	var got []string
	var dir string
	var n int
	app := &App{
		Name: "pmx", Short: "a test command", Exits: Exits{Fail: "it broke"},
		Flags:      func(fs *pflag.FlagSet) { fs.StringVar(&dir, "dir", "", "the store") },
		FlagsTitle: "Store flags",
		Commands: []Command{{Name: "get", Short: "get a key", Args: "KEY", Long: "Gets KEY.",
			Flags: func(fs *pflag.FlagSet) { fs.IntVar(&n, "n", 0, "a count") },
			Run: func(_ context.Context, args []string, stdout, _ io.Writer) error {
				if err := Args(args, 1, "KEY"); err != nil {
					return err
				}
				got = append(got, fmt.Sprintf("%s %d %s", dir, n, args[0]))
				return nil
			}}},
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "-dir", "d", "k"}, "d 0 k"},
		{[]string{"-dir", "d", "get", "k", "-n", "3"}, "d 3 k"},
		{[]string{"get", "k", "--dir=-x", "--n", "-2"}, "-x -2 k"},
		{[]string{"get", "-n=4", "--", "-k"}, " 4 -k"},
	} {
		got, dir, n = nil, "", 0
		var out, diag bytes.Buffer
		require.Equal(t, ExitOK, app.Run(context.Background(), c.args, &out, &diag), "%v: %s", c.args, diag.String())
		require.Equal(t, []string{c.want}, got, "%v", c.args)
	}
	for _, c := range []struct {
		args      []string
		code      int
		out, diag string
	}{
		{[]string{"get", "-h"}, ExitOK, "Usage:\n  pmx get [flags] KEY\n\nGets KEY.\n\nFlags:\n  -h, --help    help for get\n      --n int   a count\n\nStore flags: 'pmx -h' lists them.\n", ""},
		{[]string{"get", "-zz", "k"}, ExitUsage, "", "pmx get: unknown flag: --zz\nRun 'pmx get -h' for its usage.\n"},
		{[]string{"get", "-n", "x", "k"}, ExitUsage, "", "pmx get: invalid argument \"x\" for \"--n\" flag: strconv.ParseInt: parsing \"x\": invalid syntax\nRun 'pmx get -h' for its usage.\n"},
		{[]string{"get"}, ExitUsage, "", "pmx get: missing KEY\nRun 'pmx get -h' for its usage.\n"},
		{[]string{"completion"}, ExitUsage, "", "pmx: completion: missing SHELL (bash, zsh, fish or powershell)\nRun 'pmx help' for the commands.\n"},
		{[]string{"completion", "tcsh"}, ExitUsage, "", "pmx: completion: unknown shell \"tcsh\": want bash, zsh, fish or powershell\nRun 'pmx help' for the commands.\n"},
	} {
		var out, diag bytes.Buffer
		code := app.Run(context.Background(), c.args, &out, &diag)
		require.Equal(t, c.code, code, "%v", c.args)
		require.Equal(t, c.out, out.String(), "%v", c.args)
		require.Equal(t, c.diag, diag.String(), "%v", c.args)
	}
	var out bytes.Buffer
	require.Equal(t, ExitOK, app.Run(context.Background(), []string{"-h"}, &out, io.Discard))
	require.Contains(t, out.String(), "Store flags:\n      --dir string   the store\n")
	require.Contains(t, out.String(), "completion")
}
