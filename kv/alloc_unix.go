//go:build unix

package kv

import (
	"os"
	"path/filepath"
	"syscall"
)

// blocks is the bytes the segment files take on the file system.
func (d *fileDevice) blocks(segs []*segment) int64 {
	var n int64
	for _, g := range segs {
		if st, err := os.Stat(filepath.Join(d.dir, segName(g.idx))); err == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				n += int64(sys.Blocks) * 512
			}
		}
	}
	return n
}
