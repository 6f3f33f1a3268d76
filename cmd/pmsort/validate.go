package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/braid-pm/braid/sort"
)

const validateUsage = `[-i] [-q] [-o SUMMARY_FILE] [-s] [-perm INPUT] [-t N] [-key K -value V | -klv -key K] FILE_NAME

Prints valsort's lines on standard error and exits 1 when records are out
of order (or on any error). -o writes valsort's 280-byte partition summary,
-s validates a concatenation of summaries. -perm INPUT also checks that
FILE_NAME is a permutation of INPUT (same record count and checksum).`

func runValidate(ctx context.Context, args []string) error {
	fs := newFlags("validate", validateUsage)
	fold := fs.Bool("i", false, "case-insensitive ASCII key comparison")
	quiet := fs.Bool("q", false, "quiet: only the exit status")
	sumOut := fs.String("o", "", "write a partition summary to this file")
	summaries := fs.Bool("s", false, "FILE_NAME holds partition summaries, not records")
	perm := fs.String("perm", "", "check that FILE_NAME is a permutation of this input file")
	threads := fs.Int("t", 0, "validator goroutines (0: all CPUs)")
	var ff formatFlags
	ff.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError{1}
	}
	f, err := ff.format()
	if err != nil {
		return err
	}
	fail := func(err error) error {
		if !*quiet {
			fmt.Fprintln(os.Stderr, err)
		}
		return exitError{1}
	}
	vo := sort.ValidateOptions{Format: f, CaseInsensitive: *fold, Threads: *threads}
	var s *sort.Summary
	if *summaries {
		b, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			return fail(err)
		}
		parts, err := sort.ParseSummaries(b)
		if err != nil {
			return fail(err)
		}
		c := sort.CombineSummaries(parts, *fold, 10)
		s = &c
	} else {
		s, err = sort.Validate(ctx, fs.Arg(0), vo)
		if err != nil {
			return fail(err)
		}
	}
	if *sumOut != "" {
		b, err := s.MarshalSummary()
		if err == nil {
			err = os.WriteFile(*sumOut, b, 0o644)
		}
		if err != nil {
			return fail(err)
		}
	}
	if !*quiet {
		s.Report(os.Stderr)
	}
	code := 0
	if !s.OK() {
		code = 1
	}
	if *perm != "" {
		in, err := sort.Validate(ctx, *perm, vo)
		if err != nil {
			return fail(fmt.Errorf("permutation input: %w", err))
		}
		if err := samePermutation(in, s); err != nil {
			if !*quiet {
				fmt.Fprintf(os.Stderr, "ERROR - not a permutation of %s: %v\n", *perm, err)
			}
			code = 1
		} else if !*quiet {
			fmt.Fprintf(os.Stderr, "Permutation of %s: same %s records and checksum\n", *perm, in.Records)
		}
	}
	if code != 0 {
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
