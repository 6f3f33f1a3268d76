// Package perr holds the sentinels of persist that a package below persist
// (persist/device) must also match, and the sentinel type behind
// persist.NewError, so that errors.Is(err, persist.ErrInvalid) holds for
// every braid error of that kind whichever package made it. Use the
// persist names; this package only breaks the import cycle.
package perr

import "errors"

// ErrInvalid is persist.ErrInvalid.
var ErrInvalid = errors.New("persist: invalid argument")

// New returns a sentinel whose text is msg and which matches each of
// parents under errors.Is (persist.NewError).
func New(msg string, parents ...error) error {
	return &sentinel{msg: msg, parents: parents}
}

type sentinel struct {
	msg     string
	parents []error
}

func (e *sentinel) Error() string   { return e.msg }
func (e *sentinel) Unwrap() []error { return e.parents }
