package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// snapshot is every file under the store's directories: name -> bytes.
func snapshot(t *testing.T, o *Options) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, dir := range append(append([]string{}, o.Devices...), o.CheckpointDir) {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				m[p+"/"] = ""
				return nil
			}
			b, err := os.ReadFile(p)
			m[p] = string(b)
			return err
		}))
	}
	return m
}

// TestReadOnly: a read-only open reads everything a read-write one would
// and changes no byte of any file (no start-up GC although overwritten
// keys leave it work, no checkpoint at Close, no tail repair, nothing
// created); every write is ErrReadOnly.
func TestReadOnly(t *testing.T) {
	o := testOptions(t, 2)
	o.NoStartupGC = true
	s := mustOpen(t, o)
	for round := range 3 { // overwrites: garbage a start-up GC would clean
		for i := range 400 {
			require.NoError(t, s.Put(fmt.Appendf(nil, "key%04d", i), fmt.Appendf(nil, "value %d.%d", i, round)))
		}
	}
	require.NoError(t, s.Delete([]byte("key0007")))
	require.NoError(t, s.Close())
	before := snapshot(t, o)

	ro := *o
	ro.NoStartupGC, ro.ReadOnly, ro.OrderedIndex = false, true, true
	r := mustOpen(t, &ro)
	v, err := r.Get([]byte("key0042"))
	require.NoError(t, err)
	require.Equal(t, "value 42.2", string(v))
	_, err = r.Get([]byte("key0007"))
	require.ErrorIs(t, err, ErrNotFound)
	n := 0
	require.NoError(t, r.Scan(nil, nil, func(k, v []byte) bool { n++; return true }))
	require.Equal(t, 399, n)
	require.NoError(t, r.Check())
	require.Equal(t, int64(399), r.Stats().Keys)
	require.Zero(t, r.Recovery().GC.Moved, "no start-up GC")
	require.ErrorIs(t, r.Put([]byte("k"), []byte("v")), ErrReadOnly)
	require.ErrorIs(t, r.Delete([]byte("key0001")), ErrReadOnly)
	var b Batch
	b.Put([]byte("k"), []byte("v"))
	require.ErrorIs(t, r.Apply(&b), ErrReadOnly)
	require.ErrorIs(t, r.PutAsync([]byte("k"), []byte("v"), func(Token, error) {}), ErrReadOnly)
	_, err = r.GC()
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, r.Checkpoint(), ErrReadOnly)
	require.True(t, errors.Is(ErrReadOnly, ErrReadOnly))

	// Readers share the store; a writer is refused beside them, and a
	// reader beside a writer.
	r2 := mustOpen(t, &ro)
	_, err = Open(o)
	require.ErrorIs(t, err, ErrBusy)
	require.NoError(t, r2.Close())
	require.NoError(t, r.Close())
	require.Equal(t, before, snapshot(t, o), "a read-only open changed the store's files")

	w := mustOpen(t, o)
	_, err = Open(&ro)
	require.ErrorIs(t, err, ErrBusy)
	require.NoError(t, w.Close())
}

// TestReadOnlyNoStore: a read-only open of devices without a store fails
// and creates nothing.
func TestReadOnlyNoStore(t *testing.T) {
	o := testOptions(t, 1)
	require.NoError(t, os.Mkdir(o.CheckpointDir, 0o755))
	before := snapshot(t, o)
	o.ReadOnly = true
	_, err := Open(o)
	require.Error(t, err)
	require.Equal(t, before, snapshot(t, o))
}

// TestLockDenied: a lock file this process may not open is reported as a
// permission problem, not an invalid argument.
func TestLockDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root opens any file")
	}
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	require.NoError(t, s.Close())
	lock := filepath.Join(o.Devices[0], "LOCK")
	require.NoError(t, os.Chmod(lock, 0))
	_, err := Open(o)
	require.ErrorIs(t, err, fs.ErrPermission)
	require.NotErrorIs(t, err, ErrInvalid)
}
