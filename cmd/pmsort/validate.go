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

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/sort/sortbench"
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

// validateConfig is one pmsort validate, from its command line.
type validateConfig struct {
	file      string
	quiet     bool
	sumOut    string // -o
	summaries bool   // -s
	perm      string
	vo        sortbench.ValidateOptions
}

func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseValidate(args, stdout)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err // interrupted: exit 130
		}
		if !c.quiet {
			fmt.Fprintf(stderr, "pmsort validate: %s\n", message(err))
		}
		return cli.ExitError{Code: cli.ExitFail}
	}
	// -perm INPUT is read first: a failure to read it is reported before
	// anything is said about FILE_NAME.
	var in *sortbench.Summary
	if c.perm != "" {
		if in, err = sortbench.Validate(ctx, c.perm, c.vo); err != nil {
			err = formatHint(c.vo.Format, err)
			return fail(&prefixed{"-perm", err})
		}
	}
	s, err := c.summary(ctx)
	if err != nil {
		return fail(err)
	}
	if c.sumOut != "" {
		b, err := s.MarshalSummary()
		if err == nil {
			err = writeFileAtomic(c.sumOut, b)
		}
		if err != nil {
			return fail(&prefixed{"-o " + c.sumOut, err})
		}
	}
	if !c.quiet {
		s.Report(stderr)
	}
	code := cli.ExitOK
	if !s.OK() {
		code = cli.ExitFail
	}
	if in != nil {
		if err := samePermutation(in, s); err != nil {
			if !c.quiet {
				fmt.Fprintf(stderr, "ERROR - not a permutation of %s: %v\n", c.perm, err)
			}
			code = cli.ExitFail
		} else if !c.quiet {
			fmt.Fprintf(stderr, "Permutation of %s: same %s records and checksum\n", c.perm, in.Records)
		}
	}
	if code != cli.ExitOK {
		return cli.ExitError{Code: code}
	}
	return nil
}

// summary validates FILE_NAME, or combines the summaries it holds (-s).
// Its errors name the file.
func (c *validateConfig) summary(ctx context.Context) (*sortbench.Summary, error) {
	if !c.summaries {
		s, err := sortbench.Validate(ctx, c.file, c.vo)
		return s, formatHint(c.vo.Format, err)
	}
	b, err := os.ReadFile(c.file)
	if err != nil {
		return nil, err
	}
	parts, err := sortbench.ParseSummaries(b)
	if err != nil {
		return nil, inFile(c.file, err)
	}
	s := sortbench.CombineSummaries(parts, c.vo.CaseInsensitive, c.vo.Format.KeySize)
	return &s, nil
}

// parseValidate parses and checks validate's command line, its paths
// included, before anything is read.
func parseValidate(args []string, stdout io.Writer) (*validateConfig, error) {
	c := &validateConfig{}
	fs := newFlags("validate", validateUsage, stdout)
	fs.BoolVar(&c.vo.CaseInsensitive, "i", false, "case-insensitive ASCII key comparison")
	fs.BoolVar(&c.quiet, "q", false, "quiet: only the exit status")
	fs.StringVar(&c.sumOut, "o", "", "write a partition summary to this file")
	fs.BoolVar(&c.summaries, "s", false, "FILE_NAME holds partition summaries, not records")
	fs.StringVar(&c.perm, "perm", "", "check that FILE_NAME is a permutation of this input file")
	fs.IntVar(&c.vo.Threads, "t", 0, "validator goroutines (0: all CPUs)")
	var ff formatFlags
	ff.register(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := pathFlags(fs, "o", "perm"); err != nil {
		return nil, err
	}
	switch fs.NArg() {
	case 0:
		return nil, usagef("missing FILE_NAME")
	case 1:
	default:
		return nil, usagef("want one FILE_NAME, got %d arguments: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	c.file = fs.Arg(0)
	if err := nonNegative("t", c.vo.Threads); err != nil {
		return nil, err
	}
	f, err := ff.format()
	if err != nil {
		return nil, err
	}
	c.vo.Format = f
	if err := c.vo.Validate(); err != nil {
		return nil, badUsage(err)
	}
	if (c.sumOut != "" || c.summaries) && (f.KLV || f.RecordSize() != 100) {
		flagName := "-o"
		if c.summaries {
			flagName = "-s"
		}
		return nil, usagef("%s: valsort's partition summaries hold 100-byte records, and the records are %s", flagName, f)
	}
	return c, c.checkPaths()
}

// checkPaths checks the paths before the (long) validation. FILE_NAME and
// INPUT may be pipes (read in order); the summary is never written over
// either.
func (c *validateConfig) checkPaths() error {
	if err := checkInputPath("", c.file, false); err != nil {
		return err
	}
	if c.perm != "" {
		if err := checkInputPath("-perm ", c.perm, false); err != nil {
			return err
		}
	}
	if c.sumOut == "" {
		return nil
	}
	for _, other := range []string{c.file, c.perm} {
		if other == "" {
			continue
		}
		if err := checkNotInput("-o ", c.sumOut, other); err != nil {
			return err
		}
	}
	return checkOutputPath("-o ", c.sumOut, true, "")
}

func samePermutation(in, out *sortbench.Summary) error {
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
