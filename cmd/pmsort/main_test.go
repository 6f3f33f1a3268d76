package main

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// run calls a subcommand and returns its exit status and standard error.
func run(t *testing.T, fn func(context.Context, []string) error, args ...string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = f
	err = fn(context.Background(), args)
	os.Stderr = old
	b, _ := os.ReadFile(f.Name())
	f.Close()
	code := 0
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
		b = append(b, err.Error()...)
	}
	return code, string(b)
}

func golden(t *testing.T, name string) []byte {
	raw, err := os.ReadFile(filepath.Join("..", "..", "sort", "testdata", name))
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
		code, msg := run(t, runGen, append(c.args, out)...)
		require.Equal(t, 0, code, msg)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, golden(t, c.golden), b, "%v", c.args)
	}
	code, msg := run(t, runGen, "-c", "1000", os.DevNull)
	require.Equal(t, 0, code)
	require.Equal(t, "1ea6370b955\n", msg)
	code, _ = run(t, runGen, "-bx", "4", filepath.Join(dir, "x"))
	require.NotEqual(t, 0, code)
	code, _ = run(t, runGen, "4")
	require.NotEqual(t, 0, code)
}

func TestSortValidateCLI(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	code, msg := run(t, runGen, "20000", in)
	require.Equal(t, 0, code, msg)

	code, msg = run(t, runValidate, in)
	require.Equal(t, 1, code)
	require.Contains(t, msg, "Records: 20000\nChecksum: ")
	require.Contains(t, msg, "unordered records")

	for _, mode := range []string{"auto", "onepass", "mergepass", "ems"} {
		code, msg = run(t, runSort, "-i", in, "-o", out, "-f", "-mode", mode, "-mem", "1MiB", "-wbuf", "64KiB", "-json")
		require.Equal(t, 0, code, msg)
		code, msg = run(t, runValidate, "-perm", in, out)
		require.Equal(t, 0, code, msg)
		require.Contains(t, msg, "SUCCESS - all records are in order")
		require.Contains(t, msg, "Permutation of")
	}
	code, msg = run(t, runSort, "-i", in, "-o", out)
	require.Equal(t, 1, code)
	require.Contains(t, msg, "output exists")
	code, msg = run(t, runSort, "-i", in, "-o", filepath.Join(dir, "o2"), "-mode", "onepass", "-mem", "1MiB", "-wbuf", "1MiB")
	require.Equal(t, 1, code)
	require.Contains(t, msg, "memory budget too small")

	// Partitioned validation with -o and -s.
	var sums []byte
	for i := 0; i < 2; i++ {
		part, sum := filepath.Join(dir, "part"), filepath.Join(dir, "sum")
		b, _ := os.ReadFile(out)
		require.NoError(t, os.WriteFile(part, b[i*1000000:(i+1)*1000000], 0o644))
		code, msg = run(t, runValidate, "-q", "-o", sum, part)
		require.Equal(t, 0, code, msg)
		require.Empty(t, msg)
		s, _ := os.ReadFile(sum)
		sums = append(sums, s...)
	}
	all := filepath.Join(dir, "all.sum")
	require.NoError(t, os.WriteFile(all, sums, 0o644))
	code, msg = run(t, runValidate, "-s", all)
	require.Equal(t, 0, code, msg)
	require.Contains(t, msg, "Records: 20000\n")

	// Not a permutation: a different input.
	other := filepath.Join(dir, "other")
	code, _ = run(t, runGen, "-b5", "20000", other)
	require.Equal(t, 0, code)
	code, msg = run(t, runValidate, "-perm", other, out)
	require.Equal(t, 1, code)
	require.Contains(t, msg, "not a permutation")

	// KLV through the CLI.
	kin, kout := filepath.Join(dir, "kin"), filepath.Join(dir, "kout")
	code, msg = run(t, runGen, "-klv", "-key", "8", "-vmax", "300", "5000", kin)
	require.Equal(t, 0, code, msg)
	code, msg = run(t, runSort, "-klv", "-key", "8", "-i", kin, "-o", kout)
	require.Equal(t, 0, code, msg)
	code, msg = run(t, runValidate, "-klv", "-key", "8", "-perm", kin, kout)
	require.Equal(t, 0, code, msg)
}

func TestBenchSmall(t *testing.T) {
	code, msg := run(t, runBench, "-n", "20000", "-runs", "1", "-dir", t.TempDir(), "-json")
	require.Equal(t, 0, code, msg)
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"4096": 4096, "64K": 64 << 10, "64KiB": 64 << 10, "512MiB": 512 << 20, "2GiB": 2 << 30, "1.5G": 3 << 29, "2gb": 2 << 30} {
		v, err := parseSize(s)
		require.NoError(t, err, s)
		require.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "x", "-1", "1Q"} {
		_, err := parseSize(s)
		require.Error(t, err, s)
	}
}
