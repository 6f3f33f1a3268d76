//go:build !linux

package persist

import "fmt"

// Mapping files needs Linux (MAP_SYNC, fallocate, mremap). Simulated
// regions (persist/crash) work everywhere.

type osMapping struct{}

var pageSize = 4096

func Map(path string, opts *Options) (*Region, error) {
	return nil, fmt.Errorf("%w: mapping files needs Linux", ErrUnsupported)
}

func Anonymous(size int, opts *Options) (*Region, error) {
	return nil, fmt.Errorf("%w: anonymous regions need Linux", ErrUnsupported)
}

func (r *Region) msync(off, n int) error { return ErrUnsupported }

func (m *osMapping) unmap(mem []byte) error { return nil }

func (r *Region) Grow(size int) error { return ErrUnsupported }
