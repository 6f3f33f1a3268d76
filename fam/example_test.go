package fam_test

import (
	"fmt"
	"log"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/persist"
)

// Create a FAM array of 16-byte objects, update one with one persist
// barrier, and reopen it: Open rolls back an object that a crash tore.
// (A real program maps a file with persist.Map.)
func Example() {
	r, err := persist.Anonymous(1<<20, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	a, err := fam.Create(r, &fam.Options{ObjectSize: 16, Count: 1000})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Update16(3, [16]byte{'h', 'e', 'l', 'l', 'o'}); err != nil { // durable on return
		log.Fatal(err)
	}
	a.Close()

	a, err = fam.Open(r, nil) // recovers; nil: offset 0
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	v, err := a.Read16(3)
	fmt.Printf("%s %v, rolled back %d\n", v[:5], err, a.Recovered())
	// Output: hello <nil>, rolled back 0
}

// The log-based baseline: a redo record, a fence, the write in place, a
// second fence. Its area follows the FAM array's.
func ExampleCreateLog() {
	r, err := persist.Anonymous(4<<20, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	n, err := fam.Footprint(&fam.Options{ObjectSize: 16, Count: 1000})
	if err != nil {
		log.Fatal(err)
	}
	opts := &fam.LogOptions{Offset: n, ObjectSize: 16, Count: 1000, Lanes: 2}
	l, err := fam.CreateLog(r, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	if err := l.Update(999, []byte("0123456789abcdef")); err != nil {
		log.Fatal(err)
	}
	size, _ := fam.LogFootprint(opts)
	fmt.Println(n, size, l.Check())
	// Output: 64064 147136 <nil>
}
