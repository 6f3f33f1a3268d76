package sort

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

var (
	// ErrBadFormat marks input that is not a whole number of records of the
	// expected format (wrong size, truncated KLV record, corrupt run file).
	ErrBadFormat = errors.New("sort: bad record format")
	// ErrEmpty marks an input without any record.
	ErrEmpty = errors.New("sort: input is empty")
	// ErrExists marks an output that already exists (use Overwrite).
	ErrExists = errors.New("sort: output exists")
	// ErrSamePath marks an output path naming the input file.
	ErrSamePath = errors.New("sort: output is the input")
	// ErrBudget marks a memory budget too small for the chosen mode.
	ErrBudget = errors.New("sort: memory budget too small")
	// ErrCorrupt marks a run file whose header or size does not check out.
	// It wraps persist.ErrCorrupt, braid's one corruption marker.
	ErrCorrupt = fmt.Errorf("sort: corrupt run file: %w", persist.ErrCorrupt)
	// ErrOptions marks invalid options.
	ErrOptions = errors.New("sort: invalid options")
	// ErrNoSpace marks output that cannot fit the file system's free space.
	ErrNoSpace = errors.New("sort: not enough free space")
)
