package sort_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/sort"
	"github.com/braid-pm/braid/sort/sortbench"
)

// Generate gensort records, sort them with WiscSort and check the output
// as valsort does.
func Example() {
	dir, err := os.MkdirTemp("", "sort-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	ctx := context.Background()

	// 10,000 records of gensort 1.5 (100 bytes: a 10-byte key, a value).
	if _, err := sortbench.Generate(ctx, in, sortbench.GenOptions{Count: 10_000}, false); err != nil {
		panic(err)
	}
	// Auto: OnePass when the IndexMap fits the budget, else MergePass.
	rep, err := sort.Sort(ctx, in, out, &sort.Options{MemBudget: 64 << 20})
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Mode, rep.Records, "records")

	// valsort's checks: in order, and the same records (count and
	// checksum) as the input.
	sin, err := sortbench.Validate(ctx, in, sortbench.ValidateOptions{})
	if err != nil {
		panic(err)
	}
	sout, err := sortbench.Validate(ctx, out, sortbench.ValidateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("input in order:", sin.OK())
	fmt.Println("output in order:", sout.OK(), "same records:", sin.Records == sout.Records && sin.Checksum == sout.Checksum)
	fmt.Println("checksum:", sout.Checksum.Hex())
	// Output:
	// onepass 10000 records
	// input in order: false
	// output in order: true same records: true
	// checksum: 1392d240ca76
}

// A Sorter keeps its buffers from one sort to the next; MergePass is
// forced here by a budget too small for OnePass's IndexMap.
func ExampleSorter() {
	dir, err := os.MkdirTemp("", "sort-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in")
	ctx := context.Background()
	if _, err := sortbench.Generate(ctx, in, sortbench.GenOptions{Count: 100_000}, false); err != nil {
		panic(err)
	}
	s, err := sort.NewSorter(&sort.Options{Mode: sort.MergePass, MemBudget: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for i := 0; i < 2; i++ {
		rep, err := s.Sort(ctx, in, filepath.Join(dir, fmt.Sprint("out", i)))
		if err != nil {
			panic(err)
		}
		fmt.Println(rep.Mode, rep.Records, "records,", rep.Runs > 1, "more than one run")
	}
	// Output:
	// mergepass 100000 records, true more than one run
	// mergepass 100000 records, true more than one run
}
