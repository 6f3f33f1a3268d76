//go:build linux

package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeSys writes files (path relative to root: content) and symlinks
// (path: "->target") under a fresh root: a fake sysfs.
func fakeSys(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if len(content) > 2 && content[:2] == "->" {
			require.NoError(t, os.Symlink(content[2:], p))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

// The kernel's badblocks lists, read from a fake sysfs (there is no PMem
// device on the test machine): a whole disk, a partition (its disk's
// list, shifted by its start, what lies before it dropped), a device with
// no list, a malformed list.
func TestDeviceBadBlocks(t *testing.T) {
	root := fakeSys(t, map[string]string{
		"devices/nd/pmem0/badblocks":         "8 8\n100 1\n",
		"dev/block/259:0":                    "->../../devices/nd/pmem0",
		"devices/nd/pmem1/badblocks":         "2048 16\n10 2\n4000 8\n",
		"devices/nd/pmem1/pmem1p1/partition": "1\n",
		"devices/nd/pmem1/pmem1p1/start":     "2048\n",
		"dev/block/259:2":                    "->../../devices/nd/pmem1/pmem1p1",
		"devices/virtual/block/loop0/size":   "0\n",
		"dev/block/7:0":                      "->../../devices/virtual/block/loop0",
		"devices/nd/pmem2/badblocks":         "8 eight\n",
		"dev/block/259:3":                    "->../../devices/nd/pmem2",
	})
	bad, err := deviceBadBlocks(root, unix.Mkdev(259, 0))
	require.NoError(t, err)
	require.Equal(t, []Range{{4096, 8192}, {51200, 51712}}, bad)

	bad, err = deviceBadBlocks(root, unix.Mkdev(259, 2))
	require.NoError(t, err)
	require.Equal(t, []Range{{0, 8192}, {(4000 - 2048) * 512, (4008 - 2048) * 512}}, bad)

	bad, err = deviceBadBlocks(root, unix.Mkdev(7, 0))
	require.NoError(t, err)
	require.Empty(t, bad, "no badblocks list: none known")
	bad, err = deviceBadBlocks(root, unix.Mkdev(8, 1))
	require.NoError(t, err)
	require.Empty(t, bad, "a device sysfs does not list")

	_, err = deviceBadBlocks(root, unix.Mkdev(259, 3))
	require.ErrorContains(t, err, "badblocks line 1: \"8 eight\" is not 'SECTOR COUNT'")
}

// Bad device ranges are placed in the file through its extents, clipped
// to the mapped size.
func TestPlaceBad(t *testing.T) {
	ext := []extent{{0, 1 << 20, 64 << 10}, {64 << 10, 4 << 20, 64 << 10}}
	bad := []Range{{1<<20 + 4096, 1<<20 + 8192}, {4 << 20, 4<<20 + 512}, {4<<20 + 60<<10, 5 << 20}, {9 << 20, 10 << 20}}
	require.Equal(t, []Range{{4096, 8192}, {64 << 10, 64<<10 + 512}, {124 << 10, 128 << 10}}, placeBad(bad, ext, 1<<20))
	require.Equal(t, []Range{{4096, 8192}, {64 << 10, 64<<10 + 512}, {124 << 10, 126 << 10}}, placeBad(bad, ext, 126<<10))
	require.Empty(t, placeBad(nil, ext, 1<<20))
}

// The whole chain on a real file: its extents from FIEMAP (ext4 here, as
// on a DAX file system), its device's number from stat, and a fake
// badblocks list for that device naming the first sector of its first
// extent and of its last.
func TestFileBadRanges(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	const size = 256 << 10
	_, err = f.Write(make([]byte, size))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	ext, err := fileExtents(int(f.Fd()), size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTTY) {
		t.Skipf("the file system of %s has no FIEMAP: %v", f.Name(), err)
	}
	require.NoError(t, err)
	require.NotEmpty(t, ext)
	var covered int64
	for _, e := range ext {
		covered += e.length
	}
	require.GreaterOrEqual(t, covered, int64(size), "the extents cover the file")

	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))
	first, last := ext[0], ext[len(ext)-1]
	end := min(last.logical+last.length, size) // the file's last sector, where the last extent passes its end
	list := fmt.Sprintf("%d 1\n%d 1\n", first.physical/512, (last.physical+end-512-last.logical)/512)
	dev := uint64(st.Dev)
	root := fakeSys(t, map[string]string{
		"devices/disk/badblocks": list,
		fmt.Sprintf("dev/block/%d:%d", unix.Major(dev), unix.Minor(dev)): "->../../devices/disk",
	})
	got, err := fileBadRanges(root, f, size)
	require.NoError(t, err)
	want := []Range{{first.logical, first.logical + 512}}
	if end-512 > first.logical+512 {
		want = append(want, Range{end - 512, end})
	}
	require.Equal(t, want, got)

	got, err = fileBadRanges(t.TempDir(), f, size)
	require.NoError(t, err)
	require.Empty(t, got, "no sysfs entry: none known")
}
