package sortio

import (
	"sync"

	"golang.org/x/sys/unix"
)

// The sorter's Linux calls: the machine's memory, huge pages for its
// buffers, and populating (allocating) the pages of a sparse tmpfs file
// before storing to them. os_other.go has the portable fallbacks.

// PhysicalMemory is the machine's RAM in bytes (0 if unknown).
func PhysicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		return int64(si.Totalram) * int64(max(si.Unit, 1))
	}
	return 0
}

// AdviseHuge asks for transparent huge pages for an anonymous buffer.
func AdviseHuge(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }

var (
	populateOnce sync.Once
	populateOK   bool
)

// CanPopulate reports whether madvise(MADV_POPULATE_WRITE) works here
// (Linux 5.14 and later).
func CanPopulate() bool {
	populateOnce.Do(func() {
		m, err := unix.Mmap(-1, 0, pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return
		}
		populateOK = unix.Madvise(m, unix.MADV_POPULATE_WRITE) == nil
		_ = unix.Munmap(m)
	})
	return populateOK
}

func DirOnTmpfs(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	t := uint32(st.Type)
	return t == unix.TMPFS_MAGIC || t == unix.RAMFS_MAGIC
}

// Populate maps (and, in a sparse file, allocates) the pages of b.
func Populate(b []byte) error {
	for {
		err := unix.Madvise(b, unix.MADV_POPULATE_WRITE)
		if err != unix.EINTR {
			return err
		}
	}
}
