package sortbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/sort/record"
	"github.com/stretchr/testify/require"
)

// Validate of a file truncated under its mapping: "PATH changed size
// during validation".
func TestValidateInputShrinks(t *testing.T) {
	dir := t.TempDir()
	klv := record.Format{KeySize: 10, KLV: true}
	for _, f := range []record.Format{record.Gensort, klv} {
		in, _ := writeInput(t, dir, GenOptions{Count: 20000, Format: f, MaxValue: 150})
		validateAfterMap = func(path string) { require.NoError(t, os.Truncate(path, 5000)) }
		_, err := Validate(context.Background(), in, ValidateOptions{Format: f})
		validateAfterMap = nil
		require.ErrorIs(t, err, ErrChanged, "%s", f)
		require.Contains(t, err.Error(), "sort: "+in+" changed size during validation: it was ")
		require.Contains(t, err.Error(), " bytes when mapped, 5000 now")
		require.False(t, errors.Is(err, ErrBadFormat))
	}
}

// writeInput writes the records o describes to dir/in.
func writeInput(t testing.TB, dir string, o GenOptions) (string, []byte) {
	t.Helper()
	b, _, err := GenerateBytes(o)
	require.NoError(t, err)
	p := filepath.Join(dir, "in")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p, b
}
