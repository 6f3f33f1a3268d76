// Command pmsort is braid's WiscSort: an external sorter for
// byte-addressable storage, with gensort/valsort-compatible generation and
// validation.
//
//	pmsort gen [-a] [-s] [-c] [-bSTART] NUM_RECORDS FILE
//	pmsort validate [-q] [-i] [-o SUMMARY] [-s] [-perm INPUT] FILE
//	pmsort sort -i IN -o OUT [-mode auto|onepass|mergepass|ems] [-mem SIZE] [-tmp DIR] [-json] [-f]
//	pmsort bench [-n RECORDS] [-dir /dev/shm] [-runs 3] [-gnu]
//
// Subcommands are cobra commands; each parses its own Go-style flags
// (single dash, as gensort and valsort take them).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// exitError carries an exit status (valsort exits 1 on unordered records).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := &cobra.Command{
		Use:           "pmsort",
		Short:         "WiscSort external sorter for byte-addressable storage",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		subcommand("gen", "generate sortbenchmark records (gensort 1.5 compatible)", runGen),
		subcommand("validate", "validate sorted records (valsort compatible)", runValidate),
		subcommand("sort", "sort a file (OnePass, MergePass or external merge sort)", runSort),
		subcommand("bench", "compare EMS, OnePass and MergePass (and GNU sort)", runBench),
	)
	root.SetArgs(os.Args[1:])
	err := root.ExecuteContext(ctx)
	stop()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "pmsort:", err)
		os.Exit(1)
	}
}

// subcommand wraps a flag-parsing command function into cobra.
func subcommand(name, short string, run func(ctx context.Context, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), args)
		},
	}
}

func newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("pmsort "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: pmsort %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
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
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 4096, 64KiB, 512MiB, 2GiB)", s)
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
