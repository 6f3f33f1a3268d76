package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Example runs the program twice on one file: the count survives the
// first process's Close.
func Example() {
	dir, err := os.MkdirTemp("", "braid-counter-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	args := os.Args
	defer func() { os.Args = args }()
	os.Args = []string{"counter", filepath.Join(dir, "counter.pm")}
	main()
	main()
	// Output:
	// runs: 1
	// runs: 2
}

// TestREADME keeps the top README's program the same as this one.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	// The README shows the program from its package clause on.
	prog := string(src[strings.Index(string(src), "package main"):])
	if !strings.Contains(string(readme), "```go\n"+prog+"```\n") {
		t.Fatal("README.md's \"Use it as a library\" program differs from examples/counter/main.go: copy main.go (from `package main`) into it")
	}
}
