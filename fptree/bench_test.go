package fptree

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/braid-pm/braid/coro"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// The benchmarks run on a tree of benchKeys random keys (BRAID_FPTREE_KEYS
// overrides the 10 M), built once per test binary with PutBatch, in a
// forced-PMem region on /dev/shm ("shm") and, for the DRAM rows, in an
// anonymous region ("dram"). Every figure is per key.

func benchKeys() int {
	if n, err := strconv.Atoi(os.Getenv("BRAID_FPTREE_KEYS")); err == nil && n > 0 {
		return n
	}
	return 10_000_000
}

type benchTree struct {
	t    *Tree
	keys []uint64
}

var (
	benchMu    sync.Mutex
	benchTrees = map[string]*benchTree{}
)

// sharedTree returns the benchmark tree of kind "shm" or "dram" with m
// slots a leaf.
func sharedTree(b *testing.B, kind string, m int) *benchTree {
	return sharedTreeN(b, kind, m, benchKeys())
}

// sharedTreeN is sharedTree of n keys.
func sharedTreeN(b *testing.B, kind string, m, n int) *benchTree {
	benchMu.Lock()
	defer benchMu.Unlock()
	name := fmt.Sprintf("%s/%d/%d", kind, m, n)
	if bt, ok := benchTrees[name]; ok {
		return bt
	}
	// Room for the keys at 50% fill, and the Put benchmarks' growth.
	leaves := 2*n/m + 1<<16
	size := leavesOff + leaves*geometry(m).stride
	var r *persist.Region
	if kind == "dram" {
		var err error
		if r, err = persist.Anonymous(size, nil); err != nil {
			b.Fatal(err)
		}
	} else {
		r = structtest.Shared(b, "fptree-"+name, size)
	}
	t, err := Create(r, &Options{LeafSlots: m})
	if err != nil {
		b.Fatal(err)
	}
	rnd := structtest.NewRand(7)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = rnd.Uint64()
	}
	for i := 0; i < n; i += 1024 {
		j := min(i+1024, n)
		if err := t.PutBatch(keys[i:j], keys[i:j]); err != nil {
			b.Fatal(err)
		}
	}
	used, _ := t.Leaves()
	b.Logf("%s: %d keys in %d leaves of %d slots (%.0f%% full), %d inner levels; %v", name, t.Len(), used, m,
		100*float64(t.Len())/float64(used*m), t.root.Load().height(), r)
	bt := &benchTree{t: t, keys: keys}
	benchTrees[name] = bt
	return bt
}

const batchLen = 1024 // keys per GetBatch / PutBatch call in the benchmarks

// BenchmarkGet looks up random present keys: plain Gets one after the
// other, GetBatch (Ring, Options.Group at a time), the same lookups as
// iter.Pull coroutines (coro.Pull), on the shm tree and on the DRAM one.
func BenchmarkGet(b *testing.B) {
	for _, kind := range []string{"shm", "dram"} {
		b.Run(kind+"/plain", func(b *testing.B) {
			bt := sharedTree(b, kind, DefaultLeafSlots)
			benchGet(b, bt, "plain")
		})
		b.Run(kind+"/batch", func(b *testing.B) {
			bt := sharedTree(b, kind, DefaultLeafSlots)
			benchGet(b, bt, "batch")
		})
		b.Run(kind+"/pull", func(b *testing.B) {
			bt := sharedTree(b, kind, DefaultLeafSlots)
			benchGet(b, bt, "pull")
		})
	}
}

func benchGet(b *testing.B, bt *benchTree, form string) {
	t, keys := bt.t, bt.keys
	rnd := structtest.NewRand(3)
	q := make([]uint64, batchLen)
	vals, found := make([]uint64, batchLen), make([]bool, batchLen)
	per := 1
	if form != "plain" {
		per = batchLen
	}
	c := structtest.StartCPU()
	for b.Loop() {
		switch form {
		case "plain":
			k := keys[rnd.Intn(len(keys))]
			if v, ok, err := t.Get(k); err != nil || !ok || v != k {
				b.Fatalf("Get(%d) = %d, %v, %v", k, v, ok, err)
			}
		default:
			for i := range q {
				q[i] = keys[rnd.Intn(len(keys))]
			}
			var err error
			if form == "batch" {
				err = t.GetBatch(q, vals, found)
			} else {
				err = t.getBatchPull(q, vals, found)
			}
			if err != nil || !found[batchLen-1] || vals[0] != q[0] {
				b.Fatalf("GetBatch: %v", err)
			}
		}
	}
	perKey(b, c, per)
}

