package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// The causes of a cancellation by signal (context.Cause).
var (
	ErrBrokenPipe = errors.New("broken pipe")
	ErrHangup     = errors.New("hangup")
)

// SignalContext returns a context that SIGINT, SIGTERM and SIGHUP cancel
// (the cause ErrHangup for SIGHUP, context.Canceled for the others), so
// that the work stops and cleans up (temporary files removed, stores
// closed) instead of the process dying with them in place; and stop, which
// ends the notification.
//
// With pipe, SIGPIPE cancels it too (the cause ErrBrokenPipe: the reader
// of the output went away, as in pmsort bench | head). Without, SIGPIPE is
// ignored, for the rest of the process: a write to a closed pipe is then
// the error EPIPE, which the command handles where it writes.
func SignalContext(pipe bool) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	list := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	if pipe {
		list = append(list, syscall.SIGPIPE)
	} else {
		signal.Ignore(syscall.SIGPIPE)
	}
	signal.Notify(sigs, list...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(cause(s))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
	}
}

// cause is the cancellation cause of signal s.
func cause(s os.Signal) error {
	switch s {
	case syscall.SIGPIPE:
		return ErrBrokenPipe
	case syscall.SIGHUP:
		return ErrHangup
	}
	return context.Canceled
}
