//go:build linux

package crash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cowStore keeps media in a memfd; each image is a private mapping of it,
// so the kernel copies only the pages the image's recovery writes.
type cowStore struct {
	fd    int
	media []byte
	live  []byte   // the workload's memory: a private mapping of the memfd too
	free  [][]byte // mappings handed back, their private pages dropped
}

// newStore makes the memory of a region of size bytes: the store its
// crash images come from, the live and media images, and (for a large
// region) a tracker of the pages of live that were written.
func newStore(size int) (imageStore, []byte, []byte, dirtyTracker, error) {
	if forceStore == storeCopy || forceStore == storeBySize && size < cowMin {
		s, live, media := newCopyStore(size)
		return s, live, media, nil, nil
	}
	fd, err := unix.MemfdCreate("braid-crash-media", unix.MFD_CLOEXEC)
	if err != nil {
		s, live, media := newCopyStore(size)
		return s, live, media, nil, nil
	}
	s := &cowStore{fd: fd}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		s.close()
		return nil, nil, nil, nil, fmt.Errorf("crash: size media memfd: %w", err)
	}
	if s.media, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		s.close()
		return nil, nil, nil, nil, fmt.Errorf("crash: map media: %w", err)
	}
	// live is a private mapping of media: a page the workload never
	// wrote is media's own page, so it cannot differ from media, and the
	// pages it wrote are the private (anonymous) ones, which the kernel
	// lists. Media changes only where live was written (captures come
	// from live), so a shared page never shows a change live did not make.
	if s.live, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE); err != nil {
		s.close()
		return nil, nil, nil, nil, fmt.Errorf("crash: map live memory: %w", err)
	}
	if forceStore == storeCOW {
		return s, s.live, s.media, nil, nil
	}
	return s, s.live, s.media, newPageTracker(s.live), nil
}

// forceStore chooses the kind of store in tests.
var forceStore = storeBySize

const (
	storeBySize     = iota
	storeCopy       // copies, whatever the size
	storeCOW        // copy-on-write images, live compared whole
	storeCOWTracked // copy-on-write images and page tracking
)

func (s *cowStore) get() ([]byte, error) {
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b, nil
	}
	b, err := unix.Mmap(s.fd, 0, len(s.media), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("crash: map crash image: %w", err)
	}
	return b, nil
}

// put keeps the mapping for the next image: MADV_DONTNEED drops its
// private pages, so it shows the media file again.
func (s *cowStore) put(b []byte) {
	if len(s.free) < 4 && unix.Madvise(b, unix.MADV_DONTNEED) == nil {
		s.free = append(s.free, b)
		return
	}
	unix.Munmap(b)
}

func (s *cowStore) close() {
	for _, b := range s.free {
		unix.Munmap(b)
	}
	s.free = nil
	for _, b := range []*[]byte{&s.live, &s.media} {
		if *b != nil {
			unix.Munmap(*b)
			*b = nil
		}
	}
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}

// pageTracker lists the pages of a private file mapping that were
// written, from the kernel's page tables (/proc/self/pagemap): a written
// page is an anonymous copy, present or swapped out. It uses the
// PAGEMAP_SCAN ioctl (Linux 6.7), which returns only those pages, else
// reads one pagemap entry per page.
type pageTracker struct {
	pm   *os.File
	live []byte
	scan bool
	vec  []pageRegion
	buf  []byte
}

// The PAGEMAP_SCAN interface (include/uapi/linux/fs.h).
type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages   uint64
	categoryInverted, categoryMask, categoryAnyof, returnMask uint64
}

type pageRegion struct{ start, end, categories uint64 }

const (
	pageIsFile    = 1 << 2
	pageIsPresent = 1 << 3
	pageIsSwapped = 1 << 4
	// _IOWR('f', 16, struct pm_scan_arg)
	pagemapScan = 3<<30 | uint(unsafe.Sizeof(pmScanArg{}))<<16 | 'f'<<8 | 16

	pmPresent = 1 << 63
	pmSwapped = 1 << 62
	pmFile    = 1 << 61
)

