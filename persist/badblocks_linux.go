//go:build linux

package persist

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysRoot is where Map reads the kernel's view of block devices (sysfs);
// tests point it at a fake tree.
var sysRoot = "/sys"

// sectorSize is the unit of the kernel's badblocks lists.
const sectorSize = 512

// fileBadRanges returns the ranges of the first size bytes of f that lie
// on bad blocks of the device holding it, as the kernel lists them: the
// device's sysfs badblocks (root/dev/block/MAJ:MIN; for a partition, its
// disk's list shifted by the partition's start), placed in the file by
// its extents (FIEMAP). It returns nil when the platform does not say (no
// badblocks list, a file system without FIEMAP) or lists none.
func fileBadRanges(root string, f *os.File, size int64) ([]Range, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("persist: stat %s: %w", f.Name(), err)
	}
	bad, err := deviceBadBlocks(root, uint64(st.Dev))
	if err != nil || len(bad) == 0 {
		return nil, err
	}
	ext, err := fileExtents(int(f.Fd()), size)
	if err != nil {
		return nil, fmt.Errorf("persist: %s: its device lists %d bad ranges, but its extents are unknown: %w", f.Name(), len(bad), err)
	}
	return placeBad(bad, ext, size), nil
}

// deviceBadBlocks reads the bad blocks of block device dev from sysfs
// under root, as byte ranges of that device (of the partition, when dev
// is one). No badblocks file is no bad blocks known.
func deviceBadBlocks(root string, dev uint64) ([]Range, error) {
	link := filepath.Join(root, "dev", "block", fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev)))
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return nil, nil // not a block device the kernel lists (tmpfs, NFS)
	}
	var start int64
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		s, err := os.ReadFile(filepath.Join(dir, "start"))
		if err != nil {
			return nil, fmt.Errorf("persist: partition %s: %w", dir, err)
		}
		if start, err = strconv.ParseInt(strings.TrimSpace(string(s)), 10, 64); err != nil || start < 0 {
			return nil, fmt.Errorf("persist: partition %s: start %q is not a sector number", dir, strings.TrimSpace(string(s)))
		}
		dir = filepath.Dir(dir) // the disk: badblocks is listed there
	}
	file, err := os.Open(filepath.Join(dir, "badblocks"))
	if err != nil {
		return nil, nil // this device does not list bad blocks
	}
	defer file.Close()
	return parseBadBlocks(file, file.Name(), start)
}

// parseBadBlocks reads a sysfs badblocks list ("SECTOR COUNT" lines of
// 512-byte sectors of the disk) as byte ranges from the sector start on
// (a partition's first sector), dropping what lies before it.
func parseBadBlocks(f *os.File, name string, start int64) ([]Range, error) {
	var out []Range
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		var sec, n int64
		var err error
		if len(fs) == 2 {
			if sec, err = strconv.ParseInt(fs[0], 10, 64); err == nil {
				n, err = strconv.ParseInt(fs[1], 10, 64)
			}
		}
		if len(fs) != 2 || err != nil || sec < 0 || n <= 0 || sec > (1<<53)/sectorSize || n > (1<<53)/sectorSize {
			return nil, fmt.Errorf("persist: %s line %d: %q is not 'SECTOR COUNT'", name, line, sc.Text())
		}
		lo, hi := (sec-start)*sectorSize, (sec+n-start)*sectorSize
		if hi <= 0 {
			continue
		}
		out = mergeRange(out, Range{max(lo, 0), hi})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("persist: read %s: %w", name, err)
	}
	return out, nil
}

// extent is a run of a file on its device: file bytes [logical,
// logical+length) are device bytes [physical, physical+length).
type extent struct{ logical, physical, length int64 }

// placeBad returns the file ranges, within size, of the device ranges
// bad, through the file's extents.
func placeBad(bad []Range, ext []extent, size int64) []Range {
	var out []Range
	for _, e := range ext {
		for _, b := range bad {
			lo, hi := max(b.Lo, e.physical), min(b.Hi, e.physical+e.length)
			if lo >= hi {
				continue
			}
			g := Range{e.logical + lo - e.physical, min(e.logical+hi-e.physical, size)}
			if g.Lo < g.Hi {
				out = mergeRange(out, g)
			}
		}
	}
	return out
}

// The FIEMAP interface (include/uapi/linux/fiemap.h).
type fiemapHead struct {
	start, length                        uint64
	flags, mapped, extentCount, reserved uint32
}

type fiemapExtent struct {
	logical, physical, length uint64
	reserved64                [2]uint64
	flags                     uint32
	reserved                  [3]uint32
}

const (
	fiemapFlagSync    = 1
	fiemapExtentLast  = 1
	fiemapExtentUnkn  = 2     // location not known yet
	fiemapExtentInlin = 0x200 // data inside the metadata
	// _IOWR('f', 11, struct fiemap)
	fsIocFiemap = 3<<30 | uint(unsafe.Sizeof(fiemapHead{}))<<16 | 'f'<<8 | 11
)

// fileExtents lists the extents of the first size bytes of the file fd
// with FIEMAP. An extent whose place is unknown or inline is left out:
// its bytes are on no device block.
func fileExtents(fd int, size int64) ([]extent, error) {
	const batch = 64
	buf := make([]byte, unsafe.Sizeof(fiemapHead{})+batch*unsafe.Sizeof(fiemapExtent{}))
	head := (*fiemapHead)(unsafe.Pointer(&buf[0]))
	exts := unsafe.Slice((*fiemapExtent)(unsafe.Pointer(&buf[unsafe.Sizeof(fiemapHead{})])), batch)
	var out []extent
	for pos := int64(0); pos < size; {
		*head = fiemapHead{start: uint64(pos), length: uint64(size - pos), flags: fiemapFlagSync, extentCount: batch}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(fsIocFiemap), uintptr(unsafe.Pointer(&buf[0]))); errno != 0 {
			return nil, fmt.Errorf("FIEMAP: %w", errno)
		}
		if head.mapped == 0 {
			break // a hole to the end
		}
		last := false
		for _, x := range exts[:head.mapped] {
			if x.flags&(fiemapExtentUnkn|fiemapExtentInlin) == 0 {
				out = append(out, extent{int64(x.logical), int64(x.physical), int64(x.length)})
			}
			pos = int64(x.logical + x.length)
			last = last || x.flags&fiemapExtentLast != 0
		}
		if last {
			break
		}
	}
	return out, nil
}
