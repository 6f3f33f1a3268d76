package main

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// onTmpfs reports whether dir (or its nearest existing parent) is on
// tmpfs, where the PMem path is the one braid benchmarks (nothing there
// survives a reboot anyway).
func onTmpfs(dir string) bool {
	for {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err == nil {
			return st.Type == unix.TMPFS_MAGIC
		}
		p := filepath.Dir(dir)
		if p == dir {
			return false
		}
		dir = p
	}
}
