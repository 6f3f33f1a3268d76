package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/braid-pm/braid/sort"
)

const validateUsage = `[-i] [-q] [-o SUMMARY_FILE] [-s] [-perm INPUT] [-t N] [-key K -value V | -klv -key K] FILE_NAME

Prints valsort's lines on standard error and, as valsort, exits 1 when
records are out of order (also when FILE_NAME is not a permutation of
INPUT, is not whole records, or cannot be read); 2 on a bad command line,
such as a FILE_NAME that does not exist (pmsort -h lists the exit
statuses). -o writes valsort's 280-byte partition summary
(to a temporary name, renamed when complete; never over FILE_NAME or
INPUT), -s validates a concatenation of summaries. -perm INPUT also checks
that FILE_NAME is a permutation of INPUT (same record count and checksum).`

func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", validateUsage, stdout)
	fold := fs.Bool("i", false, "case-insensitive ASCII key comparison")
	quiet := fs.Bool("q", false, "quiet: only the exit status")
	sumOut := fs.String("o", "", "write a partition summary to this file")
	summaries := fs.Bool("s", false, "FILE_NAME holds partition summaries, not records")
	perm := fs.String("perm", "", "check that FILE_NAME is a permutation of this input file")
	threads := fs.Int("t", 0, "validator goroutines (0: all CPUs)")
	var ff formatFlags
	ff.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := pathFlags(fs, "o", "perm"); err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
		return usagef("missing FILE_NAME")
	case 1:
	default:
		return usagef("want one FILE_NAME, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	if err := nonNegative("t", *threads); err != nil {
		return err
	}
	f, err := ff.format()
	if err != nil {
		return err
	}
	vo := sort.ValidateOptions{Format: f, CaseInsensitive: *fold, Threads: *threads}
	if err := vo.Validate(); err != nil {
		return badUsage(err)
	}
	if (*sumOut != "" || *summaries) && (f.KLV || f.RecordSize() != 100) {
		flagName := "-o"
		if *summaries {
			flagName = "-s"
		}
		return usagef("%s: valsort's partition summaries hold 100-byte records, and the records are %s", flagName, f)
	}
	file := fs.Arg(0)
	// The paths, before the (long) validation. FILE_NAME and INPUT may
	// be pipes (read in order).
	if err := checkInputPath("", file, false); err != nil {
		return err
	}
	if *perm != "" {
		if err := checkInputPath("-perm ", *perm, false); err != nil {
			return err
		}
	}
	if *sumOut != "" {
		for _, other := range []string{file, *perm} {
			if other == "" {
				continue
			}
			if err := checkNotInput("-o ", *sumOut, other); err != nil {
				return err
			}
		}
		if err := checkOutputPath("-o ", *sumOut, true, ""); err != nil {
			return err
		}
	}
	fail := func(err error) error {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err // interrupted: exit 130
		}
		if !*quiet {
			fmt.Fprintf(stderr, "pmsort validate: %s\n", message(err))
		}
		return exitError{exitFail}
	}
	// -perm INPUT is read first: a failure to read it is reported before
	// anything is said about FILE_NAME.
	var in *sort.Summary
	if *perm != "" {
		if in, err = sort.Validate(ctx, *perm, vo); err != nil {
			return fail(&prefixed{"-perm", err})
		}
	}
	var s *sort.Summary
	if *summaries {
		b, err := os.ReadFile(file)
		if err != nil {
			return fail(err)
		}
		parts, err := sort.ParseSummaries(b)
		if err != nil {
			return fail(inFile(file, err))
		}
		c := sort.CombineSummaries(parts, *fold, f.KeySize)
		s = &c
	} else if s, err = sort.Validate(ctx, file, vo); err != nil {
		return fail(err) // the error names the file
	}
	if *sumOut != "" {
		b, err := s.MarshalSummary()
		if err == nil {
			err = writeFileAtomic(*sumOut, b)
		}
		if err != nil {
			return fail(&prefixed{"-o " + *sumOut, err})
		}
	}
	if !*quiet {
		s.Report(stderr)
	}
	code := exitOK
	if !s.OK() {
		code = exitFail
	}
	if in != nil {
		if err := samePermutation(in, s); err != nil {
			if !*quiet {
				fmt.Fprintf(stderr, "ERROR - not a permutation of %s: %v\n", *perm, err)
			}
			code = exitFail
		} else if !*quiet {
			fmt.Fprintf(stderr, "Permutation of %s: same %s records and checksum\n", *perm, in.Records)
		}
	}
	if code != exitOK {
		return exitError{code}
	}
	return nil
}

func samePermutation(in, out *sort.Summary) error {
	if in.Records != out.Records {
		return fmt.Errorf("%s records in the input, %s in the output", in.Records, out.Records)
	}
	if in.Checksum != out.Checksum {
		return errors.New("checksum " + in.Checksum.Hex() + " in the input, " + out.Checksum.Hex() + " in the output")
	}
	return nil
}

// writeFileAtomic writes b to path through a temporary file in the same
// directory, made durable and renamed, so that path holds either its old
// contents or all of b.
func writeFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".pmsort-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	// CreateTemp makes the file private; a summary is an ordinary output.
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if e2 := f.Close(); err == nil {
		err = e2
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e2 := d.Close(); err == nil {
		err = e2
	}
	if err != nil && !errors.Is(err, fs.ErrInvalid) {
		return fmt.Errorf("%s written, but syncing its directory failed: %w", path, err)
	}
	return nil
}
