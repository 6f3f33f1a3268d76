package sortio

import (
	"errors"
	"fmt"
	"os"

	"github.com/braid-pm/braid/persist"
)

// ErrChanged marks a file that changed size while it was mapped: another
// program truncated (or extended) the input, a run file or the output
// during the work. The error also wraps the *persist.MediaError of the
// fault that revealed it (errors.As finds the offset).
var ErrChanged = persist.NewError("sort: a file changed size during the work")

// changedError is an ErrChanged error with its own message.
type changedError struct {
	msg   string
	fault *persist.MediaError
}

func (e *changedError) Error() string   { return e.msg }
func (e *changedError) Unwrap() []error { return []error{ErrChanged, e.fault} }

// ExplainFault explains a memory fault caught while files were mapped (err
// wrapping a *persist.MediaError; any other err is returned as it is):
// when the faulting file is now of another size than it was mapped with,
// it is an ErrChanged error that says so ("IN changed size during the
// sort"); otherwise the fault, located in its file. during names the work
// ("the sort", "validation").
func ExplainFault(err error, during string, files ...*Mapped) error {
	var me *persist.MediaError
	if !errors.As(err, &me) {
		return err
	}
	for _, m := range files {
		// Located by the range the file was mapped at: a run file may be
		// closed by the time the error gets here.
		if m == nil || m.Size == 0 || me.Addr < m.Addr || me.Addr-m.Addr >= uintptr(m.Size) {
			continue
		}
		me.Path, me.Off, me.Size = m.Path, int64(me.Addr-m.Addr), m.Size
		name := m.Label
		if name == "" {
			name = m.Path
		}
		st, serr := os.Stat(m.Path)
		switch {
		case serr != nil:
			return &changedError{fmt.Sprintf("sort: %s changed size during %s: it was %d bytes when mapped, and is gone now (%v); the read at offset %d faulted",
				name, during, m.Size, PathCause(serr), me.Off), me}
		case st.Size() != int64(m.Size):
			return &changedError{fmt.Sprintf("sort: %s changed size during %s: it was %d bytes when mapped, %d now; the access at offset %d faulted",
				name, during, m.Size, st.Size(), me.Off), me}
		}
		return me
	}
	return err
}

// PathCause is the cause of a path error without the operation and path.
func PathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
