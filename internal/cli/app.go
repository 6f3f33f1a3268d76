package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Command is one subcommand. Its Run writes results to stdout and
// diagnostics to stderr.
//
// In an App with GoFlags, Run is given the whole command line after the
// command's name and parses its own flags (NewFlags, ParseFlags; Go style,
// as gensort takes them). Otherwise cobra parses them: Flags declares the
// command's own, Run is given the positional arguments (flags may come
// before or after them, "--" ends the flags), and Args and Long are its
// help's usage line and text.
type Command struct {
	Name, Short string
	Args        string // the positional arguments, for the usage line: "KEY VALUE"
	Long        string
	Flags       func(fs *pflag.FlagSet)
	Run         func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// App is a command of subcommands (pmsort, pmkv), on cobra.
type App struct {
	Name, Short, Long string
	Commands          []Command
	// GoFlags: every command parses its own flags (Command); cobra's
	// completion command, which completes cobra's flags only, is left out.
	GoFlags bool
	// Flags declares flags that every command takes (pmkv's store flags),
	// listed once, by NAME -h, under FlagsTitle; each command's help
	// points there.
	Flags      func(fs *pflag.FlagSet)
	FlagsTitle string
	// Exits is printed at the end of NAME -h and NAME help.
	Exits Exits
	// Message is an error's text (nil: err.Error()).
	Message func(error) string
}

// cmdError is the failure of one subcommand.
type cmdError struct {
	name string
	err  error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// Run is the command without the process: it runs the subcommand args
// name and returns the exit status, having reported the error. A panic
// (a bug) is exit status 3 with its stack, after the deferred clean-up of
// the command that panicked has run, instead of the runtime's exit status
// 2, which means bad usage.
func (a *App) Run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer Recover(a.Name, stderr, &code)
	root := a.root(stdout, stderr)
	if !a.GoFlags {
		args = LongFlags(root, args)
	}
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would take os.Args
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

// Recover turns a panic into exit status 3 (*code), reported on stderr
// with its stack: deferred by a command's run.
func Recover(prog string, stderr io.Writer, code *int) {
	if p := recover(); p != nil {
		fmt.Fprintf(stderr, "%s: internal error (a bug in %s; please report it): %v\n\n%s", prog, prog, p, debug.Stack())
		*code = ExitInternal
	}
}

// root is the cobra command of the app.
func (a *App) root(stdout, stderr io.Writer) *cobra.Command {
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
	root.CompletionOptions.DisableDefaultCmd = a.GoFlags
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		ue := UsageError{err.Error(), err}
		if c == root {
			return ue
		}
		return &cmdError{name: c.Name(), err: ue}
	})
	if a.Flags != nil {
		a.Flags(root.PersistentFlags())
	}
	for _, c := range a.Commands {
		root.AddCommand(a.subcommand(c, stdout, stderr))
	}
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c == root {
			a.help(root, stdout)
			return
		}
		a.commandHelp(c, stdout)
	})
	a.strictCompletion(root)
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
	return root
}

// strictCompletion makes cobra's completion command (NAME completion
// SHELL) answer a missing or unknown shell with a usage error (exit 2)
// instead of its help and status 0.
func (a *App) strictCompletion(root *cobra.Command) {
	if a.GoFlags || len(a.Commands) == 0 {
		return
	}
	root.InitDefaultCompletionCmd()
	c, _, err := root.Find([]string{"completion"})
	if err != nil || c == root {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return Usagef("completion: missing SHELL (bash, zsh, fish or powershell)")
		}
		return Usagef("completion: unknown shell %q: want bash, zsh, fish or powershell", args[0])
	}
}

