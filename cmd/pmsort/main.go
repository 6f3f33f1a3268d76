// Command pmsort is braid's WiscSort: an external sorter for
// byte-addressable storage, with gensort/valsort-compatible generation and
// validation.
//
//	pmsort gen [-a] [-s] [-c] [-bSTART] NUM_RECORDS FILE
//	pmsort validate [-q] [-i] [-o SUMMARY] [-s] [-perm INPUT] FILE
//	pmsort sort -i IN -o OUT [-mode auto|onepass|mergepass|ems] [-mem SIZE] [-tmp DIR] [-json] [-f]
//	pmsort bench [-n RECORDS] [-dir /dev/shm] [-runs 3] [-gnu] [-cold]
//
// Subcommands are cobra commands; each parses its own Go-style flags
// (single dash, as gensort and valsort take them).
//
// The exit statuses are listed by pmsort -h (exitStatuses) and in
// sort/README.md: 0 success, 1 the work failed, 2 the command line is
// wrong (found before any work), 3 an internal error (a bug), 129 hung up,
// 130 interrupted, 141 the reader of the output went away.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitInternal    = 3
	exitHangup      = 128 + 1 // SIGHUP: the terminal went away
	exitInterrupted = 130
	exitBrokenPipe  = 128 + 13 // what a shell reports for a process SIGPIPE killed
)

// exitStatuses is the one statement of the rule, printed by pmsort -h
// (sort/README.md says the same).
const exitStatuses = `Exit status:
  0    success (also -h and help)
  1    the work failed: a read or write failed, the input is not whole
       records of the format, the free space or the memory budget is too
       small for this input; and, as valsort, validate's records are out
       of order or not a permutation of -perm INPUT
  2    the command line is wrong, found before anything is read or
       written: an unknown command or flag, a bad flag value (also a
       path flag whose value is a flag: validate -o -q), options that
       do not go together (gen -klv -value), a missing or extra
       argument, or a path that cannot be used as given: an input that
       does not exist, cannot be read, is a directory, or (sort) is not
       a regular file (validate reads pipes); an output that is a
       directory, is the input, is read-only (gen), is not a regular
       file (sort, validate -o; gen writes pipes and /dev/stdout), or
       (sort) exists without -f; a directory (of an output, -tmp, -dir)
       that does not exist or is not writable; a -profile or
       BRAID_PROFILE that cannot be loaded; a record count no file can
       hold
  3    an internal error: a bug in pmsort, reported with its stack
       (please report it); partial output is removed
  129  hung up (SIGHUP: the terminal was closed); partial output is
       removed, as for 130
  130  interrupted (SIGINT, SIGTERM); partial output is removed (a
       SIGKILL or power loss leaves sort's temporary files: pmsort sort -h)
  141  the reader of the output went away (SIGPIPE, as in
       pmsort bench | head); partial output is removed, nothing printed`

// The causes of the cancellation on SIGPIPE and SIGHUP.
var (
	errBrokenPipe = errors.New("broken pipe")
	errHangup     = errors.New("hangup")
)

func main() {
	// SIGPIPE and SIGHUP too: a reader that went away (pmsort bench |
	// head) or a terminal that was closed stops the work like Ctrl-C
	// does, and the temporary, input and output files are removed,
	// instead of the process dying with them in place.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	go func() {
		switch <-sigs {
		case syscall.SIGPIPE:
			cancel(errBrokenPipe)
		case syscall.SIGHUP:
			cancel(errHangup)
		default:
			cancel(context.Canceled)
		}
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// exitError carries an exit status whose cause was already reported
// (valsort exits 1 on unordered records; flag errors print themselves).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is bad usage: the message says what is wrong; err, if set,
// is the cause (a sort error, which errors.Is then finds).
type usageError struct {
	msg string
	err error
}

func (e usageError) Error() string { return e.msg }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{msg: fmt.Sprintf(format, a...)} }

// badUsage is a sort error that means the command line is wrong.
func badUsage(err error) error { return usageError{message(err), err} }

