//go:build unix

package kv

import (
	"os"
	"syscall"
)

// fullyAllocated reports whether every block of the file is allocated.
func fullyAllocated(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int64(sys.Blocks)*512 >= st.Size()
}
