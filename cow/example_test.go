package cow_test

import (
	"fmt"
	"log"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/persist"
)

// Create an array of 16-byte objects, update one failure-atomically, and
// reopen it as a restart would. (A real program maps a file with
// persist.Map; an anonymous region is enough to show the calls.)
func Example() {
	r, err := persist.Anonymous(1<<20, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	opts := &cow.Options{Offset: 0, ObjectSize: 16, Count: 1000, Checksum: true}
	a, err := cow.Create(r, opts)
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Update(7, []byte("sixteen bytes ok")); err != nil { // durable on return
		log.Fatal(err)
	}
	a.Close()

	a, err = cow.Open(r, &cow.Options{Offset: 0}) // nothing to recover
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	buf := make([]byte, a.Size())
	if err := a.Read(7, buf); err != nil {
		log.Fatal(err)
	}
	n, _ := a.Updates(7)
	fmt.Printf("%s, %d update, %d objects\n", buf, n, a.Len())
	// Output: sixteen bytes ok, 1 update, 1000 objects
}

// Footprint says how many bytes an array takes, so that the next
// structure can start right after it.
func ExampleFootprint() {
	n, err := cow.Footprint(&cow.Options{ObjectSize: 16, Count: 1000})
	fmt.Println(n, err)
	// Output: 64064 <nil>
}
