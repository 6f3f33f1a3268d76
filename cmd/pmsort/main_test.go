package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist/device"
	"github.com/stretchr/testify/require"
)

// pmsort runs the command with args and returns its exit status, standard
// output and standard error.
func pmsort(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return pmsortCtx(t, context.Background(), args...)
}

func pmsortCtx(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func golden(t *testing.T, name string) []byte {
	raw, err := os.ReadFile(filepath.Join("..", "..", "sort", "sortbench", "testdata", name))
	require.NoError(t, err)
	b, err := hex.DecodeString(strings.ReplaceAll(string(raw), "\n", ""))
	require.NoError(t, err)
	return b
}

func TestGenMatchesGensort(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args   []string
		golden string
	}{
		{[]string{"-b1000000", "4"}, "gensort_b1000000_n4.hex"},
		{[]string{"-a", "4"}, "gensort_a_n4.hex"},
		{[]string{"-a", "-s", "-b1000", "4"}, "gensort_a_s_b1000_n4.hex"},
		{[]string{"-s", "-b1000", "4"}, "gensort_s_b1000_n4.hex"},
	} {
		out := filepath.Join(dir, "g")
		code, _, msg := pmsort(t, append(append([]string{"gen"}, c.args...), out)...)
		require.Equal(t, 0, code, msg)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, golden(t, c.golden), b, "%v", c.args)
	}
	code, _, msg := pmsort(t, "gen", "-c", "1000", os.DevNull)
	require.Equal(t, 0, code)
	require.Equal(t, "1ea6370b955\n", msg)
}

func TestSortValidateCLI(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	code, _, msg := pmsort(t, "gen", "20000", in)
	require.Equal(t, 0, code, msg)

	code, _, msg = pmsort(t, "validate", in)
	require.Equal(t, 1, code)
	require.Contains(t, msg, "Records: 20000\nChecksum: ")
	require.Contains(t, msg, "unordered records")

	for _, mode := range []string{"auto", "onepass", "mergepass", "ems"} {
		code, stdout, msg := pmsort(t, "sort", "-i", in, "-o", out, "-f", "-mode", mode, "-mem", "1MiB", "-wbuf", "64KiB", "-json")
		require.Equal(t, 0, code, msg)
		require.Contains(t, stdout, `"mode"`)
		code, _, msg = pmsort(t, "validate", "-perm", in, out)
		require.Equal(t, 0, code, msg)
		require.Contains(t, msg, "SUCCESS - all records are in order")
		require.Contains(t, msg, "Permutation of")
	}
	code, _, msg = pmsort(t, "sort", "-i", in, "-o", out)
	require.Equal(t, 2, code)
	require.Contains(t, msg, "pmsort sort: -o "+out+" exists (use -f to replace it)")

	// The report names the final output, not the temporary file.
	code, stdout, msg := pmsort(t, "sort", "-i", in, "-o", out, "-f")
	require.Equal(t, 0, code, msg)
	require.Contains(t, stdout, "output: "+out+":")
	require.NotContains(t, stdout, ".tmp")

	// A budget too small for OnePass.
	big := filepath.Join(dir, "big")
	code, _, msg = pmsort(t, "gen", "100000", big)
	require.Equal(t, 0, code, msg)
	code, _, msg = pmsort(t, "sort", "-i", big, "-o", filepath.Join(dir, "o2"), "-mode", "onepass", "-mem", "1MiB")
	require.Equal(t, 1, code)
	require.Contains(t, msg, "memory budget too small")
	require.NoFileExists(t, filepath.Join(dir, "o2"))

	// Partitioned validation with -o and -s.
	var sums []byte
	sorted, err := os.ReadFile(out)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		part, sum := filepath.Join(dir, "part"), filepath.Join(dir, "sum")
		require.NoError(t, os.WriteFile(part, sorted[i*1000000:(i+1)*1000000], 0o644))
		code, _, msg = pmsort(t, "validate", "-q", "-o", sum, part)
		require.Equal(t, 0, code, msg)
		require.Empty(t, msg)
		s, _ := os.ReadFile(sum)
		require.Len(t, s, 280)
		sums = append(sums, s...)
	}
	all := filepath.Join(dir, "all.sum")
	require.NoError(t, os.WriteFile(all, sums, 0o644))
	code, _, msg = pmsort(t, "validate", "-s", all)
	require.Equal(t, 0, code, msg)
	require.Contains(t, msg, "Records: 20000\n")
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	require.Empty(t, left)

	// Not a permutation: a different input.
	other := filepath.Join(dir, "other")
	code, _, _ = pmsort(t, "gen", "-b5", "20000", other)
	require.Equal(t, 0, code)
	code, _, msg = pmsort(t, "validate", "-perm", other, out)
	require.Equal(t, 1, code)
	require.Contains(t, msg, "not a permutation")

	// KLV through the CLI.
	kin, kout := filepath.Join(dir, "kin"), filepath.Join(dir, "kout")
	code, _, msg = pmsort(t, "gen", "-klv", "-key", "8", "-vmax", "300", "5000", kin)
	require.Equal(t, 0, code, msg)
	code, _, msg = pmsort(t, "sort", "-klv", "-key", "8", "-i", kin, "-o", kout)
	require.Equal(t, 0, code, msg)
	code, _, msg = pmsort(t, "validate", "-klv", "-key", "8", "-perm", kin, kout)
	require.Equal(t, 0, code, msg)
}

