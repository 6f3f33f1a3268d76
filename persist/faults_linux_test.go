//go:build linux

package persist_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// failSyncs returns Faults that make the k-th and every later sync of
// the region mapped with them fail with EIO, and the count of the syncs
// they were asked about. The hook fails t if it is asked about a region
// other than the one it was given to (*r, once it is mapped).
func failSyncs(t *testing.T, k int, r **persist.Region) (*persist.Faults, *int) {
	calls := new(int)
	return &persist.Faults{Sync: func(x *persist.Region, off, n int) error {
		if x != *r {
			t.Errorf("the Sync hook of one region was asked about another")
		}
		*calls++
		if *calls >= k {
			return syscall.EIO
		}
		return nil
	}}, calls
}

// A failed msync is returned, and every later durability call of the
// region returns the same error without syncing again; reads go on, and
// other regions are not touched.
func TestSyncFailureIsFinal(t *testing.T) {
	dir := structtest.TempShm(t)
	var r *persist.Region
	faults, calls := failSyncs(t, 3, &r)
	r = mustMap(t, filepath.Join(dir, "a.pm"), &persist.Options{Size: 4 * page, Create: true, Faults: faults})
	other := mustMap(t, filepath.Join(dir, "b.pm"), &persist.Options{Size: 4 * page, Create: true})
	require.Equal(t, persist.ModeMsync, r.Info().Mode, "a tmpfs file not forced is made durable with msync")

	b := r.Bytes()
	b[0], b[page] = 1, 2
	require.NoError(t, r.Persist(b[:8]))
	require.NoError(t, r.Flush(b[page:page+8]))
	require.NoError(t, r.Drain())
	b[2*page] = 3
	err := r.Persist(b[2*page : 2*page+8])
	var se *persist.SyncError
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, persist.ErrSyncFailed)
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, [2]int{2 * page, 3 * page}, [2]int{se.Lo, se.Hi})
	require.Contains(t, err.Error(), "persist: sync failed: msync of bytes 8192 to 12288 of "+r.Info().Path+": input/output error (the region has failed")
	require.Equal(t, 3, *calls)

	for name, call := range map[string]func() error{
		"Persist":       func() error { return r.Persist(b[:8]) },
		"Persist empty": func() error { return r.Persist(nil) },
		"Flush":         func() error { return r.Flush(b[:8]) },
		"Drain":         r.Drain,
		"Copy":          func() error { return r.Copy(b[:8], []byte("12345678"), 0) },
		"Set":           func() error { return r.Set(b[:8], 1, 0) },
		"Sync":          r.Sync,
	} {
		require.Same(t, se, call(), "%s after the failure", name)
	}
	require.Same(t, se, r.Failed())
	require.Equal(t, 3, *calls, "no sync is tried again")
	require.Equal(t, byte(3), b[2*page], "reads go on")

	require.NoError(t, other.Failed())
	require.NoError(t, other.Persist(other.Bytes()[:8]), "another region is not failed")
	require.NoError(t, other.Sync())
}

// A simulated region in msync mode fails the same way, and the failed
// sync does not reach its domain: the pages were not written back.
func TestSyncFailureSimulated(t *testing.T) {
	d := &recorder{}
	mem := make([]byte, 2*page)
	var r *persist.Region
	faults, _ := failSyncs(t, 2, &r)
	r, err := persist.NewSimulated(mem, persist.ModeMsync, d, &persist.Options{Faults: faults})
	require.NoError(t, err)
	require.NoError(t, r.Persist(mem[:8]))
	require.Equal(t, []string{"flush", "0000", "4096", "fence"}, d.ops)
	d.ops = nil
	err = r.Persist(mem[page : page+8])
	require.ErrorIs(t, err, persist.ErrSyncFailed)
	require.ErrorIs(t, r.Sync(), persist.ErrSyncFailed)
	require.ErrorIs(t, r.Drain(), persist.ErrSyncFailed)
	require.Empty(t, d.ops, "nothing was written back")
}

// A full device is ErrFull (and ENOSPC) at Map and Grow: a file Map
// created is removed, a Grow leaves the region and the file as they were.
func TestFullDeviceInjected(t *testing.T) {
	dir := structtest.TempShm(t)
	full := filepath.Join(dir, "full.pm")
	faults := &persist.Faults{Alloc: func(path string, off, n int64) error {
		if off+n > 2*page {
			return syscall.ENOSPC
		}
		return nil
	}}
	r := mustMap(t, filepath.Join(dir, "grow.pm"), &persist.Options{Size: 2 * page, Create: true, ForcePMem: true, Faults: faults})
	r.Bytes()[100] = 7

	_, err := persist.Map(full, &persist.Options{Size: 4 * page, Create: true, Faults: faults})
	require.ErrorIs(t, err, persist.ErrFull)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, "persist: no space left on the device: cannot preallocate 16384 bytes at offset 0 of "+full+": no space left on device", err.Error())
	_, serr := os.Stat(full)
	require.ErrorIs(t, serr, os.ErrNotExist)

	err = r.Grow(8 * page)
	require.ErrorIs(t, err, persist.ErrFull)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 2*page, r.Size())
	require.Equal(t, byte(7), r.Bytes()[100])
	require.NoError(t, r.Persist(r.Bytes()[:128]), "the region still works")
	st, err := os.Stat(r.Info().Path)
	require.NoError(t, err)
	require.Equal(t, int64(2*page), st.Size())
}

// A real full file system: a tmpfs of 64 KiB mounted for the test (root
// only; skipped elsewhere, where TestFullDeviceInjected covers the same).
func TestFullDeviceTmpfs(t *testing.T) {
	dir := mountTinyTmpfs(t, 64<<10)
	r := mustMap(t, filepath.Join(dir, "a.pm"), &persist.Options{Size: 32 << 10, Create: true})
	copy(r.Bytes(), "acknowledged")
	require.NoError(t, r.Persist(r.Bytes()[:12]))
	_, err := persist.Map(filepath.Join(dir, "b.pm"), &persist.Options{Size: 1 << 20, Create: true})
	require.ErrorIs(t, err, persist.ErrFull)
	require.ErrorIs(t, err, syscall.ENOSPC)
	err = r.Grow(1 << 20)
	require.ErrorIs(t, err, persist.ErrFull)
	require.Equal(t, "acknowledged", string(r.Bytes()[:12]))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the failed create left nothing behind")
}

func mountTinyTmpfs(t *testing.T, size int) string {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// The Mapped hook sees the region Map makes with it: a test poisons a
// file a structure maps by itself. A region mapped without it is not
// poisoned, nor is a file mapped again without it.
func TestMappedHookPoisons(t *testing.T) {
	dir := structtest.TempShm(t)
	path := filepath.Join(dir, "p.pm")
	var seen []string
	faults := &persist.Faults{Mapped: func(r *persist.Region) {
		seen = append(seen, r.Info().Path)
		require.NoError(t, r.Poison(page, 1))
	}}
	r := mustMap(t, path, &persist.Options{Size: 2 * page, Create: true, Faults: faults})
	clean := mustMap(t, filepath.Join(dir, "q.pm"), &persist.Options{Size: 2 * page, Create: true})
	require.Equal(t, []string{path}, seen)
	require.Empty(t, clean.Poisoned())
	_, err := load(clean, page)
	require.NoError(t, err)
	require.Equal(t, []persist.Range{{Lo: page, Hi: 2 * page}}, r.Poisoned())
	_, err = load(r, page)
	require.ErrorIs(t, err, persist.ErrMedia)
	var me *persist.MediaError
	require.ErrorAs(t, err, &me)
	require.Equal(t, path, me.Path)
}
