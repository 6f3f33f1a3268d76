package fptree

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
)

// BenchmarkSweep chooses the leaf size and the inner fan-out: a tree of
// sweepKeys random keys (BRAID_FPTREE_SWEEP_KEYS overrides the 1 M) on the
// shm region for each leaf size, and for each fan-out the inner nodes
// rebuilt with it, then per key: a plain Get, a GetBatch lookup, a Scan of
// 100 keys from a random key, a Put of a new key (durable); and per leaf
// size, a reopen (BenchmarkOpen's) in ns per key.
func BenchmarkSweep(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("BRAID_FPTREE_SWEEP_KEYS")); err == nil && v > 0 {
		n = v
	}
	for _, m := range []int{8, 16, 24, 32, 48, 64} {
		for _, fan := range []int{8, 16, 32, 64} {
			name := fmt.Sprintf("slots=%d/fan=%d", m, fan)
			tree := func(b *testing.B) *benchTree {
				bt := sharedTreeN(b, "shm", m, n)
				if bt.t.fan != fan {
					bt.t.fan = fan
					c, err := bt.t.walk(false, false)
					if err != nil {
						b.Fatal(err)
					}
					bt.t.adopt(c)
				}
				return bt
			}
			b.Run(name+"/get", func(b *testing.B) { benchGet(b, tree(b), "plain") })
			b.Run(name+"/batch", func(b *testing.B) { benchGet(b, tree(b), "batch") })
			b.Run(name+"/scan", func(b *testing.B) { benchScan(b, tree(b)) })
			b.Run(name+"/put", func(b *testing.B) { benchPut(b, tree(b), "plain") })
			if fan == defaultFanout {
				b.Run(name+"/open", func(b *testing.B) {
					bt := tree(b)
					c := structtest.StartCPU()
					for b.Loop() {
						reopen(b, bt)
					}
					perKey(b, c, bt.t.Len())
				})
			}
		}
	}
}

// benchScan scans 100 keys from a random key, per key.
func benchScan(b *testing.B, bt *benchTree) {
	t, keys := bt.t, bt.keys
	rnd := structtest.NewRand(5)
	const span = 100
	c := structtest.StartCPU()
	for b.Loop() {
		got := 0
		if err := t.Scan(keys[rnd.Intn(len(keys))], ^uint64(0), func(k, v uint64) bool {
			got++
			return got < span
		}); err != nil {
			b.Fatal(err)
		}
	}
	perKey(b, c, span)
}
