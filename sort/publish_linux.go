package sort

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames tmp to path unless path exists (EEXIST then):
// renameat2(RENAME_NOREPLACE), atomically; where the file system does not
// support it, a hard link and an unlink (which fails the same way on an
// existing path).
func renameNoReplace(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkRename(tmp, path)
	}
	return err
}
