package fptree_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/fptree"
	"github.com/braid-pm/braid/persist"
)

// A tree in a file: create it, put keys, reopen it (as after a restart or
// a crash), look keys up, alone and in a batch, and scan a range.
func Example() {
	dir, _ := os.MkdirTemp("", "fptree-example")
	defer os.RemoveAll(dir)
	r, err := persist.Map(filepath.Join(dir, "tree.pm"), &persist.Options{Size: 1 << 20, Create: true, ForcePMem: true})
	if err != nil {
		panic(err)
	}
	defer r.Close()

	t, err := fptree.Create(r, nil) // the whole region
	if err != nil {
		panic(err)
	}
	for k := uint64(1); k <= 1000; k++ {
		if err := t.Put(k*10, k*k); err != nil { // durable when Put returns
			panic(err)
		}
	}
	t.Close()

	t, err = fptree.Open(r, nil) // rebuilds the inner nodes from the leaves
	if err != nil {
		panic(err)
	}
	defer t.Close()
	v, ok, _ := t.Get(420)
	fmt.Println(t.Len(), v, ok)

	keys := []uint64{10, 15, 9990}
	vals, found := make([]uint64, len(keys)), make([]bool, len(keys))
	t.GetBatch(keys, vals, found)
	fmt.Println(vals, found)

	t.Scan(95, 125, func(k, v uint64) bool {
		fmt.Print(k, "=", v, " ")
		return true
	})
	fmt.Println()
	// Output:
	// 1000 1764 true
	// [1 0 998001] [true false true]
	// 100=100 110=121 120=144
}
