package walog_test

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

func Example() {
	r, err := persist.Anonymous(1<<20, nil) // persist.Map for a real file
	if err != nil {
		panic(err)
	}
	defer r.Close()

	l, err := walog.Create(r, &walog.Options{Format: walog.PopLog})
	if err != nil {
		panic(err)
	}
	for _, rec := range []string{"begin 7", "set x=1", "commit 7"} {
		if _, err := l.Append([]byte(rec)); err != nil { // durable on return
			panic(err)
		}
	}

	// After a restart (or a crash): recovery, then replay. (In one
	// process, close the old handle first: a second Log on an area the
	// first still holds is an error wrapping persist.ErrBusy.)
	l.Close()
	l, err = walog.Open(r, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Recovery())
	it := l.Iter()
	for it.Next() {
		fmt.Printf("%d %s\n", it.Seq(), it.Entry())
	}
	if err := it.Err(); err != nil { // ErrCorrupt, ErrChanged, ErrClosed, ...
		panic(err)
	}
	// Output:
	// poplog log: 3 entries (seq 1..3), tail at 608, next seq 4, closed cleanly
	// 1 begin 7
	// 2 set x=1
	// 3 commit 7
}

func ExampleSet() {
	r, err := persist.Anonymous(4<<20, nil)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	parts, err := walog.Split(r, 2) // or one Part per region (device)
	if err != nil {
		panic(err)
	}
	s, err := walog.CreateSet(parts, nil)
	if err != nil {
		panic(err)
	}
	// Each goroutine appends to its own member; here, in turn.
	s.Log(0).Append([]byte("a"))
	s.Log(1).Append([]byte("b"))
	s.Log(0).Append([]byte("c"))

	s.Close() // a restart
	s, err = walog.OpenSet(parts, nil)
	if err != nil {
		panic(err)
	}
	it := s.Iter()
	for it.Next() {
		fmt.Printf("%d %s (member %d)\n", it.Seq(), it.Entry(), it.Member())
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	// Output:
	// 1 a (member 0)
	// 2 b (member 1)
	// 3 c (member 0)
}
