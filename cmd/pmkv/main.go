// Command pmkv is braid's key-value command over package kv: single
// operations, loading, the store's reports and maintenance, the YCSB
// benchmark (internal/ycsb) and a Redis-protocol server.
//
//	pmkv put|get|del KEY [VALUE]      pmkv scan FROM TO      pmkv load FILE
//	pmkv stats|check|recover|gc|checkpoint
//	pmkv bench [-workloads load,a,b,c,d,f] [-records N] [-ops N] [-sweep clients=1,2,4]
//	pmkv serve [-addr 127.0.0.1:6380]
//
// Every command names its store with -dir DIR (devices DIR/dev0..N-1,
// checkpoints in DIR/ckpt) or -devices D1,D2 -checkpoint C. Subcommands
// are cobra commands that parse their own Go-style flags (single dash), as
// pmsort's do. The exit statuses are stated once, in exitStatuses (pmkv
// -h prints them).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitHangup      = 128 + 1
	exitInterrupted = 130
	exitBrokenPipe  = 128 + 13
)

const exitStatuses = `Exit status:
  0    success (also -h and help)
  1    the work failed: the store cannot be opened (another kind of
       file, damaged, held by another process), an operation failed
       (full, a value over the store's limit in a load file, I/O), get
       found no such key, check found a bad entry (named), bench's
       -verify found a read that was not correct, a load file line is
       malformed (its number is named)
  2    the command line is wrong, found before the store is opened: an
       unknown command or flag, a bad flag value, a missing or extra
       argument, a key or value over the limits, a -dir or device that
       is not a directory, a store that does not exist for a command
       that needs one, a load FILE that cannot be read
  129  the terminal went away (SIGHUP): as 130
  130  interrupted (SIGINT, SIGTERM): the operation in flight finished or
       was abandoned, the store was closed (a checkpoint written); every
       operation acknowledged before is durable
  141  the reader of the output went away (SIGPIPE): as 130, quietly`

// The causes of a cancellation by signal.
var (
	errBrokenPipe = errors.New("broken pipe")
	errHangup     = errors.New("hangup")
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE, syscall.SIGHUP)
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

// exitError is an exit status whose cause was already reported.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a wrong command line: the message says what is wrong.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// cmdError is a failure of one subcommand.
type cmdError struct {
	name string
	err  error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

var commands = []struct {
	name, short string
	run         command
}{
	{"put", "store KEY = VALUE (VALUE - reads standard input)", runPut},
	{"get", "print the value of KEY", runGet},
	{"del", "delete KEY", runDel},
	{"scan", "print the keys in [FROM, TO) with their values", runScan},
	{"load", "store the key/value lines (or binary records) of FILE", runLoad},
	{"stats", "keys, live and allocated bytes, space amplification, segments, DRAM per key", runStats},
	{"check", "verify every checksum and the index against the logs", runCheck},
	{"recover", "open the store and print what recovery found", runRecover},
	{"gc", "run one cleaning pass", runGC},
	{"checkpoint", "write a checkpoint of the index", runCheckpoint},
	{"bench", "YCSB core workloads on kv", runBench},
	{"serve", "serve the store over the Redis protocol", runServe},
}

// run is pmkv without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "pmkv",
		Short:         "braid's key-value store: operations, YCSB bench, Redis-protocol server",
		Long:          "pmkv: braid's SKYE-style key-value store (package kv) from the command line (see cmd/pmkv/README.md).",
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	for _, c := range commands {
		root.AddCommand(subcommand(c.name, c.short, c.run, stdout, stderr))
	}
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root {
			fmt.Fprintf(stdout, "\n%s\n", exitStatuses)
		}
	})
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "print the usage of pmkv or of a command",
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
	return status(ctx, root.ExecuteContext(ctx), stderr)
}

// status turns a command's error into the exit status, reporting it.
func status(ctx context.Context, err error, stderr io.Writer) int {
	var ee exitError
	var ue usageError
	var ce *cmdError
	name := "pmkv"
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
			return exitBrokenPipe
		case errHangup:
			fmt.Fprintln(stderr, "pmkv: hangup")
			return exitHangup
		}
		fmt.Fprintln(stderr, "pmkv: interrupted")
		return exitInterrupted
	case errors.As(err, &ue) || ce == nil:
		msg := ue.msg
		if msg == "" {
			msg = err.Error()
		}
		fmt.Fprintf(stderr, "%s: %s\n", name, msg)
		if ce != nil {
			fmt.Fprintf(stderr, "Run 'pmkv %s -h' for its usage.\n", ce.name)
		} else {
			fmt.Fprintln(stderr, "Run 'pmkv help' for the commands.")
		}
		return exitUsage
	default:
		fmt.Fprintf(stderr, "%s: %s\n", name, err)
		return exitFail
	}
}

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
	c.SetHelpFunc(func(*cobra.Command, []string) {
		_ = run(context.Background(), []string{"-h"}, stdout, stderr)
	})
	return c
}

func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pmkv "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: pmkv %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args: a bad flag is a one-line usage error, -h prints
// the usage and is exit status 0.
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
		return usageError{err.Error()}
	}
}

// nargs checks the number of positional arguments.
func nargs(fs *flag.FlagSet, want int, names string) error {
	switch n := fs.NArg(); {
	case want == 0 && n > 0:
		return usagef("want no arguments, got %d: %s", n, strings.Join(fs.Args(), " "))
	case n < want:
		return usagef("missing %s", names)
	case n > want:
		return usagef("want %s, got %d arguments: %s", names, n, strings.Join(fs.Args(), " "))
	}
	return nil
}
