package sort

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/sort/sortbench"
	"github.com/stretchr/testify/require"
)

// An output that appears while the sort runs (a second sort to the same
// new output) is not replaced without Overwrite: ErrExists, its bytes
// untouched, nothing left behind. With Overwrite it is replaced.
func TestSortNeverReplacesUnlessOverwrite(t *testing.T) {
	dir := t.TempDir()
	in, inBytes := writeInput(t, dir, sortbench.GenOptions{Count: 2000})
	out := filepath.Join(dir, "out")
	for _, overwrite := range []bool{false, true} {
		s, err := NewSorter(&Options{Overwrite: overwrite})
		require.NoError(t, err)
		s.beforePublish = func(out string) { require.NoError(t, os.WriteFile(out, []byte("theirs"), 0o644)) }
		_, err = s.Sort(context.Background(), in, out)
		s.Close()
		if overwrite {
			require.NoError(t, err)
			requireSorted(t, Gensort, inBytes, out)
		} else {
			require.ErrorIs(t, err, ErrExists)
			require.Contains(t, err.Error(), "sort: output "+out+" appeared during the sort")
			b, _ := os.ReadFile(out)
			require.Equal(t, "theirs", string(b))
		}
		requireClean(t, dir)
		require.NoError(t, os.Remove(out))
	}
}

// linkRename, the fallback where renameat2 is not supported, does not
// replace either.
func TestLinkRename(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("new"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("old"), 0o644))
	require.ErrorIs(t, linkRename(a, b), os.ErrExist)
	got, _ := os.ReadFile(b)
	require.Equal(t, "old", string(got))
	require.NoError(t, os.Remove(b))
	require.NoError(t, linkRename(a, b))
	require.NoFileExists(t, a)
	got, _ = os.ReadFile(b)
	require.Equal(t, "new", string(got))
}

// Errors about a file name it once, after the package: no "sort: " in the
// middle of a message.
func TestErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	klv := Format{KeySize: 10, KLV: true}
	in, b := writeInput(t, dir, sortbench.GenOptions{Count: 100, Format: klv})
	require.NoError(t, os.WriteFile(in, b[:len(b)-1], 0o644))
	_, err := Sort(context.Background(), in, filepath.Join(dir, "out"), &Options{Format: klv})
	require.ErrorIs(t, err, ErrBadFormat)
	require.Regexp(t, `^sort: `+in+`: bad record format: truncated KLV record at offset \d+: \d+ bytes left, header needs 14$`, err.Error())
	_, err = sortbench.Validate(context.Background(), in, sortbench.ValidateOptions{Format: klv})
	require.ErrorIs(t, err, ErrBadFormat)
	require.Regexp(t, `^sort: `+in+`: bad record format: truncated KLV record`, err.Error())
	_, err = sortbench.Validate(context.Background(), filepath.Join(dir, "missing"), sortbench.ValidateOptions{})
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, "sort: "+filepath.Join(dir, "missing")+": no such file or directory", err.Error())
	_, err = Sort(context.Background(), filepath.Join(dir, "missing"), filepath.Join(dir, "out"), nil)
	require.Equal(t, "sort: "+filepath.Join(dir, "missing")+": no such file or directory", err.Error())
}
