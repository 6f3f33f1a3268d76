package coro_test

import (
	"fmt"
	"unsafe"

	"github.com/braid-pm/braid/coro"
)

type node struct {
	next int
	_    [56]byte // one node a cache line
}

// chase is the state of one operation: follow next pointers from a node.
type chase struct {
	at, hops, op int
}

// A Ring follows several chains at once: each stage reads the node the
// stage before prefetched, prefetches the next one and yields.
func ExampleRing() {
	nodes := make([]node, 1000)
	for i := range nodes {
		nodes[i].next = (i*7 + 3) % len(nodes)
	}
	starts := []int{0, 10, 20, 30, 40}
	ends := make([]int, len(starts))

	var r coro.Ring[chase]
	r.Reset(4, len(starts)) // 4 chains at a time
	for r.Round() {
		for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
			if op >= 0 {
				*s = chase{at: starts[op], hops: 3, op: op} // a new operation
			} else {
				s.at = nodes[s.at].next
				if s.hops--; s.hops == 0 {
					ends[s.op] = s.at
					r.Done() // finished: the slot takes the next operation
					continue
				}
			}
			r.Prefetch(unsafe.Pointer(&nodes[s.at]))
		}
	}
	fmt.Println(ends)
	// Output: [171 601 31 461 891]
}

// Pull runs the same operations written as ordinary code: wait
// prefetches and lets the other operations run.
func ExamplePull() {
	nodes := make([]node, 1000)
	for i := range nodes {
		nodes[i].next = (i*7 + 3) % len(nodes)
	}
	starts := []int{0, 10, 20, 30, 40}
	ends := make([]int, len(starts))
	coro.Pull(4, len(starts), func(i int, wait func(unsafe.Pointer)) {
		at := starts[i]
		for range 3 {
			wait(unsafe.Pointer(&nodes[at]))
			at = nodes[at].next
		}
		ends[i] = at
	})
	fmt.Println(ends)
	// Output: [171 601 31 461 891]
}
