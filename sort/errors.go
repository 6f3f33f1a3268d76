package sort

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/record"
)

// The package's sentinels, in braid's error vocabulary (persist.NewError):
// each also matches the persist sentinel named, so errors.Is(err,
// persist.ErrInvalid) or persist.ErrCorrupt holds for sort's errors too.
var (
	// ErrBadFormat marks input that is not a whole number of records of the
	// expected format (wrong size, truncated KLV record), or a run file of
	// another kind (persist.ErrBadFormat).
	ErrBadFormat = record.ErrBadFormat
	// ErrEmpty marks an input without any record.
	ErrEmpty = persist.NewError("sort: input is empty")
	// ErrExists marks an output that already exists (use Overwrite), also
	// one that appeared while the sort ran.
	ErrExists = persist.NewError("sort: output exists")
	// ErrSamePath marks an output path naming the input file.
	ErrSamePath = persist.NewError("sort: output is the input", persist.ErrInvalid)
	// ErrBudget marks a memory budget too small for the chosen mode.
	ErrBudget = persist.NewError("sort: memory budget too small")
	// ErrCorrupt marks a run file whose header or size does not check out
	// (persist.ErrCorrupt, braid's one corruption marker).
	ErrCorrupt = persist.NewError("sort: corrupt run file", persist.ErrCorrupt)
	// ErrInvalid marks invalid options or arguments (persist.ErrInvalid).
	ErrInvalid = persist.NewError("sort: invalid options", persist.ErrInvalid)
	// ErrNoSpace marks output that cannot fit the file system's free space.
	ErrNoSpace = persist.NewError("sort: not enough free space")
	// ErrReadOnly marks an existing output that is read-only, which Generate
	// does not replace (persist.ErrReadOnly).
	ErrReadOnly = persist.NewError("sort: output is read-only", persist.ErrReadOnly)
)

// fileError is err about the file at path. Its text names the package
// once and the file right after it — "sort: PATH: bad record format:
// truncated KLV record at offset 7" — however err was made, and it
// unwraps to err.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string {
	return "sort: " + e.path + ": " + strings.TrimPrefix(e.err.Error(), "sort: ")
}

func (e *fileError) Unwrap() error { return e.err }

// inFile returns err naming path (nil for nil; an error that names the
// file already, a cancellation or a changed file, as it is).
func inFile(path string, err error) error {
	var fe *fileError
	var ce *changedError
	if err == nil || errors.As(err, &fe) || errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &fileError{path, err}
}

// detailError is an error with its own message that still matches a
// package sentinel with errors.Is.
type detailError struct {
	sentinel error
	msg      string
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.sentinel }

// optionError is an ErrInvalid error with a message of its own.
func optionError(format string, a ...any) error {
	return &detailError{ErrInvalid, "sort: " + fmt.Sprintf(format, a...)}
}