// newPageTracker returns nil when the kernel does not tell (no /proc, a
// kernel without these bits): regions are then compared whole.
func newPageTracker(live []byte) dirtyTracker {
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil
	}
	t := &pageTracker{pm: pm, live: live, scan: true, vec: make([]pageRegion, 512)}
	// Prove the tracker on this kernel: a written page must be listed,
	// and once dropped (MADV_DONTNEED) no longer.
	probe := live[:pageSize]
	probe[0] ^= 1 // a private copy of the page; dropped below
	var listed, again []int
	if t.written(func(lo, hi int) { listed = append(listed, lo, hi) }) != nil {
		t.scan = false
		listed = nil
		if t.written(func(lo, hi int) { listed = append(listed, lo, hi) }) != nil {
			pm.Close()
			return nil
		}
	}
	unix.Madvise(probe, unix.MADV_DONTNEED)
	if len(listed) != 2 || listed[0] != 0 || listed[1] != pageSize ||
		t.written(func(lo, hi int) { again = append(again, lo, hi) }) != nil || len(again) != 0 {
		pm.Close()
		return nil
	}
	return t
}

func (t *pageTracker) written(fn func(lo, hi int)) error {
	if t.scan {
		return t.scanWritten(fn)
	}
	return t.readWritten(fn)
}

func (t *pageTracker) scanWritten(fn func(lo, hi int)) error {
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(t.live))))
	start, end := base, base+uint64(len(t.live))
	var runs []pageRegion
	for start < end {
		a := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: start, end: end,
			vec: uint64(uintptr(unsafe.Pointer(&t.vec[0]))), vecLen: uint64(len(t.vec)),
			// not a file page, and present or swapped out
			categoryInverted: pageIsFile, categoryMask: pageIsFile,
			categoryAnyof: pageIsPresent | pageIsSwapped, returnMask: pageIsPresent | pageIsSwapped,
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, t.pm.Fd(), uintptr(pagemapScan), uintptr(unsafe.Pointer(&a)))
		if errno != 0 {
			return errno
		}
		runs = append(runs, t.vec[:n]...)
		if a.walkEnd <= start || a.walkEnd > end {
			if a.walkEnd < end {
				return errors.New("crash: PAGEMAP_SCAN made no progress")
			}
			break
		}
		start = a.walkEnd
	}
	// Report after the whole walk: fn may not see a partial answer.
	lo, hi := -1, -1
	for _, r := range runs {
		a, b := int(r.start-base), int(r.end-base)
		if a == hi {
			hi = b
			continue
		}
		if lo >= 0 {
			fn(lo, hi)
		}
		lo, hi = a, b
	}
	if lo >= 0 {
		fn(lo, hi)
	}
	return nil
}

func (t *pageTracker) readWritten(fn func(lo, hi int)) error {
	pages := len(t.live) / pageSize
	first := int64(uintptr(unsafe.Pointer(unsafe.SliceData(t.live))) / pageSize)
	if t.buf == nil {
		t.buf = make([]byte, 8*min(pages, 8192))
	}
	var runs [][2]int
	for p := 0; p < pages; {
		n := min(pages-p, len(t.buf)/8)
		if _, err := t.pm.ReadAt(t.buf[:8*n], 8*(first+int64(p))); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			e := binary.LittleEndian.Uint64(t.buf[8*i:])
			if e&pmPresent != 0 && e&pmFile == 0 || e&pmSwapped != 0 {
				off := (p + i) * pageSize
				if k := len(runs); k > 0 && runs[k-1][1] == off {
					runs[k-1][1] = off + pageSize
				} else {
					runs = append(runs, [2]int{off, off + pageSize})
				}
			}
		}
		p += n
	}
	for _, r := range runs {
		fn(r[0], r[1])
	}
	return nil
}

func (t *pageTracker) close() { t.pm.Close() }
