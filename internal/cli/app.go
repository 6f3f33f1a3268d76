package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Command is one subcommand: it parses its own flags from args
// (NewFlags, ParseFlags: Go-style, single dash) and writes its results to
// stdout and its diagnostics to stderr.
type Command struct {
	Name, Short string
	Run         func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// App is a command of subcommands (pmsort, pmkv), on cobra.
type App struct {
	Name, Short, Long string
	Commands          []Command
	// ExitStatuses is printed at the end of NAME -h and NAME help.
	ExitStatuses string
	// Message is an error's text (nil: err.Error()).
	Message func(error) string
	// Recover turns a panic (a bug) into exit status 3 with its stack,
	// after the deferred clean-up of the command that panicked has run,
	// instead of the runtime's exit status 2, which means bad usage.
	Recover bool
}

// cmdError is the failure of one subcommand.
type cmdError struct {
	name string
	err  error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// Run is the command without the process: it runs the subcommand args
// name and returns the exit status, having reported the error.
func (a *App) Run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	if a.Recover {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(stderr, "%s: internal error (a bug in %s; please report it): %v\n\n%s", a.Name, a.Name, p, debug.Stack())
				code = ExitInternal
			}
		}()
	}
	root := &cobra.Command{
		Use:           a.Name,
		Short:         a.Short,
		Long:          a.Long,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("no command given")
			}
			return Usagef("unknown command %q", args[0])
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err.Error(), err} })
	for _, c := range a.Commands {
		root.AddCommand(a.subcommand(c, stdout, stderr))
	}
	// NAME -h and NAME help end with the exit statuses.
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root && a.ExitStatuses != "" {
			fmt.Fprintf(stdout, "\n%s\n", a.ExitStatuses)
		}
	})
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "print the usage of " + a.Name + " or of a command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return root.Help()
			}
			if len(args) > 1 {
				return Usagef("help takes one command, got %d arguments: %s", len(args), strings.Join(args, " "))
			}
			c, _, err := root.Find(args)
			if err != nil || c == root {
				return Usagef("help: unknown command %q", args[0])
			}
			return c.Help()
		},
	})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if code, msg, ok := Canceled(ctx, err); ok && !errors.As(err, new(ExitError)) {
		if msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", a.Name, msg) // "pmsort: interrupted", whichever command ran
		}
		return code
	}
	r := Report{Prog: a.Name, Hint: "Run '" + a.Name + " help' for the commands.", Message: a.Message}
	var ce *cmdError
	if errors.As(err, &ce) {
		r.Prog += " " + ce.name
		r.Hint = "Run '" + a.Name + " " + ce.name + " -h' for its usage."
	} else if err != nil && !errors.As(err, new(ExitError)) {
		// Not a subcommand's: an error of cobra itself (as from
		// completion's argument check), about the command line.
		var ue UsageError
		if !errors.As(err, &ue) {
			err = UsageError{err.Error(), err}
		}
	}
	return r.Status(ctx, err, stderr)
}

// subcommand wraps a flag-parsing command into cobra.
func (a *App) subcommand(c Command, stdout, stderr io.Writer) *cobra.Command {
	cc := &cobra.Command{
		Use:                c.Name,
		Short:              c.Short,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := c.Run(cmd.Context(), args, stdout, stderr)
			var ee ExitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return &cmdError{name: c.Name, err: err}
		},
	}
	// NAME help CMD prints the command's own usage and flags (cobra knows
	// none of them: each command parses its own).
	cc.SetHelpFunc(func(*cobra.Command, []string) {
		_ = c.Run(context.Background(), []string{"-h"}, stdout, stderr)
	})
	return cc
}
