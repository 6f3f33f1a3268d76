// Command counter counts its runs in a FAM array on persistent memory: the
// program of the top README's "Use it as a library".
package main

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/persist"
)

func main() {
	path := "/dev/shm/braid-counter.pm" // a file on PMem (DAX) or, to try it, on tmpfs
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	r, err := persist.Map(path, &persist.Options{Size: 1 << 20, Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	a, err := fam.Open(r, nil) // recovers what a crash left half-done
	if errors.Is(err, fam.ErrNoArray) {
		a, err = fam.Create(r, &fam.Options{ObjectSize: 8, Count: 1024})
	}
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	n, err := a.Uint64(0)
	if err == nil {
		err = a.UpdateUint64(0, n+1) // durable when it returns nil
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("runs:", n+1)
}
