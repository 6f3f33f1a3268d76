//go:build linux

package persist_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// Preallocation is what keeps a full disk from becoming a SIGBUS: by
// default every block of the file is allocated at Map; Sparse allocates
// none.
func TestPreallocAndSparse(t *testing.T) {
	dir := structtest.TempShm(t)
	const size = 1 << 20
	blocks := func(path string) int64 {
		st, err := os.Stat(path)
		require.NoError(t, err)
		return st.Sys().(*syscall.Stat_t).Blocks * 512
	}
	full := filepath.Join(dir, "full.pm")
	r := mustMap(t, full, &persist.Options{Size: size, Create: true, NoPrefault: true})
	require.True(t, r.Info().Prealloc)
	require.GreaterOrEqual(t, blocks(full), int64(size))
	require.NoError(t, r.Grow(2*size))
	require.GreaterOrEqual(t, blocks(full), int64(2*size), "Grow preallocates the new part")

	sparse := filepath.Join(dir, "sparse.pm")
	s := mustMap(t, sparse, &persist.Options{Size: size, Create: true, Sparse: true, NoPrefault: true})
	require.False(t, s.Info().Prealloc)
	require.Less(t, blocks(sparse), int64(size))
	s.Bytes()[size-1] = 1 // allocates one page on a store
	require.NoError(t, s.Persist(s.Bytes()[size-1:]))
}

// readGuarded reads b[i] with faults turned into panics, and the panic
// into an error: the recipe of Map's documentation for files that another
// program may truncate under the mapping.
func readGuarded(b []byte, i int) (v byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		switch p := recover().(type) {
		case nil:
		case runtime.Error:
			err = fmt.Errorf("reading offset %d: %w", i, p)
		default:
			panic(p)
		}
	}()
	return b[i], nil
}

func TestTruncatedFileFaultBecomesError(t *testing.T) {
	path := filepath.Join(structtest.TempShm(t), "shrunk.pm")
	r := mustMap(t, path, &persist.Options{Size: 4 * 4096, Create: true})
	r.Bytes()[3*4096] = 9
	v, err := readGuarded(r.Bytes(), 3*4096)
	require.NoError(t, err)
	require.Equal(t, byte(9), v)

	require.NoError(t, os.Truncate(path, 4096)) // another program shrinks the file
	_, err = readGuarded(r.Bytes(), 3*4096)
	require.Error(t, err, "a store or load past the end of the file faults")
	var re runtime.Error
	require.True(t, errors.As(err, &re))
	t.Log(err)
	v, err = readGuarded(r.Bytes(), 100)
	require.NoError(t, err, "the part still in the file reads as before")
	require.Equal(t, byte(0), v)
}
