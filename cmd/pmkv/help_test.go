package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/kv"
)

// TestHelpGolden pins pmkv -h and every command's -h (testdata/help/*.golden;
// go test -run TestHelpGolden -update rewrites them): help goes to stdout,
// and pmkv help CMD prints what pmkv CMD -h does.
func TestHelpGolden(t *testing.T) {
	code, stdout, stderr := pmkv(t, "-h")
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
	structtest.GoldenText(t, "help/pmkv", stdout)
	var sf storeFlags
	for _, c := range commands(&sf) {
		code, stdout, stderr := pmkv(t, c.Name, "-h")
		require.Equal(t, 0, code, c.Name)
		require.Empty(t, stderr, c.Name)
		structtest.GoldenText(t, "help/"+c.Name, stdout)
		code, again, stderr := pmkv(t, "help", c.Name)
		require.Equal(t, 0, code, c.Name)
		require.Empty(t, stderr, c.Name)
		require.Equal(t, stdout, again, "pmkv help %s", c.Name)
	}
}

// TestCompletion: the shell completion completes commands and flags, the
// store flags (persistent) with each command's own.
func TestCompletion(t *testing.T) {
	code, stdout, _ := pmkv(t, "__complete", "sc")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "scan\t")
	code, stdout, _ = pmkv(t, "__complete", "scan", "--")
	require.Equal(t, 0, code)
	for _, f := range []string{"--dir\t", "--n\t", "--segment\t", "--progress\t"} {
		require.Contains(t, stdout, f)
	}
	require.NotContains(t, stdout, "--json")
	code, stdout, _ = pmkv(t, "completion", "bash")
	require.Equal(t, 0, code)
	require.True(t, strings.Contains(stdout, "__start_pmkv"), "a bash completion script")
}

// TestPanicIsInternal: a panic in a command (here the store's open) is
// exit status 3 with its stack, not the runtime's 2 (bad usage).
func TestPanicIsInternal(t *testing.T) {
	defer func(f func(*kv.Options) (store, error)) { openStore = f }(openStore)
	openStore = func(*kv.Options) (store, error) { panic("a bug") }
	code, _, stderr := pmkv(t, "put", "-dir", t.TempDir(), "k", "v")
	require.Equal(t, 3, code, stderr)
	require.Contains(t, stderr, "pmkv: internal error (a bug in pmkv; please report it): a bug")
}
