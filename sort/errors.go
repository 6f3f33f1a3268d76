package sort

import (
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/internal/sortio"
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
	ErrEmpty = sortio.ErrEmpty
	// ErrExists marks an output that already exists (use Overwrite), also
	// one that appeared while the sort ran.
	ErrExists = sortio.ErrExists
	// ErrSamePath marks an output path naming the input file.
	ErrSamePath = persist.NewError("sort: output is the input", persist.ErrInvalid)
	// ErrBudget marks a memory budget too small for the chosen mode.
	ErrBudget = persist.NewError("sort: memory budget too small")
	// ErrCorrupt marks a run file whose header or size does not check out
	// (persist.ErrCorrupt, braid's one corruption marker).
	ErrCorrupt = persist.NewError("sort: corrupt run file", persist.ErrCorrupt)
	// ErrInvalid marks invalid options or arguments (persist.ErrInvalid).
	ErrInvalid = sortio.ErrInvalid
	// ErrNoSpace marks output that cannot fit the file system's free space.
	ErrNoSpace = sortio.ErrNoSpace
	// ErrReadOnly marks an existing output that is read-only, which Generate
	// does not replace (persist.ErrReadOnly).
	ErrReadOnly = sortio.ErrReadOnly
	// ErrChanged marks a file that changed size while it was mapped:
	// another program truncated (or extended) the input, a run file or the
	// output during the work. The error also wraps the *persist.MediaError
	// of the fault that revealed it (errors.As finds the offset).
	ErrChanged = sortio.ErrChanged
)

// guard runs fn (a phase of the job, on the calling goroutine) under
// persist.Guard and explains a fault in the job's files.
func (j *job) guard(fn func() error) error {
	return sortio.ExplainFault(persist.Guard(fn), "the sort", append([]*sortio.Mapped{j.in, j.out}, j.runs...)...)
}
