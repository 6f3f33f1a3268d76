package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/sort"
	"github.com/braid-pm/braid/sort/sortbench"
)

const genUsage = `[-a] [-s] [-c] [-bSTARTING_REC_NUM] [-t N] [-key K -value V | -klv -key K -vmin A -vmax B] NUM_RECS FILE_NAME

Writes the same bytes as gensort 1.5 for the same -a, -s, -b and NUM_RECS
(binary records by default), in parallel. -key/-value/-klv select other
record formats (a braid extension; see sort/README.md). The size is checked
against the file system's free space before anything is generated.
As gensort does, an existing FILE_NAME is replaced (atomically: the records
are written under a temporary name and renamed when complete), but not a
read-only one; a pipe or a terminal (/dev/stdout) is written in order, and
/dev/null only computes. Record numbers past 2^128-1 wrap to 0, as in
gensort.`

// gensortArgs rewrites gensort's attached "-bN" into "-b=N" for package flag.
func gensortArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		switch {
		case a == "-b":
			// gensort reads a bare -b as starting record 0 (gen -b 10 f:
			// 10 records from 0 to f), not as a flag taking the next
			// argument.
			a = "-b=0"
		case len(a) > 2 && a[1] == 'b' && a[2] >= '0' && a[2] <= '9':
			a = "-b=" + a[2:]
		}
		out = append(out, a)
	}
	return out
}

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", genUsage, stdout)
	ascii := fs.Bool("a", false, "generate ASCII records (PennySort/JouleSort)")
	skew := fs.Bool("s", false, "generate skewed keys")
	sum := fs.Bool("c", false, "print the sum of the records' CRC-32 to standard error")
	start := fs.String("b", "0", "number of the first record (gensort -bN)")
	threads := fs.Int("t", 0, "generator goroutines (0: all CPUs)")
	vmin := fs.Int("vmin", 0, "smallest KLV value length")
	vmax := fs.Int("vmax", 180, "largest KLV value length")
	force := fs.Bool("force-pmem", false, "write through the PMem path even if the file is not on DAX (as BRAID_FORCE_PMEM=1)")
	var ff formatFlags
	ff.register(fs)
	args = gensortArgs(args)
	if err := negativeCount(fs, args); err != nil {
		return err
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	n, err := genArgs(fs)
	if err != nil {
		return err
	}
	b, ok := sortbench.ParseUint128(*start)
	if !ok {
		return usagef("-b%s: want a decimal record number below 2^128", *start)
	}
	if fs.Arg(1) == "" {
		return usagef("FILE_NAME is empty: give the file to write (or /dev/null to only compute)")
	}
	if err := nonNegative("t", *threads); err != nil {
		return err
	}
	f, err := ff.format()
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case f.KLV && set["value"]:
		return usagef("-value is the value size of fixed-size records; KLV values (-klv) have lengths from -vmin to -vmax")
	case !f.KLV && (set["vmin"] || set["vmax"]):
		return usagef("-vmin and -vmax are the value lengths of KLV records (-klv); fixed-size records take -value")
	case *vmin < 0 || *vmax < *vmin || *vmax > sort.MaxKLVValue:
		return usagef("-vmin %d -vmax %d: want 0 <= vmin <= vmax <= %d", *vmin, *vmax, sort.MaxKLVValue)
	}
	// A count no file can hold is a bad argument; one the free space
	// cannot hold is a failure (Generate checks it).
	least, what := f.RecordSize(), "bytes"
	if f.KLV {
		least, what = f.KeySize+4+*vmin, "bytes at least"
	}
	if hi, lo := bits.Mul64(n, uint64(least)); hi != 0 || lo > math.MaxInt64 {
		return usagef("NUM_RECS %d: %d records of %d %s make more than 2^63 bytes", n, n, least, what)
	}
	o := sortbench.GenOptions{Count: n, Start: b, ASCII: *ascii, Skew: *skew, Format: f,
		MinValue: *vmin, MaxValue: *vmax, Threads: *threads, Checksum: *sum}
	if err := o.Validate(); err != nil {
		return badUsage(err)
	}
	if err := genOutputPath(fs.Arg(1)); err != nil {
		return err
	}
	res, err := sortbench.Generate(ctx, fs.Arg(1), o, *force)
	if err != nil {
		return err
	}
	if *sum {
		fmt.Fprintln(stderr, res.Checksum.Hex())
	}
	return nil
}

// genArgs checks gen's two arguments and returns NUM_RECS.
func genArgs(fs *flag.FlagSet) (uint64, error) {
	switch fs.NArg() {
	case 0:
		return 0, usagef("missing NUM_RECS and FILE_NAME")
	case 1:
		return 0, usagef("missing FILE_NAME after NUM_RECS %s", fs.Arg(0))
	case 2:
	default:
		return 0, usagef("want NUM_RECS and FILE_NAME, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	n, err := strconv.ParseUint(fs.Arg(0), 10, 64)
	if err != nil {
		return 0, usagef("NUM_RECS %q: want a non-negative decimal number", fs.Arg(0))
	}
	return n, nil
}

// negativeCount finds a negative NUM_RECS before the flag package reads
// it as an undefined flag ("-5": no flag of gen is named by a number):
// the arguments are walked as the parser walks them, skipping each flag's
// value.
func negativeCount(fs *flag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if a == "--" || !strings.HasPrefix(a, "-") || name == "" {
			return nil
		}
		if c := name[0]; c >= '0' && c <= '9' || c == '.' {
			if _, err := strconv.ParseFloat(name, 64); err == nil {
				return usagef("NUM_RECS %s: want a non-negative decimal number", a)
			}
			return nil
		}
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			return nil // the parser reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		i++ // the flag's value
	}
	return nil
}

// genOutputPath checks gen's FILE_NAME before anything is generated: not a
// directory, a socket or a read-only file; a pipe or a device is written
// in order (/dev/null: nothing written); a regular file, or a new one in a
// writable directory, is replaced through a temporary file.
func genOutputPath(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.Mode()&os.ModeSocket != 0:
		return usagef("%s is a socket: gen writes files, pipes and devices", path)
	case err == nil && !st.IsDir() && !st.Mode().IsRegular():
		return nil // a pipe or a device: opened when written
	case err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o222 == 0:
		return usagef("%s is read-only (mode %04o): gen does not replace it; remove it or make it writable", path, st.Mode().Perm())
	}
	return checkOutputPath("", path, true, "")
}
