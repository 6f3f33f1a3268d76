// Command pmbench characterizes a persistent-memory device: read, write,
// write+flush and streaming-write bandwidth and latency over access sizes,
// patterns and thread counts, read bandwidth under concurrent writers, the
// copy size from which streaming stores beat store+flush, and the cost of
// one 8-byte store made durable. It prints a table (or -json) and writes
// the device profile (device.Profile): today sort's thread-pool
// controller sizes its pools from it and persist takes its streaming-store
// threshold (movnt_threshold) from it; kv sizes its workers and direct
// readers per device from its write and read knees.
//
// Usage:
//
//	pmbench [flags]
//
// The flags are listed by pmbench -h. Every measurement goes through package
// persist (Copy, Persist, Store64) on a file mapped with persist.Map, so
// it measures the instruction path braid's structures run: run it with
// BRAID_FORCE_PMEM=1 (or -force-pmem) on tmpfs to measure that path
// without PMem.
//
// The exit statuses are listed by pmbench -h (exits) and in README.md: 0
// success, 1 the work failed, 2 the command line is wrong (found before
// anything is measured), 3 a bug, 129 hung up, 130 interrupted, 141 the
// report's reader went away.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/braid-pm/braid/internal/cli"
)

func main() {
	// SIGHUP (the terminal was closed) stops the run like Ctrl-C, so that
	// the measured file is removed instead of left on tmpfs, where a next
	// pmbench would refuse to start over it. SIGPIPE is ignored: a write
	// to a closed pipe is then the error EPIPE that run handles (removing
	// the file), not a signal that kills the process before the deferred
	// clean-up runs.
	ctx, stop := cli.SignalContext(false)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is pmbench without the process: it parses args, runs the mode, writes
// the report to stdout and diagnostics to stderr, and returns the exit
// status (cli's rule); a panic (a bug) is exit status 3 with its stack.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer cli.Recover("pmbench", stderr, &code)
	r := cli.Report{Prog: "pmbench", Hint: "Run 'pmbench -h' for the flags."}
	cfg, err := parseFlags(args, stdout) // -h is output: pmbench -h | less
	switch {
	case errors.Is(err, errHelp):
		return cli.ExitOK
	case err != nil:
		return r.Status(ctx, cli.UsageError{Msg: err.Error(), Err: err}, stderr)
	}
	err = measure(ctx, cfg, stdout, stderr)
	if errors.Is(err, errReport) && errors.Is(err, syscall.EPIPE) && !errors.Is(err, context.Canceled) {
		// Nobody reads the report any more (pmbench | head): quiet,
		// like a process killed by SIGPIPE, but the file is gone.
		return cli.ExitBrokenPipe
	}
	return r.Status(ctx, err, stderr)
}
