//go:build !unix

package kv

import "os"

// lockFile opens path; other systems get no cross-process lock.
func lockFile(path string, shared bool) (*os.File, error) {
	flag := os.O_RDWR | os.O_CREATE
	if shared {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, lockErr(path, err)
	}
	return f, nil
}

func unlockFile(f *os.File) error { return f.Close() }
