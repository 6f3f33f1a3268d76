// Package cli is the plumbing braid's commands (pmsort, pmkv, pmbench)
// share, so that they behave alike: one exit status rule, signals that
// stop the work instead of killing the process, size flags ("64KiB"),
// the -progress auto/on/off switch and its bar, flag parsing with a
// one-line usage error, and error printing.
//
// # Exit statuses
//
//	0    success (also -h and help)
//	1    the work failed (the error is printed)
//	2    the command line is wrong, found before any work (UsageError)
//	3    an internal error: a panic, printed with its stack (App.Recover)
//	129  hung up (SIGHUP)
//	130  interrupted (SIGINT, SIGTERM)
//	141  the reader of the output went away (SIGPIPE), quietly
//
// Each command states what "failed" and "wrong" mean for it in its own
// -h text.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// Exit statuses.
const (
	ExitOK          = 0
	ExitFail        = 1
	ExitUsage       = 2
	ExitInternal    = 3
	ExitHangup      = 128 + 1  // SIGHUP: the terminal went away
	ExitInterrupted = 128 + 2  // SIGINT (and SIGTERM)
	ExitBrokenPipe  = 128 + 13 // what a shell reports for a process SIGPIPE killed
)

// ExitError is an exit status whose cause was already reported (valsort
// exits 1 on unordered records; -h is status 0).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// UsageError is a wrong command line: Msg says what is wrong; Err, if
// set, is the cause (errors.Is finds it).
type UsageError struct {
	Msg string
	Err error
}

func (e UsageError) Error() string { return e.Msg }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return UsageError{Msg: fmt.Sprintf(format, a...)} }

// Canceled reports whether err is the work stopped by a signal (ctx
// canceled, err a cancellation) and, if so, the exit status and the line
// to print (none for a broken pipe: quiet, as a process SIGPIPE kills).
func Canceled(ctx context.Context, err error) (code int, msg string, ok bool) {
	if ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return 0, "", false
	}
	switch context.Cause(ctx) {
	case ErrBrokenPipe:
		return ExitBrokenPipe, "", true
	case ErrHangup:
		return ExitHangup, "hung up (SIGHUP)", true
	}
	return ExitInterrupted, "interrupted", true
}

// Report says how a command reports the error it ended with.
type Report struct {
	Prog    string             // how lines start: "pmsort sort: ..."
	Hint    string             // the line after a usage error ("Run 'pmbench -h' for the flags.")
	Message func(error) string // an error's text (nil: err.Error())
}

// Status is the exit status of a command that ended with err, reported on
// stderr as "PROG: message": nil is 0, an ExitError its code (reported
// already), a signal's cancellation 129, 130 or 141, a write that failed
// with EPIPE 141 (quietly: the reader of the output went away before the
// SIGPIPE cancelled the work, as in pmkv scan | head), a UsageError 2
// (with the hint), anything else 1.
func (r Report) Status(ctx context.Context, err error, stderr io.Writer) int {
	var ee ExitError
	var ue UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, syscall.EPIPE):
		return ExitBrokenPipe
	}
	if code, msg, ok := Canceled(ctx, err); ok {
		if msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", r.Prog, msg)
		}
		return code
	}
	if errors.As(err, &ue) {
		r.usage(ue.Msg, stderr)
		return ExitUsage
	}
	msg := err.Error()
	if r.Message != nil {
		msg = r.Message(err)
	}
	fmt.Fprintf(stderr, "%s: %s\n", r.Prog, msg)
	return ExitFail
}

func (r Report) usage(msg string, stderr io.Writer) {
	fmt.Fprintf(stderr, "%s: %s\n", r.Prog, msg)
	if r.Hint != "" {
		fmt.Fprintln(stderr, r.Hint)
	}
}
