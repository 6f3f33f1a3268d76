// Package kinds builds one of each kind of braid persistent structure at
// offset 0 of a region, so that a test can open one kind over another. It
// imports the structures, so only tests outside them (package x_test)
// import it; the generic helpers are in package structtest.
package kinds

import (
	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/fptree"
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
// a fam array, a fam log array and an fptree tree.
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
		a, err := cow.Create(r, &cow.Options{ObjectSize: 16, Count: 10})
		if err != nil {
			return nil, err
		}
		return a.Close, nil
	}},
	{"fam", func(r *persist.Region) (func() error, error) {
		a, err := fam.Create(r, &fam.Options{ObjectSize: 16, Count: 10})
		if err != nil {
			return nil, err
		}
		return a.Close, nil
	}},
	{"fam-log", func(r *persist.Region) (func() error, error) {
		a, err := fam.CreateLog(r, &fam.LogOptions{ObjectSize: 16, Count: 10, Lanes: 3, LaneBytes: 4096})
		if err != nil {
			return nil, err
		}
		return a.Close, nil
	}},
	{"fptree", func(r *persist.Region) (func() error, error) {
		t, err := fptree.Create(r, &fptree.Options{Size: 64 << 10})
		if err != nil {
			return nil, err
		}
		return t.Close, nil
	}},
}
