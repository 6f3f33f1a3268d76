//go:build !unix

package kv

import "os"

// lockFile opens path; other systems get no cross-process lock.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

func unlockFile(f *os.File) error { return f.Close() }
