// Command pmbench characterizes a persistent-memory device: read, write,
// write+flush and streaming-write bandwidth and latency over access sizes,
// patterns and thread counts, read bandwidth under concurrent writers, the
// copy size from which streaming stores beat store+flush, and the cost of
// one 8-byte store made durable. It prints a table (or -json) and writes
// the device profile (persist.Profile): today sort's thread-pool
// controller sizes its pools from it and persist takes its streaming-store
// threshold (movnt_threshold) from it; the planned kv store is to size its
// workers from it too.
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
// The exit statuses are listed by pmbench -h (exitStatuses) and in
// README.md: 0 success, 1 the work failed, 2 the command line is wrong
// (found before anything is measured), 129 hung up, 130 interrupted, 141
// the report's reader went away.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errHangup is the cause of the cancellation on SIGHUP.
var errHangup = errors.New("hangup")

func main() {
	// SIGHUP (the terminal was closed) stops the run like Ctrl-C, so that
	// the measured file is removed instead of left on tmpfs, where a next
	// pmbench would refuse to start over it.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		if <-sigs == syscall.SIGHUP {
			cancel(errHangup)
		} else {
			cancel(context.Canceled)
		}
	}()
	// A write to a closed pipe is then the error EPIPE that run handles
	// (removing the file), not a SIGPIPE that kills the process before
	// the deferred clean-up runs.
	signal.Ignore(syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitHangup      = 128 + 1 // SIGHUP: the terminal went away
	exitInterrupted = 130
	exitBrokenPipe  = 128 + 13 // what a shell reports for a process SIGPIPE killed
)

// run is pmbench without the process: it parses args, runs the mode, writes
// the report to stdout and diagnostics to stderr, and returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stdout) // -h is output: pmbench -h | less
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "pmbench: %v\nRun 'pmbench -h' for the flags.\n", err)
		return exitUsage
	}
	if err := measure(ctx, cfg, stdout, stderr); err != nil {
		if errors.Is(err, context.Canceled) {
			if context.Cause(ctx) == errHangup {
				fmt.Fprintln(stderr, "pmbench: hung up (SIGHUP)")
				return exitHangup
			}
			fmt.Fprintln(stderr, "pmbench: interrupted")
			return exitInterrupted
		}
		if errors.Is(err, errReport) && errors.Is(err, syscall.EPIPE) {
			// Nobody reads the report any more (pmbench | head): quiet,
			// like a process killed by SIGPIPE, but the file is gone.
			return exitBrokenPipe
		}
		fmt.Fprintf(stderr, "pmbench: %v\n", err)
		return exitFail
	}
	return exitOK
}
