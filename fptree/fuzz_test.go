package fptree

import (
	"math"
	"sync"
	"testing"

	"github.com/braid-pm/braid/persist"
)

// fuzzSize is the region FuzzOpen lays its bytes into.
const fuzzSize = 16 << 10

// FuzzOpen opens a tree from arbitrary region bytes: Open must return a
// tree or an error, never panic, hang or read outside the region; a tree
// it returns must pass Check or fail it with an error, and survive Get,
// Scan, Put and Delete. The seeds are trees of 4- and 64-slot leaves, with
// splits, and with a split and a free log left set.
func FuzzOpen(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	var mu sync.Mutex
	r, err := persist.Anonymous(fuzzSize, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		mem := r.Bytes()
		clear(mem)
		copy(mem, data)
		tr, err := Open(r, nil)
		if err != nil {
			return
		}
		defer tr.Close()
		_ = tr.Check()
		for k := range uint64(64) {
			tr.Get(k)
		}
		n := 0
		tr.Scan(0, math.MaxUint64, func(k, v uint64) bool { n++; return n < 10000 })
		for k := range uint64(32) {
			tr.Put(k*3, k)
			tr.Delete(k * 5)
		}
		tr.GetBatch([]uint64{1, 2, 3}, make([]uint64, 3), make([]bool, 3))
		tr.PutBatch([]uint64{4, 5, 6}, []uint64{1, 2, 3})
	})
}

// fuzzSeeds returns region images of valid trees.
func fuzzSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, m := range []int{4, 64} {
		r, err := persist.Anonymous(fuzzSize, nil)
		if err != nil {
			tb.Fatal(err)
		}
		tr, err := Create(r, &Options{LeafSlots: m, Size: fuzzSize})
		if err != nil {
			tb.Fatal(err)
		}
		for k := range uint64(40) {
			tr.Put(k*7, k)
		}
		for k := range uint64(10) {
			tr.Delete(k * 14)
		}
		tr.Close()
		img := append([]byte(nil), r.Bytes()[:min(fuzzSize, leavesOff+12*geometry(m).stride)]...)
		seeds = append(seeds, img)
		if m == 4 {
			split := append([]byte(nil), img...)
			putU64(split[logOff:], logWord(0, 1))
			seeds = append(seeds, split)
			free := append([]byte(nil), img...)
			putU64(free[logOff+8:], logWord(2, 1))
			seeds = append(seeds, free)
		}
		r.Close()
	}
	return seeds
}
