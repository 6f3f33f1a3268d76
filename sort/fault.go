package sort

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

// mediaError explains a memory fault caught while files were mapped (err
// wrapping a *persist.MediaError; any other err is returned as it is):
// when the faulting file is now of another size than it was mapped with,
// it is an ErrChanged error that says so ("IN changed size during the
// sort"); otherwise the fault, located in its file. during names the work
// ("the sort", "validation").
func mediaError(err error, during string, files ...*mapped) error {
	var me *persist.MediaError
	if !errors.As(err, &me) {
		return err
	}
	for _, m := range files {
		// Located by the range the file was mapped at: a run file may be
		// closed by the time the error gets here.
		if m == nil || m.size == 0 || me.Addr < m.addr || me.Addr-m.addr >= uintptr(m.size) {
			continue
		}
		me.Path, me.Off, me.Size = m.path, int64(me.Addr-m.addr), m.size
		name := m.label
		if name == "" {
			name = m.path
		}
		st, serr := os.Stat(m.path)
		switch {
		case serr != nil:
			return &changedError{fmt.Sprintf("sort: %s changed size during %s: it was %d bytes when mapped, and is gone now (%v); the read at offset %d faulted",
				name, during, m.size, pathCause(serr), me.Off), me}
		case st.Size() != int64(m.size):
			return &changedError{fmt.Sprintf("sort: %s changed size during %s: it was %d bytes when mapped, %d now; the access at offset %d faulted",
				name, during, m.size, st.Size(), me.Off), me}
		}
		return me
	}
	return err
}

// pathCause is the cause of a path error without the operation and path.
func pathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// guard runs fn (a phase of the job, on the calling goroutine) under
// persist.Guard and explains a fault in the job's files.
func (j *job) guard(fn func() error) error {
	return mediaError(persist.Guard(fn), "the sort", append([]*mapped{j.in, j.out}, j.runs...)...)
}
