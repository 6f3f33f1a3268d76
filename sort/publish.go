package sort

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/braid-pm/braid/sort/internal/sortio"
)

// publish gives the complete temporary file tmp its final name path. With
// replace it replaces what is there (rename); without, an output that
// appeared since the paths were checked (another sort to the same new
// output) is never replaced: ErrExists, and tmp is left for the caller to
// remove.
func publish(tmp, path string, replace bool) error {
	if replace {
		return os.Rename(tmp, path)
	}
	err := renameNoReplace(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		return &sortio.DetailError{Sentinel: ErrExists, Msg: fmt.Sprintf("sort: output %s appeared during the sort (another process wrote it); it was left as it is (use -f to replace it)", path)}
	}
	return err
}

// linkRename is a rename that fails on an existing path: a hard link,
// then the unlink of the old name.
func linkRename(tmp, path string) error {
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return os.Remove(tmp)
}