// cmdError is a failure of one subcommand.
type cmdError struct {
	name string
	err  error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// command is one subcommand: it parses its own flags from args and writes
// its results to stdout and its diagnostics to stderr.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// run is pmsort without the process: it returns the exit status. A panic
// (a bug) is exit status 3 with its stack, after the deferred clean-up of
// the command that panicked has run, not the runtime's exit status 2,
// which means bad usage here.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "pmsort: internal error (a bug in pmsort; please report it): %v\n\n%s", p, debug.Stack())
			code = exitInternal
		}
	}()
	root := &cobra.Command{
		Use:           "pmsort",
		Short:         "WiscSort external sorter for byte-addressable storage",
		Long:          "pmsort: WiscSort external sorter for byte-addressable storage (see sort/README.md).",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("no command given")
			}
			return usagef("unknown command %q", args[0])
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error(), err} })
	for _, c := range []struct {
		name, short string
		run         command
	}{
		{"gen", "generate sortbenchmark records (gensort 1.5 compatible)", runGen},
		{"validate", "validate sorted records (valsort compatible)", runValidate},
		{"sort", "sort a file (OnePass, MergePass or external merge sort)", runSort},
		{"bench", "compare EMS, OnePass and MergePass (and GNU sort)", runBench},
	} {
		root.AddCommand(subcommand(c.name, c.short, c.run, stdout, stderr))
	}
	// pmsort -h and pmsort help end with the exit statuses.
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root {
			fmt.Fprintf(stdout, "\n%s\n", exitStatuses)
		}
	})
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "print the usage of pmsort or of a command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return root.Help()
			}
			if len(args) > 1 {
				return usagef("help takes one command, got %d arguments: %s", len(args), strings.Join(args, " "))
			}
			c, _, err := root.Find(args)
			if err != nil || c == root {
				return usagef("help: unknown command %q", args[0])
			}
			return c.Help()
		},
	})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ee exitError
	var ue usageError
	var ce *cmdError
	name := "pmsort"
	if errors.As(err, &ce) {
		name += " " + ce.name
	}
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		switch context.Cause(ctx) {
		case errBrokenPipe:
			return exitBrokenPipe // quietly, as a process SIGPIPE kills
		case errHangup:
			fmt.Fprintln(stderr, "pmsort: hung up (SIGHUP)")
			return exitHangup
		}
		fmt.Fprintln(stderr, "pmsort: interrupted")
		return exitInterrupted
	case errors.As(err, &ue) || ce == nil:
		// ce == nil: an error of cobra itself (as from completion's
		// argument check), about the command line.
		msg := ue.msg
		if msg == "" {
			msg = err.Error()
		}
		fmt.Fprintf(stderr, "%s: %s\n", name, msg)
		if ce != nil {
			fmt.Fprintf(stderr, "Run 'pmsort %s -h' for its usage.\n", ce.name)
		} else {
			fmt.Fprintln(stderr, "Run 'pmsort help' for the commands.")
		}
		return exitUsage
	default:
		fmt.Fprintf(stderr, "%s: %s\n", name, message(err))
		return exitFail
	}
}

// message is an error's text without the package prefix of sort's errors
// (the command name already says where it comes from).
func message(err error) string {
	return strings.TrimPrefix(err.Error(), "sort: ")
}

// prefixed is err said about what (a file, a flag): "what: message", with
// sort's prefix dropped from the message, not left in the middle of the
// line. It unwraps to err.
type prefixed struct {
	what string
	err  error
}

func (e *prefixed) Error() string { return e.what + ": " + message(e.err) }
func (e *prefixed) Unwrap() error { return e.err }

// inFile is err about the file at path.
func inFile(path string, err error) error { return &prefixed{path, err} }

// subcommand wraps a flag-parsing command into cobra.
func subcommand(name, short string, run command, stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:                name,
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := run(cmd.Context(), args, stdout, stderr)
			var ee exitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return &cmdError{name: name, err: err}
		},
	}
	// 'pmsort help NAME' prints the command's own usage and flags (cobra
	// knows none of them: each command parses its own).
	c.SetHelpFunc(func(*cobra.Command, []string) {
		_ = run(context.Background(), []string{"-h"}, stdout, stderr)
	})
	return c
}

// newFlags makes a command's flag set; -h prints its usage to stdout (help
// is output: pmsort sort -h | less).
func newFlags(name, usage string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pmsort "+name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: pmsort %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args. A bad flag is a usage error of one line (run
// prints it with a pointer to -h, not the whole usage); -h prints the
// usage and is exit status 0.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		usage()
		return exitError{exitOK}
	default:
		return usageError{err.Error(), err}
	}
}

// byteSize parses sizes such as 4096, 64K, 512MiB, 2GiB, 1.5G (powers of
// 1024; a "B" suffix is optional).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	v, err := parseSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(t, "B")
	t = strings.TrimSuffix(t, "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f != f {
		return 0, fmt.Errorf("bad size %q (want e.g. 4096, 64KiB, 512MiB, 2GiB)", s)
	}
	if f*float64(mult) >= 1<<63 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(f * float64(mult)), nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// nonNegative checks counts given with flags.
func nonNegative(name string, v int) error {
	if v < 0 {
		return usagef("-%s %d: want 0 (automatic) or more", name, v)
	}
	return nil
}

// pathFlags refuses a path flag whose value looks like a flag: in
// 'validate -o -q FILE' the value of -o is missing, and -q is not meant
// as a file name. names are flag names whose values are paths.
func pathFlags(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			continue
		}
		if v := f.Value.String(); strings.HasPrefix(v, "-") && len(v) > 1 {
			return usagef("-%s %s: that is a flag, not a file name (is the value of -%s missing?); write ./%s for a file named so", n, v, n, v)
		}
	}
	return nil
}
