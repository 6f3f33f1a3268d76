package sortio

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// MaxPool bounds every pool size (sort.MaxPool).
const MaxPool = 1024

// maxFileSize is the largest file size (an int64 offset).
const maxFileSize = 1<<63 - 1

// RandSuffix is a suffix for a temporary file's name: the process id and
// random hex.
func RandSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// SyncDir makes the entries of directory dir durable (fsync).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e2 := d.Close(); err == nil {
		err = e2
	}
	return err
}

// FreeSpace returns the bytes available to an unprivileged writer in the
// file system holding dir.
func FreeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("sort: free space of %s: %w", dir, err)
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	if free > maxFileSize {
		free = maxFileSize
	}
	return int64(free), nil
}