// The summary of validate -o never replaces the file being validated (or
// the -perm input), by name or through a link.
func TestValidateSummaryNeverOverwritesInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.sorted")
	code, _, msg := pmsort(t, "gen", "100", in)
	require.Equal(t, 0, code, msg)
	want, err := os.ReadFile(in)
	require.NoError(t, err)
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Link(in, link))
	other := filepath.Join(dir, "other")
	code, _, msg = pmsort(t, "gen", "100", other)
	require.Equal(t, 0, code, msg)
	for _, args := range [][]string{
		{"-o", in, in},
		{"-o", filepath.Join(dir, ".", "a.sorted"), in},
		{"-o", link, in},
		{"-o", in, "-perm", in, other},
		{"-o", dir, other},
	} {
		code, _, msg := pmsort(t, append([]string{"validate"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, msg)
		require.Contains(t, msg, "pmsort validate: -o ")
		got, err := os.ReadFile(in)
		require.NoError(t, err)
		require.Equal(t, want, got, "%v overwrote the input", args)
	}
}

// TestExitStatuses checks the rule pmsort -h and sort/README.md state,
// category by category for every command: 0 success; 2 a wrong command
// line (flag, flag value, argument, path), found before any work, with
// one line saying what is wrong and nothing written; 1 a failure of the
// work (I/O, bad data, space; validate as valsort).
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	in, sorted, other := path("in"), path("sorted"), path("other")
	for _, args := range [][]string{{"gen", "1000", in}, {"gen", "-b5", "1000", other}, {"sort", "-i", in, "-o", sorted}} {
		code, _, msg := pmsort(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, msg)
	}
	sortedBytes, err := os.ReadFile(sorted)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path("partial"), sortedBytes[:150], 0o644)) // not whole records
	require.NoError(t, os.WriteFile(path("empty"), nil, 0o644))
	require.NoError(t, os.WriteFile(path("bad.sum"), sortedBytes[:100], 0o644)) // not 280-byte summaries
	require.NoError(t, os.Link(in, path("link")))
	require.NoError(t, os.WriteFile(path("existing"), []byte("keep"), 0o644))
	require.NoError(t, os.Mkdir(path("subdir"), 0o755))
	require.NoError(t, os.WriteFile(path("readonly"), []byte("keep"), 0o444))
	fifo := filepath.Join(t.TempDir(), "fifo") // not in dir: dirState reads every file
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	before := dirState(t, dir)
	out := path("out")         // never created
	nodir := path("nodir/out") // in a directory that does not exist
	const ro = "/proc/pmsort-out"

	const (
		ok      = "success"
		command = "usage: command"
		flag    = "usage: flag"
		value   = "usage: flag value"
		arg     = "usage: argument"
		pathArg = "usage: path"
		failure = "failure"
	)
	type exitCase struct {
		cmd, category string
		args          []string
		code          int
		msg           string
	}
	cases := []exitCase{
		{"pmsort", ok, []string{"-h"}, 0, "Exit status:\n  0    success"},
		{"pmsort", command, nil, 2, "pmsort: no command given"},
		{"pmsort", command, []string{"bogus"}, 2, `pmsort: unknown command "bogus"`},
		{"pmsort", flag, []string{"-x"}, 2, "unknown shorthand flag"},

		{"help", ok, []string{"help"}, 0, "Exit status:"},
		{"help", ok, []string{"help", "sort"}, 0, "-tmp"},
		{"help", flag, []string{"help", "-x"}, 2, "unknown shorthand flag"},
		{"help", arg, []string{"help", "bogus"}, 2, `pmsort: help: unknown command "bogus"`},
		{"help", arg, []string{"help", "gen", "sort"}, 2, "help takes one command"},

		{"gen", ok, []string{"gen", "10", os.DevNull}, 0, ""},
		{"gen", ok, []string{"gen", "-h"}, 0, "usage: pmsort gen"},
		{"gen", flag, []string{"gen", "-zz", "4", out}, 2, "pmsort gen: flag provided but not defined: -zz"},
		{"gen", value, []string{"gen", "-t", "-1", "5", out}, 2, "-t -1: want 0"},
		{"gen", value, []string{"gen", "-bx", "4", out}, 2, "-bx"},
		{"gen", value, []string{"gen", "-key", "0", "4", out}, 2, "record format"},
		{"gen", arg, []string{"gen"}, 2, "pmsort gen: missing NUM_RECS and FILE_NAME"},
		{"gen", arg, []string{"gen", "5"}, 2, "pmsort gen: missing FILE_NAME after NUM_RECS 5"},
		{"gen", arg, []string{"gen", "5", "a", "b"}, 2, "got 3 arguments"},
		{"gen", arg, []string{"gen", "x", out}, 2, `NUM_RECS "x"`},
		{"gen", arg, []string{"gen", "-5", out}, 2, "pmsort gen: NUM_RECS -5: want a non-negative decimal number"},
		{"gen", arg, []string{"gen", "-a", "-s", "-b3", "-1.5", out}, 2, "NUM_RECS -1.5: want a non-negative"},
		{"gen", pathArg, []string{"gen", "100", dir}, 2, "pmsort gen: " + dir + " is a directory"},
		{"gen", pathArg, []string{"gen", "100", nodir}, 2, "pmsort gen: " + nodir + ": directory " + path("nodir") + ": no such file"},
		{"gen", pathArg, []string{"gen", "100", ro}, 2, "cannot create files there"},
		{"gen", value, []string{"gen", "99999999999999999", out}, 2, "make more than 2^63 bytes"},
		{"gen", value, []string{"gen", "-t", "100000", "5", out}, 2, "100000 generator goroutines, want 0 (all CPUs) to 1024"},
		{"gen", value, []string{"gen", "-a", "-klv", "5", out}, 2, "ASCII records exist only in the gensort format"},
		{"gen", value, []string{"gen", "-a", "-key", "20", "-value", "80", "5", out}, 2, "ASCII records exist only in the gensort format"},
		{"gen", value, []string{"gen", "-klv", "-value", "5", "5", out}, 2, "-value is the value size of fixed-size records"},
		{"gen", value, []string{"gen", "-vmax", "5", "5", out}, 2, "-vmin and -vmax are the value lengths of KLV records"},
		{"gen", arg, []string{"gen", "10", ""}, 2, "pmsort gen: FILE_NAME is empty"},
		{"gen", pathArg, []string{"gen", "10", path("readonly")}, 2, "pmsort gen: " + path("readonly") + " is read-only (mode 0444): gen does not replace it"},
		{"gen", failure, []string{"gen", "-key", "64", "-value", "1000", "999999999999999", out}, 1, "free"},

		{"validate", ok, []string{"validate", "-perm", in, sorted}, 0, "SUCCESS"},
		{"validate", flag, []string{"validate", "-zz", sorted}, 2, "flag provided but not defined: -zz"},
		{"validate", value, []string{"validate", "-t", "-1", sorted}, 2, "-t -1"},
		{"validate", value, []string{"validate", "-key", "0", sorted}, 2, "record format"},
		{"validate", arg, []string{"validate"}, 2, "pmsort validate: missing FILE_NAME"},
		{"validate", arg, []string{"validate", "a", "b"}, 2, "want one FILE_NAME"},
		{"validate", pathArg, []string{"validate", path("missing")}, 2, "pmsort validate: " + path("missing") + ": no such file"},
		{"validate", pathArg, []string{"validate", dir}, 2, "pmsort validate: " + dir + " is a directory"},
		{"validate", pathArg, []string{"validate", "-perm", path("missing"), sorted}, 2, "pmsort validate: -perm " + path("missing") + ": no such file"},
		{"validate", pathArg, []string{"validate", "-perm", dir, sorted}, 2, "-perm " + dir + " is a directory"},
		{"validate", pathArg, []string{"validate", "-o", nodir, sorted}, 2, "directory " + path("nodir")},
		{"validate", pathArg, []string{"validate", "-o", path("subdir"), sorted}, 2, "-o " + path("subdir") + " is a directory"},
		{"validate", pathArg, []string{"validate", "-o", sorted, sorted}, 2, "-o " + sorted + " is the input"},
		{"validate", pathArg, []string{"validate", "-o", os.DevNull, sorted}, 2, "-o /dev/null exists and is a character device, not a regular file"},
		{"validate", pathArg, []string{"validate", "-o", "-q", sorted}, 2, "pmsort validate: -o -q: that is a flag, not a file name (is the value of -o missing?)"},
		{"validate", value, []string{"validate", "-t", "99999", sorted}, 2, "99999 validator goroutines, want 0 (all CPUs) to 1024"},
		{"validate", value, []string{"validate", "-o", out, "-key", "20", "-value", "30", sorted}, 2, "-o: valsort's partition summaries hold 100-byte records, and the records are fixed 20+30"},
		{"validate", value, []string{"validate", "-s", "-klv", sorted}, 2, "-s: valsort's partition summaries hold 100-byte records"},
		{"validate", failure, []string{"validate", in}, 1, "ERROR - there are"}, // valsort: unordered records
		{"validate", failure, []string{"validate", "-q", in}, 1, ""},
		{"validate", failure, []string{"validate", "-perm", other, sorted}, 1, "not a permutation"},
		{"validate", failure, []string{"validate", path("partial")}, 1, "pmsort validate: " + path("partial") + ": bad record format: partial record found at end: size 150 is not a multiple of the record size 100; read as fixed-size records of 100 bytes (-key 10 -value 90): KLV records are read with -klv -key K\n"},
		{"validate", failure, []string{"validate", "-klv", "-key", "10", in}, 1, "; read as KLV records with 10-byte keys (-klv -key 10): fixed-size records are read with -key K -value V, without -klv\n"},
		{"validate", failure, []string{"validate", "-s", path("bad.sum")}, 1, "pmsort validate: " + path("bad.sum") + ": bad record format: partial partition summary"},
		{"validate", failure, []string{"validate", "-perm", path("partial"), sorted}, 1, "pmsort validate: -perm: " + path("partial") + ": bad record format: partial record found at end"},

		{"sort", ok, []string{"sort", "-f", "-i", in, "-o", sorted}, 0, ""},
		{"sort", flag, []string{"sort", "-mode", "ems", "-zz"}, 2, "flag provided but not defined: -zz"},
		{"sort", value, []string{"sort", "-mem", "-1"}, 2, `pmsort sort: invalid value "-1" for flag -mem`},
		{"sort", value, []string{"sort", "-i", in, "-o", out, "-mem", "99999T"}, 2, "physical memory"},
		{"sort", value, []string{"sort", "-i", in, "-o", out, "-mem", "99999999999T"}, 2, "too large"},
		{"sort", value, []string{"sort", "-i", in, "-o", out, "-readers", "-1"}, 2, "-readers -1"},
		{"sort", value, []string{"sort", "-i", in, "-o", out, "-mode", "fast"}, 2, `mode "fast"`},
		{"sort", value, []string{"sort", "-i", in, "-o", out, "-progress", "maybe"}, 2, "-progress"},
		{"sort", arg, []string{"sort"}, 2, "pmsort sort: missing -i IN and -o OUT"},
		{"sort", arg, []string{"sort", "-i", in}, 2, "missing -o OUT"},
		{"sort", arg, []string{"sort", "-i", in, "-o", out, "extra"}, 2, "unexpected arguments"},
		{"sort", pathArg, []string{"sort", "-i", path("missing"), "-o", out}, 2, "pmsort sort: -i " + path("missing") + ": no such file"},
		{"sort", pathArg, []string{"sort", "-i", dir, "-o", out}, 2, "-i " + dir + " is a directory"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", in}, 2, "pmsort sort: -o " + in + " is the input"},
		{"sort", pathArg, []string{"sort", "-f", "-i", in, "-o", path("link")}, 2, "is the input " + in + " (the same file)"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", path("existing")}, 2, "pmsort sort: -o " + path("existing") + " exists (use -f to replace it)"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", dir}, 2, "pmsort sort: -o " + dir + " is a directory"},
		{"sort", pathArg, []string{"sort", "-f", "-i", in, "-o", dir}, 2, "is a directory"},
		{"sort", pathArg, []string{"sort", "-f", "-i", in, "-o", os.DevNull}, 2, "not a regular file"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", nodir}, 2, "-o " + nodir + ": directory " + path("nodir") + ": no such file"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", ro}, 2, "cannot create files there"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", out, "-tmp", path("missing")}, 2, "pmsort sort: -tmp " + path("missing") + ": no such file"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", out, "-tmp", in}, 2, "-tmp " + in + " is not a directory"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", out, "-profile", path("missing")}, 2, "-profile"},
		{"sort", pathArg, []string{"sort", "-i", "/dev/zero", "-o", out}, 2, "pmsort sort: -i /dev/zero is a character device, not a regular file: pmsort sort maps its input"},
		{"sort", pathArg, []string{"sort", "-i", fifo, "-o", out}, 2, "-i " + fifo + " is a pipe, not a regular file"},
		{"sort", pathArg, []string{"sort", "-i", "-o", out}, 2, "-i -o: that is a flag, not a file name"},
		{"sort", pathArg, []string{"sort", "-i", in, "-o", out, "-cpuprofile", nodir}, 2, "-cpuprofile"},
		{"sort", failure, []string{"sort", "-i", path("partial"), "-o", out}, 1, "pmsort sort: bad record format: " + path("partial") + " is 150 bytes, not a multiple of the 100-byte record (1 whole records and 50 bytes left); read as fixed-size records of 100 bytes (-key 10 -value 90): KLV records are read with -klv -key K\n"},
		{"sort", failure, []string{"sort", "-klv", "-key", "10", "-i", in, "-o", out}, 1, "; read as KLV records with 10-byte keys (-klv -key 10): fixed-size records are read with -key K -value V, without -klv\n"},
		{"sort", failure, []string{"sort", "-i", path("empty"), "-o", out}, 1, "has no records"},

		{"bench", ok, []string{"bench", "-n", "1000", "-runs", "1", "-modes", "onepass", "-dir", dir}, 0, ""},
		{"bench", flag, []string{"bench", "-mode", "ems"}, 2, "flag provided but not defined: -mode"},
		{"bench", flag, []string{"bench", "-force-pmem"}, 2, "flag provided but not defined: -force-pmem"},
		{"bench", value, []string{"bench", "-n", "0"}, 2, "-n 0"},
		{"bench", value, []string{"bench", "-n", "99999999999999999"}, 2, "do not fit"},
		{"bench", value, []string{"bench", "-modes", "quick"}, 2, "unknown mode"},
		{"bench", value, []string{"bench", "-mpmem", "1", "-dir", dir}, 2, "-mpmem 1 (the budget of MergePass)"},
		{"bench", arg, []string{"bench", "extra"}, 2, "unexpected arguments"},
		{"bench", pathArg, []string{"bench", "-dir", path("missing")}, 2, "pmsort bench: -dir " + path("missing") + ": no such file"},
		{"bench", pathArg, []string{"bench", "-dir", in}, 2, "-dir " + in + " is not a directory"},
		{"bench", pathArg, []string{"bench", "-dir", "/proc"}, 2, "-dir /proc: cannot create files there"},
		{"bench", pathArg, []string{"bench", "-dir", dir, "-tmp", path("missing")}, 2, "-tmp " + path("missing")},
		{"bench", pathArg, []string{"bench", "-dir", dir, "-cpuprofile", nodir}, 2, "-cpuprofile"},
		{"bench", pathArg, []string{"bench", "-dir", dir, "-profile", path("missing")}, 2, "-profile"},
		{"bench", failure, []string{"bench", "-n", "999999999999999", "-dir", dir}, 1, "free"},
	}
	// Every category of every command is checked.
	want := map[string][]string{
		"pmsort": {ok, command, flag},
		"help":   {ok, flag, arg},
	}
	for _, c := range []string{"gen", "validate", "sort", "bench"} {
		want[c] = []string{ok, flag, value, arg, pathArg, failure}
	}
	for cmd, cats := range want {
		for _, cat := range cats {
			require.True(t, slices.ContainsFunc(cases, func(c exitCase) bool {
				return c.cmd == cmd && c.category == cat
			}), "no case of %s for %s", cat, cmd)
		}
	}
	var transcript strings.Builder
	for _, c := range cases {
		code, stdout, msg := pmsort(t, c.args...)
		require.Equal(t, c.code, code, "%s, %s: %v: %s", c.cmd, c.category, c.args, msg)
		if code == 2 && !slices.Contains(c.args, "-mem") { // -mem's message names the machine's memory
			fmt.Fprintf(&transcript, "$ pmsort %s\n%s\n", strings.Join(c.args, " "), msg)
		}
		if c.code == 0 {
			require.Contains(t, stdout+msg, c.msg, "%v", c.args) // help goes to stdout
		} else {
			require.Contains(t, msg, c.msg, "%v", c.args)
		}
		if c.msg == "" && c.code != 2 {
			require.Empty(t, msg, "%v", c.args)
		}
		require.NotContains(t, msg, "invalid options", "%v", c.args)
		require.NotContains(t, msg, ": sort: ", "%v: an internal prefix in the middle of the message", c.args)
		if c.code != 0 && strings.HasPrefix(msg, "pmsort") {
			// An error is the first thing said: no valsort SUCCESS line
			// before it.
			require.NotContains(t, msg, "SUCCESS", "%v", c.args)
		}
		require.NotContains(t, msg, "panic", "%v", c.args)
		require.NotContains(t, msg, "fatal error", "%v", c.args)
		switch c.code {
		case 2:
			// One line saying what is wrong, then where the usage is.
			require.NotContains(t, msg, "usage:", "%v", c.args)
			require.Contains(t, msg, "Run 'pmsort", "%v", c.args)
			require.Equal(t, 2, strings.Count(msg, "\n"), "%v: %q", c.args, msg)
		case 1:
			require.NotContains(t, msg, "Run 'pmsort", "%v", c.args)
		}
		// Nothing created, removed or changed (the bench's files are
		// removed, the sort -f rewrote the same records).
		require.Equal(t, before, dirState(t, dir), "%v", c.args)
		require.NoFileExists(t, ro)
	}
	text := strings.ReplaceAll(transcript.String(), dir, "$DIR")
	structtest.GoldenText(t, "usage-errors", strings.ReplaceAll(text, filepath.Dir(fifo), "$FIFODIR"))
}

