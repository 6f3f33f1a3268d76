package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// TestHelpGolden pins pmsort -h and every command's -h
// (testdata/help/*.golden; go test -run TestHelpGolden -update rewrites
// them), on stdout, and pmsort help CMD prints what pmsort CMD -h does.
func TestHelpGolden(t *testing.T) {
	code, stdout, stderr := pmsort(t, "-h")
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
	structtest.GoldenText(t, "help/pmsort", stdout)
	for _, c := range []string{"gen", "validate", "sort", "bench"} {
		code, stdout, stderr := pmsort(t, c, "-h")
		require.Equal(t, 0, code, c)
		require.Empty(t, stderr, c)
		structtest.GoldenText(t, "help/"+c, stdout)
		code, again, _ := pmsort(t, "help", c)
		require.Equal(t, 0, code, c)
		require.Equal(t, stdout, again, "pmsort help %s", c)
	}
}