func perKey(b *testing.B, c structtest.CPU, per int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/key")
	c.Report(b, float64(per), "key")
}

// getBatchPull is GetBatch written as straight-line lookups on coro.Pull:
// the comparison form (iter.Pull coroutine switches).
func (t *Tree) getBatchPull(keys, vals []uint64, found []bool) error {
	coro.Pull(t.group, len(keys), func(i int, wait func(unsafe.Pointer)) {
		k := keys[i]
		for {
			nd := t.root.Load()
			for !nd.bottom {
				nd = nd.kids[nd.child(k)]
				wait(unsafe.Pointer(nd))
			}
			l := nd.leaves[nd.child(k)]
			wait(t.leaf(l))
			m := &t.meta[l]
			ver := m.stable()
			if !m.covers(k) {
				continue
			}
			p := t.leaf(l)
			slot, _ := t.g.find(p, at(p, offBitmap), k)
			var v uint64
			if slot >= 0 {
				wait(unsafe.Add(p, t.g.kv+16*slot))
				v = t.g.val(p, slot)
			}
			if m.ver.Load() == ver {
				vals[i], found[i] = v, slot >= 0
				return
			}
		}
	})
	return nil
}

// BenchmarkGroupSize sweeps GetBatch's group size on the shm tree.
func BenchmarkGroupSize(b *testing.B) {
	for _, g := range []int{1, 2, 4, 8, 12, 16, 24, 32, 48, 64} {
		b.Run(fmt.Sprint(g), func(b *testing.B) {
			bt := sharedTree(b, "shm", DefaultLeafSlots)
			defer func(old int) { bt.t.group = old }(bt.t.group)
			bt.t.group = g
			benchGet(b, bt, "batch")
		})
	}
}

// BenchmarkPut inserts new random keys into the shm tree: one Put at a
// time (each durable on return), and PutBatch of 16 (Options.Group 16:
// one group, two fences).
func BenchmarkPut(b *testing.B) {
	for _, form := range []string{"plain", "batch"} {
		b.Run(form, func(b *testing.B) {
			benchPut(b, sharedTree(b, "shm", DefaultLeafSlots), form)
		})
	}
}

func benchPut(b *testing.B, bt *benchTree, form string) {
	t := bt.t
	defer func(old int) { t.group = old }(t.group)
	t.group = 16
	rnd := structtest.NewRand(uint64(len(form)) + 100)
	ks := make([]uint64, 16)
	per := 1
	if form == "batch" {
		per = len(ks)
	}
	c := structtest.StartCPU()
	for b.Loop() {
		if form == "plain" {
			k := rnd.Uint64()
			if err := t.Put(k, k); err != nil {
				b.Fatal(err)
			}
			continue
		}
		for i := range ks {
			ks[i] = rnd.Uint64()
		}
		if err := t.PutBatch(ks, ks); err != nil {
			b.Fatal(err)
		}
	}
	perKey(b, c, per)
}

// BenchmarkOpen closes and reopens the shm tree: recovery's walk of every
// leaf (each key's range and fingerprint checked) and the rebuild of the
// inner nodes. It reports keys/s.
func BenchmarkOpen(b *testing.B) {
	bt := sharedTree(b, "shm", DefaultLeafSlots)
	c := structtest.StartCPU()
	for b.Loop() {
		reopen(b, bt)
	}
	n := float64(bt.t.Len())
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	c.Report(b, 1, "open")
}

// reopen closes bt's tree and opens it again (its fan-out is the default
// after).
func reopen(b *testing.B, bt *benchTree) {
	r, off := bt.t.r, bt.t.off
	if err := bt.t.Close(); err != nil {
		b.Fatal(err)
	}
	t, err := Open(r, &Options{Offset: off})
	if err != nil {
		b.Fatal(err)
	}
	bt.t = t
}