// subcommand wraps a command into cobra.
func (a *App) subcommand(c Command, stdout, stderr io.Writer) *cobra.Command {
	cc := &cobra.Command{
		Use:                c.Name,
		Short:              c.Short,
		Long:               c.Long,
		DisableFlagParsing: a.GoFlags,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := c.Run(cmd.Context(), args, stdout, stderr)
			var ee ExitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return &cmdError{name: c.Name, err: err}
		},
	}
	if c.Args != "" {
		cc.Use += " " + c.Args
	}
	if c.Flags != nil && !a.GoFlags {
		c.Flags(cc.Flags())
	}
	cc.InitDefaultHelpFlag() // listed the same by NAME CMD -h and NAME help CMD
	if a.GoFlags {
		// NAME help CMD prints the command's own usage and flags
		// (cobra knows none of them: each command parses its own).
		cc.SetHelpFunc(func(*cobra.Command, []string) {
			_ = c.Run(context.Background(), []string{"-h"}, stdout, stderr)
		})
	}
	return cc
}

// help is NAME -h: what it is, the commands, the shared flags, the exit
// statuses.
func (a *App) help(root *cobra.Command, w io.Writer) {
	text := a.Long
	if text == "" {
		text = a.Name + ": " + a.Short
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s COMMAND [flags] [arguments]\n\nCommands:\n", strings.TrimSpace(text), a.Name)
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			fmt.Fprintf(w, "  %-12s %s\n", c.Name(), c.Short)
		}
	}
	if fs := root.PersistentFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(w, "\n%s:\n%s", a.FlagsTitle, fs.FlagUsages())
	}
	if a.GoFlags {
		fmt.Fprintf(w, "\nRun '%s COMMAND -h' for a command's usage and flags.\n", a.Name)
	} else {
		fmt.Fprintf(w, "\nFlags take one dash or two (-dir or --dir) and may come before or after\nthe arguments; -- ends them. Run '%s COMMAND -h' for a command's usage.\n", a.Name)
	}
	if s := a.Exits.Text(a.Name); s != "" {
		fmt.Fprintf(w, "\n%s\n", s)
	}
}

// commandHelp is NAME CMD -h: the usage line, the text, the command's own
// flags and where the shared ones are listed.
func (a *App) commandHelp(c *cobra.Command, w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  %s", c.CommandPath())
	if c.HasAvailableLocalFlags() || c.HasAvailableInheritedFlags() {
		fmt.Fprint(w, " [flags]")
	}
	if _, args, ok := strings.Cut(c.Use, " "); ok {
		fmt.Fprintf(w, " %s", args)
	}
	fmt.Fprintln(w)
	text := c.Long
	if text == "" {
		text = c.Short
	}
	fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(text))
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", c.LocalFlags().FlagUsages())
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\n%s: '%s -h' lists them.\n", a.FlagsTitle, a.Name)
	}
}

// LongFlags rewrites the single-dash long flags of args (-dir DIR) into
// pflag's double-dash form (--dir DIR), so that a command line written
// Go style, as braid's commands were first written, still parses. A
// flag's value is left as it is, even one starting with a dash; so are
// -h, arguments that do not start with a letter after the dash (-5, -)
// and everything after "--".
func LongFlags(root *cobra.Command, args []string) []string {
	var sub *cobra.Command
	lookup := func(name string) *pflag.Flag {
		if sub != nil {
			if f := sub.Flags().Lookup(name); f != nil {
				return f
			}
		}
		return root.PersistentFlags().Lookup(name)
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(out, args[i:]...)
		}
		if !strings.HasPrefix(arg, "-") || len(arg) < 2 {
			if sub == nil {
				sub, _, _ = root.Find([]string{arg})
				if sub == root {
					sub = nil
				}
			}
			out = append(out, arg)
			continue
		}
		if arg[1] != '-' && arg != "-h" && isLetter(arg[1]) {
			arg = "-" + arg
		}
		out = append(out, arg)
		name, _, eq := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if f := lookup(name); f != nil && !eq && f.NoOptDefVal == "" && strings.HasPrefix(arg, "--") && i+1 < len(args) {
			i++
			out = append(out, args[i]) // the flag's value
		}
	}
	return out
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
