//go:build unix

package kv

import "golang.org/x/sys/unix"

// free is the space an unprivileged writer may use on the device's file
// system.
func (d *fileDevice) free() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
