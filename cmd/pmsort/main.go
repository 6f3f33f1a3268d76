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
// The exit statuses are listed by pmsort -h (exits) and in
// sort/README.md: 0 success, 1 the work failed, 2 the command line is
// wrong (found before any work), 3 an internal error (a bug), 129 hung up,
// 130 interrupted, 141 the reader of the output went away.
package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/braid-pm/braid/internal/cli"
)

// exits is what pmsort's exit statuses mean (internal/cli's rule),
// printed by pmsort -h (sort/README.md says the same).
var exits = cli.Exits{
	Help: "-h and help",
	Fail: "a read or write failed, the input is not whole records of the format, " +
		"the free space or the memory budget is too small for this input; and, as " +
		"valsort, validate's records are out of order or not a permutation of -perm INPUT",
	Usage: "found before anything is read or written: an unknown command or flag, a " +
		"bad flag value (also a path flag whose value is a flag: validate -o -q), " +
		"options that do not go together (gen -klv -value), a missing or extra argument, " +
		"or a path that cannot be used as given: an input that does not exist, cannot " +
		"be read, is a directory, or (sort) is not a regular file (validate reads " +
		"pipes); an output that is a directory, is the input, is read-only (gen), is not " +
		"a regular file (sort, validate -o; gen writes pipes and /dev/stdout), or (sort) " +
		"exists without -f; a directory (of an output, -tmp, -dir) that does not exist " +
		"or is not writable; a -profile or BRAID_PROFILE that cannot be loaded; a record " +
		"count no file can hold",
	Internal: "partial output is removed",
	Hangup:   "partial output is removed, as for 130",
	Signal:   "partial output is removed (a SIGKILL or power loss leaves sort's temporary files: pmsort sort -h)",
	Pipe:     ", as in pmsort bench | head: partial output is removed, nothing printed",
}

func main() {
	// SIGPIPE and SIGHUP too: a reader that went away (pmsort bench |
	// head) or a terminal that was closed stops the work like Ctrl-C
	// does, and the temporary, input and output files are removed,
	// instead of the process dying with them in place.
	ctx, stop := cli.SignalContext(true)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usagef is a usage error (exit status 2).
func usagef(format string, a ...any) error { return cli.Usagef(format, a...) }

// badUsage is a sort error that means the command line is wrong.
func badUsage(err error) error { return cli.UsageError{Msg: message(err), Err: err} }

// run is pmsort without the process: it returns the exit status. A panic
// (a bug) is exit status 3 with its stack (cli.App.Recover).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:  "pmsort",
		Short: "WiscSort external sorter for byte-addressable storage",
		Long:  "pmsort: WiscSort external sorter for byte-addressable storage (see sort/README.md).",
		Commands: []cli.Command{
			{Name: "gen", Short: "generate sortbenchmark records (gensort 1.5 compatible)", Run: runGen},
			{Name: "validate", Short: "validate sorted records (valsort compatible)", Run: runValidate},
			{Name: "sort", Short: "sort a file (OnePass, MergePass or external merge sort)", Run: runSort},
			{Name: "bench", Short: "compare EMS, OnePass and MergePass (and GNU sort)", Run: runBench},
		},
		GoFlags: true,
		Exits:   exits,
		Message: message,
	}
	return app.Run(ctx, args, stdout, stderr)
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

// newFlags makes a command's flag set; -h prints its usage to stdout (help
// is output: pmsort sort -h | less).
func newFlags(name, usage string, stdout io.Writer) *flag.FlagSet {
	return cli.NewFlags("pmsort "+name, usage, stdout)
}

// byteSize is a size flag (cli.Size: 4096, 64K, 512MiB, 2GiB, 1.5G).
type byteSize = cli.Size

func humanBytes(n int64) string { return cli.HumanBytes(n) }

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