// dirState is the names and contents of the files under dir.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	}))
	return m
}

// Sizes that cannot fit fail at once, with a clear error, before anything
// is allocated or generated.
func TestGenTooLargeFailsFast(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int // 2: no file holds them; 1: this file system does not
		msg  string
	}{
		{[]string{"gen", "99999999999999999", filepath.Join(dir, "x")}, 2, "99999999999999999 records of 100 bytes make more than 2^63 bytes"},
		{[]string{"gen", "18446744073709551615", filepath.Join(dir, "x")}, 2, "2^63"},
		{[]string{"gen", "-klv", "-vmin", "9", "999999999999999999", filepath.Join(dir, "x")}, 2, "records of 23 bytes at least make more than 2^63"},
		{[]string{"gen", "-klv", "99999999999", filepath.Join(dir, "x")}, 1, "free"},
		{[]string{"gen", "-key", "64", "-value", "1000", "999999999999999", filepath.Join(dir, "x")}, 1, "free"},
	} {
		args := c.args
		code, _, msg := pmsort(t, args...)
		require.Equal(t, c.code, code, "%v: %s", args, msg)
		require.Contains(t, msg, c.msg, "%v", args)
		left, _ := os.ReadDir(dir)
		require.Empty(t, left)
	}
}

func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	code, _, msg := pmsort(t, "gen", "20000", in)
	require.Equal(t, 0, code, msg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "out")
	// SIGPIPE (the reader of the output went away) cancels with its
	// cause: 141, quietly.
	piped, cancelPiped := context.WithCancelCause(context.Background())
	cancelPiped(cli.ErrBrokenPipe)
	for _, args := range [][]string{
		{"sort", "-i", in, "-o", out},
		{"sort", "-mode", "mergepass", "-mem", "1MiB", "-i", in, "-o", out},
		{"gen", "20000", out},
		{"validate", in},
		{"bench", "-n", "1000", "-dir", dir},
	} {
		code, _, msg := pmsortCtx(t, ctx, args...)
		require.Equal(t, 130, code, "%v: %s", args, msg)
		require.Equal(t, "pmsort: interrupted\n", msg, "%v", args)
		require.NoFileExists(t, out)
		code, _, msg = pmsortCtx(t, piped, args...)
		require.Equal(t, 141, code, "%v: %s", args, msg)
		require.Empty(t, msg, "%v", args)
		require.NoFileExists(t, out)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Equal(t, []string{in}, left)
}

