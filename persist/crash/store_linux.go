//go:build linux

package crash

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// cowStore keeps media in a memfd; each image is a private mapping of it,
// so the kernel copies only the pages the image's recovery writes.
type cowStore struct {
	fd    int
	media []byte
}

func newStore(size int) (imageStore, []byte, []byte, error) {
	if size < cowMin {
		s, live, media := newCopyStore(size)
		return s, live, media, nil
	}
	fd, err := unix.MemfdCreate("braid-crash-media", unix.MFD_CLOEXEC)
	if err != nil {
		s, live, media := newCopyStore(size)
		return s, live, media, nil
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, nil, nil, fmt.Errorf("crash: size media memfd: %w", err)
	}
	media, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, nil, nil, fmt.Errorf("crash: map media: %w", err)
	}
	return &cowStore{fd: fd, media: media}, make([]byte, size), media, nil
}

func (s *cowStore) get() ([]byte, error) {
	b, err := unix.Mmap(s.fd, 0, len(s.media), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("crash: map crash image: %w", err)
	}
	return b, nil
}

func (s *cowStore) put(b []byte) { unix.Munmap(b) }

func (s *cowStore) close() {
	if s.media != nil {
		unix.Munmap(s.media)
		unix.Close(s.fd)
		s.media = nil
	}
}
