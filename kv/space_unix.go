//go:build unix

package kv

import "golang.org/x/sys/unix"

// space is the space an unprivileged writer may use on the device's file
// system, and its size.
func (d *fileDevice) space() (free, total int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.dir, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), int64(st.Blocks) * int64(st.Bsize), nil
}
