//go:build linux

package numa

import "golang.org/x/sys/unix"

// deviceOf returns the device number that holds path (st_dev), or the
// device itself for a character device (st_rdev, a DAX device).
func deviceOf(path string) (major, minor uint32, char bool, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, false, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFCHR {
		return unix.Major(st.Rdev), unix.Minor(st.Rdev), true, nil
	}
	return unix.Major(st.Dev), unix.Minor(st.Dev), false, nil
}
