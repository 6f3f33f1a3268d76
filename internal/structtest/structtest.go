// Package structtest holds what the tests of braid's persistent
// structures share: builders of each structure at offset 0 of a region
// (to open one kind over another) and a probe of the region's claims. It
// is imported by tests only.
package structtest

import (
	"testing"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// A Builder creates one kind of structure at offset 0 of a region of at
// least 1 MiB and returns its Close.
type Builder struct {
	Name  string
	Build func(r *persist.Region) (close func() error, err error)
}

// Builders is one of each kind: a walog log, a pagelog store, a cow array,
// a fam array and a fam log array.
var Builders = []Builder{
	{"walog", func(r *persist.Region) (func() error, error) {
		l, err := walog.Create(r, &walog.Options{Size: 64 << 10})
		if err != nil {
			return nil, err
		}
		return l.Close, nil
	}},
	{"pagelog", func(r *persist.Region) (func() error, error) {
		s, err := pagelog.Create(r, nil)
		if err != nil {
			return nil, err
		}
		return s.Close, nil
	}},
	{"cow", func(r *persist.Region) (func() error, error) {
		a, err := cow.Create(r, 0, 16, 10, nil)
		if err != nil {
			return nil, err
		}
		return a.Close, nil
	}},
	{"fam", func(r *persist.Region) (func() error, error) {
		a, err := fam.Create(r, 0, 16, 10)
		if err != nil {
			return nil, err
		}
		return a.Close, nil
	}},
	{"fam-log", func(r *persist.Region) (func() error, error) {
		a, err := fam.CreateLog(r, 0, 16, 10, &fam.LogOptions{Lanes: 3, LaneBytes: 4096})
		if err != nil {
			return nil, err
		}
		return a.Close, nil
	}},
}

// RequireFree fails t unless no open structure claims any of the n bytes
// at off of r: a probe claim of them succeeds.
func RequireFree(t testing.TB, r *persist.Region, off, n int) {
	t.Helper()
	rel, err := r.Claim(off, n, "probe")
	if err != nil {
		t.Fatalf("bytes %d..%d are still claimed: %v", off, off+n, err)
	}
	rel()
}