// TestMain lets a test run this test binary as pmsort itself
// (BRAID_PMSORT_MAIN=1), for what only a process shows: signals.
func TestMain(m *testing.M) {
	if os.Getenv("BRAID_PMSORT_MAIN") == "1" {
		os.Args = append([]string{"pmsort"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// TestBrokenPipe: when the reader of its output goes away (pmsort bench |
// head -1), pmsort stops, removes its files and exits 141, quietly.
func TestBrokenPipe(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "bench", "-n", "200000", "-runs", "20", "-dir", dir)
	cmd.Env = append(os.Environ(), "BRAID_PMSORT_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "generated 200000 records")
	require.NoError(t, stdout.Close())
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	require.Equal(t, 141, ee.ExitCode(), "stderr: %s", stderr.String())
	require.Empty(t, stderr.String())
	left, _ := os.ReadDir(dir)
	require.Empty(t, left, "files left behind")
}

// A profile's knee cannot start a thousand readers on two CPUs, and the
// report names the profile file it came from.
func TestProfilePools(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	code, _, msg := pmsort(t, "gen", "1000", in)
	require.Equal(t, 0, code, msg)
	p := &device.Profile{Format: device.ProfileFormat, Device: "/dev/shm/measured.pm",
		SeqRead: device.Peak{GBs: 10, Threads: 1000, Knee: 1000}, RandRead: device.Peak{GBs: 10, Threads: 1000, Knee: 1000},
		SeqWrite: device.Peak{GBs: 5, Threads: 500, Knee: 500}}
	prof := filepath.Join(dir, "f.json")
	require.NoError(t, p.Save(prof))
	code, stdout, msg := pmsort(t, "sort", "-profile", prof, "-i", in, "-o", filepath.Join(dir, "out"))
	require.Equal(t, 0, code, msg)
	require.Contains(t, stdout, "(profile "+prof+")")
	require.NotContains(t, stdout, "measured.pm")
	limit := 4 * runtime.GOMAXPROCS(0)
	require.Contains(t, stdout, "pools: "+strconv.Itoa(limit)+" readers, "+strconv.Itoa(limit)+" writers")
}

func TestBenchSmall(t *testing.T) {
	dir := t.TempDir()
	code, stdout, msg := pmsort(t, "bench", "-n", "20000", "-runs", "1", "-dir", dir, "-json")
	require.Equal(t, 0, code, msg)
	require.Contains(t, stdout, `"valid": 1`)
	code, stdout, msg = pmsort(t, "bench", "-n", "20000", "-runs", "2", "-dir", dir, "-mpmem", "1MiB")
	require.Equal(t, 0, code, msg)
	require.Contains(t, stdout, "Every output was validated")
	require.Contains(t, stdout, "2/2")
	// -tmp is where the run files go: a missing one is refused.
	code, _, msg = pmsort(t, "bench", "-n", "20000", "-runs", "1", "-dir", dir, "-tmp", filepath.Join(dir, "missing"))
	require.Equal(t, 2, code, msg)
	require.Contains(t, msg, "-tmp")
	left, _ := os.ReadDir(dir)
	require.Empty(t, left)
}

// TestBenchGNU: -gnu times GNU sort on the ASCII records and pmsort on the
// same file, validates both and gives the ratio.
func TestBenchGNU(t *testing.T) {
	if _, err := exec.LookPath("sort"); err != nil {
		t.Skip("no sort(1) on PATH")
	}
	dir := t.TempDir()
	code, stdout, msg := pmsort(t, "bench", "-n", "5000", "-runs", "1", "-dir", dir, "-modes", "onepass", "-gnu")
	require.Equal(t, 0, code, msg)
	require.Contains(t, stdout, "GNU sort")
	require.Regexp(t, `OnePass on the ASCII records: [0-9.]+x GNU sort's speed`, stdout)
	require.NotContains(t, stdout, "0/1")
	left, _ := os.ReadDir(dir)
	require.Empty(t, left)
}
