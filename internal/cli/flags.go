package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NewFlags makes the flag set of command name ("pmsort sort"); -h prints
// "usage: NAME USAGE" and the flags to w (help is output: pmsort sort -h |
// less).
func NewFlags(name, usage string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// ParseFlags parses args. A bad flag is a UsageError of one line (Status
// prints it with a pointer to -h, not the whole usage); -h prints the
// usage and is ExitError{0}.
func ParseFlags(fs *flag.FlagSet, args []string) error {
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
		return ExitError{ExitOK}
	default:
		return UsageError{err.Error(), err}
	}
}

// NArgs checks that fs has want positional arguments, called names in
// the error.
func NArgs(fs *flag.FlagSet, want int, names string) error { return Args(fs.Args(), want, names) }

// Args checks that args are want positional arguments, called names in
// the error ("FROM and TO": one given is "missing TO (after FROM "a")").
func Args(args []string, want int, names string) error {
	switch n := len(args); {
	case want == 0 && n > 0:
		return Usagef("want no arguments, got %d: %s", n, strings.Join(args, " "))
	case n < want:
		if parts := strings.Split(names, " and "); len(parts) == want && n > 0 {
			return Usagef("missing %s (after %s %s)", strings.Join(parts[n:], " and "), strings.Join(parts[:n], " and "), strings.Join(quoted(args), " "))
		}
		return Usagef("missing %s", names)
	case n > want:
		return Usagef("want %s, got %d arguments: %s", names, n, strings.Join(args, " "))
	}
	return nil
}

func quoted(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return q
}
