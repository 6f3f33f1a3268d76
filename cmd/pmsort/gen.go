package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/braid-pm/braid/sort"
)

const genUsage = `[-a] [-s] [-c] [-bSTARTING_REC_NUM] [-t N] [-key K -value V | -klv -key K -vmin A -vmax B] NUM_RECS FILE_NAME

Writes the same bytes as gensort 1.5 for the same -a, -s, -b and NUM_RECS
(binary records by default), in parallel. -key/-value/-klv select other
record formats (a braid extension; see sort/README.md). The size is checked
against the file system's free space before anything is generated.
As gensort does, an existing FILE_NAME is replaced (atomically: the records
are written under a temporary name and renamed when complete). Record
numbers past 2^128-1 wrap to 0, as in gensort.`

// gensortArgs rewrites gensort's attached "-bN" into "-b=N" for package flag.
func gensortArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[1] == 'b' && a[2] >= '0' && a[2] <= '9' {
			a = "-b=" + a[2:]
		}
		out = append(out, a)
	}
	return out
}

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", genUsage, stderr)
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
	if err := parseFlags(fs, gensortArgs(args)); err != nil {
		return negativeCount(err)
	}
	switch fs.NArg() {
	case 0:
		return usagef("missing NUM_RECS and FILE_NAME")
	case 1:
		return usagef("missing FILE_NAME after NUM_RECS %s", fs.Arg(0))
	case 2:
	default:
		return usagef("want NUM_RECS and FILE_NAME, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	n, err := strconv.ParseUint(fs.Arg(0), 10, 64)
	if err != nil {
		return usagef("NUM_RECS %q: want a non-negative decimal number", fs.Arg(0))
	}
	b, ok := sort.ParseUint128(*start)
	if !ok {
		return usagef("-b%s: want a decimal record number below 2^128", *start)
	}
	if err := nonNegative("t", *threads); err != nil {
		return err
	}
	if *vmin < 0 || *vmax < *vmin || *vmax > sort.MaxKLVValue {
		return usagef("-vmin %d -vmax %d: want 0 <= vmin <= vmax <= %d", *vmin, *vmax, sort.MaxKLVValue)
	}
	f, err := ff.format()
	if err != nil {
		return err
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
	if fs.Arg(1) != os.DevNull { // gensort computes without writing there
		if err := checkOutputPath("", fs.Arg(1), true, ""); err != nil {
			return err
		}
	}
	o := sort.GenOptions{Count: n, Start: b, ASCII: *ascii, Skew: *skew, Format: f,
		MinValue: *vmin, MaxValue: *vmax, Threads: *threads, Checksum: *sum}
	res, err := sort.Generate(ctx, fs.Arg(1), o, *force)
	if err != nil {
		return err
	}
	if *sum {
		fmt.Fprintln(stderr, res.Checksum.Hex())
	}
	return nil
}

// negativeCount turns the flag package's error for a negative NUM_RECS
// ("-5" reads as an undefined flag: no flag of gen is named by a number)
// into one that says what is wrong.
func negativeCount(err error) error {
	const undefined = "flag provided but not defined: -"
	var ue usageError
	if errors.As(err, &ue) && strings.HasPrefix(ue.msg, undefined) {
		num := strings.TrimPrefix(ue.msg, undefined)
		if _, perr := strconv.ParseFloat(num, 64); perr == nil {
			return usagef("NUM_RECS -%s: want a non-negative decimal number", num)
		}
	}
	return err
}
