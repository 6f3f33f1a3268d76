package sortio

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/braid-pm/braid/persist"
)

// The sentinels that the sorter (package sort) and the sortbenchmark tools
// (sort/sortbench) share; both export them under these names.
var (
	// ErrEmpty marks an input without any record.
	ErrEmpty = persist.NewError("sort: input is empty")
	// ErrExists marks an output that already exists (use Overwrite), also
	// one that appeared while the sort ran.
	ErrExists = persist.NewError("sort: output exists")
	// ErrInvalid marks invalid options or arguments (persist.ErrInvalid).
	ErrInvalid = persist.NewError("sort: invalid options", persist.ErrInvalid)
	// ErrNoSpace marks output that cannot fit the file system's free space.
	ErrNoSpace = persist.NewError("sort: not enough free space")
	// ErrReadOnly marks an existing output that is read-only, which Generate
	// does not replace (persist.ErrReadOnly).
	ErrReadOnly = persist.NewError("sort: output is read-only", persist.ErrReadOnly)
)

// FileError is err about the file at path. Its text names the package
// once and the file right after it — "sort: PATH: bad record format:
// truncated KLV record at offset 7" — however err was made, and it
// unwraps to err.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string {
	return "sort: " + e.Path + ": " + strings.TrimPrefix(e.Err.Error(), "sort: ")
}

func (e *FileError) Unwrap() error { return e.Err }

// InFile returns err naming path (nil for nil; an error that names the
// file already, a cancellation or a changed file, as it is).
func InFile(path string, err error) error {
	var fe *FileError
	var ce *changedError
	if err == nil || errors.As(err, &fe) || errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &FileError{Path: path, Err: err}
}

// DetailError is an error with its own message that still matches a
// package sentinel with errors.Is.
type DetailError struct {
	Sentinel error
	Msg      string
}

func (e *DetailError) Error() string { return e.Msg }
func (e *DetailError) Unwrap() error { return e.Sentinel }

// OptionError is an ErrInvalid error with a message of its own.
func OptionError(format string, a ...any) error {
	return &DetailError{Sentinel: ErrInvalid, Msg: "sort: " + fmt.Sprintf(format, a...)}
}
