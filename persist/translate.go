package persist

import (
	"errors"
	"fmt"
)

// RegionError translates an error of Region.Readable or Region.Writable
// into a package's own words, so that the package's message names one
// package: ErrClosed becomes closed and ErrReadOnly becomes readOnly (two
// sentinels of the package, made with NewError over ErrClosed and
// ErrReadOnly), followed by what needed the region in parentheses. Other
// errors are returned as they are; nil stays nil.
//
//	walog: the log's region is read-only (Create needs a writable region)
func RegionError(err, closed, readOnly error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrClosed):
		return fmt.Errorf("%w (%s)", closed, what)
	case errors.Is(err, ErrReadOnly):
		return fmt.Errorf("%w (%s)", readOnly, what)
	}
	return err
}
