package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestExitStatuses checks the rule pmkv -h states for every command: 0
// success; 2 a wrong command line, one line saying what, found before the
// store is opened (nothing created); 1 a failure of the work.
func TestExitStatuses(t *testing.T) {
	kvReady(t)
	base := t.TempDir()
	dir := filepath.Join(base, "store")
	mustRun(t, cmd("put", dir, "k", "v")...)
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, []byte("not a store"), 0o644))
	foreign := filepath.Join(base, "foreign")
	require.NoError(t, os.MkdirAll(filepath.Join(foreign, "dev0"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(foreign, "ckpt"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "dev0", "seg-0000"), []byte("walog\x00\x00\x00 not kv"), 0o644))
	badLoad := filepath.Join(base, "bad.txt")
	require.NoError(t, os.WriteFile(badLoad, []byte("a\t1\nno tab here\n"), 0o644))
	bigLoad := filepath.Join(base, "big.txt")
	require.NoError(t, os.WriteFile(bigLoad, []byte("a\t"+strings.Repeat("x", 300000)+"\n"), 0o644))
	missing := filepath.Join(base, "missing")
	big := strings.Repeat("v", 300000) // over a quarter of the 1 MiB segment
	s := small(dir)
	with := func(args ...string) []string { return append(append([]string{args[0]}, s...), args[1:]...) }

	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-h"}, 0, "Exit status:"},
		{[]string{"help", "bench"}, 0, "-sweep"},
		{nil, 2, "pmkv: no command given"},
		{[]string{"bogus"}, 2, `pmkv: unknown command "bogus"`},
		{[]string{"help", "a", "b"}, 2, "help takes one command"},
		{with("get", "k"), 0, "v"},
		{with("get", "-zz", "k"), 2, "pmkv get: unknown flag: --zz"},
		{with("get"), 2, "pmkv get: missing KEY"},
		{with("get", "a", "b"), 2, "want KEY, got 2 arguments"},
		{with("get", "nope"), 1, `pmkv get: key "nope" not found`},
		{[]string{"get", "k"}, 2, "no store given"},
		{[]string{"get", "-dir", missing, "k"}, 2, "no such directory"},
		{[]string{"get", "-dir", file, "k"}, 2, "is not a directory"},
		{[]string{"get", "-dir", dir, "-devices", dir, "k"}, 2, "give one of them"},
		{[]string{"get", "-devices", dir, "k"}, 2, "-devices needs -checkpoint"},
		{[]string{"get", "-dir", base, "k"}, 2, "dev0: no such directory (no store there)"},
		{with("put", "k"), 2, `missing VALUE (after KEY "k")`},
		{with("put", "", "v"), 2, "empty key"},
		{with("put", "k", big), 2, "value of 300000 bytes is over the limit of 261120 (-maxvalue 0 with -segment 1 MiB"},
		{with("put", strings.Repeat("k", 2000), "v"), 2, "key of 2000 bytes is over the limit of 1024"},
		{with("put", "-pmem", "maybe", "k", "v"), 2, `-pmem "maybe"`},
		{with("put", "-segment", "1x", "k", "v"), 2, "bad size"},
		{with("put", "-workers", "-3", "k", "v"), 2, "-workers -3"},
		{with("put", "-device", "nosuch", "k", "v"), 2, `-device: device: invalid argument: no device profile "nosuch"`},
		{with("del"), 2, "missing KEY"},
		{[]string{"put", "-dir", dir, "-segment", "1", "k", "v"}, 2, "-segment 1 B: want 0 (kv's default, 64 MiB) or a multiple of 4 KiB"},
		{[]string{"put", "-dir", dir, "-segment", "4KiB", "k", "v"}, 2, "-segment 4 KiB leaves no room for values beside 1024-byte keys"},
		{[]string{"put", "-dir", dir, "-segment", "16KiB", "k", big[:5000]}, 2, "value of 5000 bytes is over the limit of 3072 (-maxvalue 0 with -segment 16 KiB: a quarter of the segment less -maxkey 1024)"},
		{[]string{"put", "-dir", dir, "-maxkey", "70000", "k", "v"}, 2, "-maxkey 70000: want 0 (kv's default, 1024) to 65535"},
		{with("put", "-workers", "300", "k", "v"), 2, "-workers 300, want 1..256"},
		{with("scan", "a"), 2, `missing TO (after FROM "a")`},
		{with("scan", "-n", "-1", "a", "b"), 2, "-n -1"},
		{with("scan", "-ordered=false", "a", "b"), 2, "needs the ordered index"},
		{with("load"), 2, "missing FILE"},
		{with("load", missing), 2, "no such file"},
		{with("load", base), 2, "is a directory"},
		{with("load", "-format", "csv", badLoad), 2, `-format "csv"`},
		{with("load", badLoad), 1, "pmkv load: line 2: malformed record: no tab"},
		{with("load", bigLoad), 1, "line 1: value of 300000 bytes is over the limit"},
		{with("stats", "extra"), 2, "want no arguments"},
		{with("check"), 0, "ok: "},
		{with("recover", "-zz"), 2, "-zz"},
		{with("gc", "x"), 2, "want no arguments, got 1: x"},
		{with("checkpoint", "-json"), 2, "-json"},
		{[]string{"bench", "-workloads", "g"}, 2, `unknown workload "g"`},
		{[]string{"bench", "-value", "8"}, 2, "-value 8: want at least 16 bytes"},
		{[]string{"bench", "-records", "0"}, 2, "-records 0: want 1 or more"},
		{[]string{"bench", "-clients", "0"}, 2, "-clients 0: want 1 to 65536"},
		{[]string{"bench", "-ops", "0"}, 2, "-ops 0 needs a -duration"},
		{[]string{"bench", "-sweep", "threads=1"}, 2, "want clients=N"},
		{[]string{"bench", "-sweep", "clients=1,x"}, 2, `client count "x"`},
		{[]string{"bench", "-plot", "a.svg"}, 2, "-plot draws a -sweep"},
		{[]string{"bench", "-sweep", "clients=1", "-plot", "a.png"}, 2, "want a FILE.svg"},
		{[]string{"bench", "-distribution", "pareto"}, 2, `-distribution "pareto"`},
		{[]string{"bench", "-workloads", "e", "-ordered=false"}, 2, "needs the ordered index"},
		{[]string{"bench", "-dir", dir}, 2, "holds a store"},
		{[]string{"bench", "extra"}, 2, "want no arguments"},
		{[]string{"bench", "-segment", "64MiB", "-device-size", "256MiB", "-workers", "2"}, 2,
			"-device-size 268435456 holds 4 segments of 67108864 bytes; 2 workers need at least 7"},
		{[]string{"put", "-dir", filepath.Join(base, "tiny"), "-segment", "1MiB", "-device-size", "4MiB", "-workers", "1", "k", "v"}, 2,
			"-device-size at least 5242880"},
	}
	if !usingStandIn {
		cases = append(cases, struct {
			args []string
			code int
			msg  string
		}{[]string{"get", "-dir", foreign, "k"}, 1, "pmkv get: "})
	}
	// bench's temporary stores go to a directory of this test's, so that
	// another pmkv on the machine cannot make the check below fail.
	root := structtest.TempShm(t)
	defer func(f func() string) { benchTempRoot = f }(benchTempRoot)
	benchTempRoot = func() string { return root }
	before, _ := filepath.Glob(filepath.Join(root, "pmkv-bench-*"))
	var transcript strings.Builder
	for _, c := range cases {
		code, stdout, msg := pmkv(t, c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, msg)
		if c.code == 0 {
			require.Contains(t, stdout+msg, c.msg, "%v", c.args)
		} else {
			require.Contains(t, msg, c.msg, "%v", c.args)
			fmt.Fprintf(&transcript, "$ pmkv %s\n%s(exit %d)\n\n", showArgs(c.args), msg, code)
		}
		require.NotContains(t, msg, "panic", "%v", c.args)
		if c.code == 2 {
			require.Contains(t, msg, "Run 'pmkv", "%v", c.args)
			require.Equal(t, 2, strings.Count(msg, "\n"), "%v: %q", c.args, msg)
		}
		require.NoDirExists(t, missing, "%v", c.args)
	}
	structtest.GoldenText(t, "usage-errors", strings.ReplaceAll(transcript.String(), base, "$BASE"))
	after, _ := filepath.Glob(filepath.Join(root, "pmkv-bench-*"))
	require.Equal(t, before, after, "temporary bench stores left")
}

// showArgs is a command line as a transcript shows it: long arguments
// abbreviated, empty ones quoted.
func showArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case len(a) > 60:
			out[i] = fmt.Sprintf("<%d bytes>", len(a))
		case a == "" || strings.ContainsAny(a, " \t\n\"'"):
			out[i] = strconv.Quote(a)
		default:
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}
