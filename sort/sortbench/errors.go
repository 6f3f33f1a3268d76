package sortbench

import (
	"github.com/braid-pm/braid/sort/internal/sortio"
	"github.com/braid-pm/braid/sort/record"
)

// The errors Generate and Validate return wrap these sentinels, which are
// package sort's too (sortbench.ErrNoSpace is sort.ErrNoSpace): decide with
// errors.Is against either.
var (
	// ErrBadFormat marks input that is not a whole number of records of
	// the format (record.ErrBadFormat).
	ErrBadFormat = record.ErrBadFormat
	// ErrEmpty marks an input without any record.
	ErrEmpty = sortio.ErrEmpty
	// ErrInvalid marks invalid options (persist.ErrInvalid).
	ErrInvalid = sortio.ErrInvalid
	// ErrNoSpace marks output that cannot fit the file system's free space.
	ErrNoSpace = sortio.ErrNoSpace
	// ErrReadOnly marks an existing output that is read-only, which
	// Generate does not replace (persist.ErrReadOnly).
	ErrReadOnly = sortio.ErrReadOnly
	// ErrChanged marks a file that changed size while it was mapped.
	ErrChanged = sortio.ErrChanged
)
