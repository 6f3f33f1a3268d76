package fptreepeers

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/tidwall/btree"
	bolt "go.etcd.io/bbolt"

	"github.com/braid-pm/braid/fptree"
	"github.com/braid-pm/braid/internal/structtest"
)

// keys is the tree size of the Get benchmarks (BRAID_FPTREE_KEYS, default
// 10 M), random uint64 keys.
func keys() int {
	if n, err := strconv.Atoi(os.Getenv("BRAID_FPTREE_KEYS")); err == nil && n > 0 {
		return n
	}
	return 10_000_000
}

var (
	setupOnce sync.Once
	allKeys   []uint64
	tree      *fptree.Tree
	bt        *btree.Map[uint64, uint64]
)

// setup builds the fptree (forced PMem, /dev/shm) and the tidwall btree
// over the same keys, once.
func setup(b *testing.B) {
	setupOnce.Do(func() {
		n := keys()
		rnd := structtest.NewRand(7)
		allKeys = make([]uint64, n)
		for i := range allKeys {
			allKeys[i] = rnd.Uint64()
		}
		need, err := fptree.Footprint(&fptree.Options{Leaves: 2*n/fptree.DefaultLeafSlots + 1<<16})
		if err != nil {
			b.Fatal(err)
		}
		r := structtest.Shared(b, "fptreepeers", need)
		tree, err = fptree.Create(r, &fptree.Options{Size: need})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += 1024 {
			if err := tree.PutBatch(allKeys[i:min(i+1024, n)], allKeys[i:min(i+1024, n)]); err != nil {
				b.Fatal(err)
			}
		}
		bt = new(btree.Map[uint64, uint64])
		for _, k := range allKeys {
			bt.Set(k, k)
		}
	})
}

func perKey(b *testing.B, c structtest.CPU, per int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/key")
	c.Report(b, float64(per), "key")
}

// BenchmarkGet looks up random present keys of the 10 M: fptree's Get and
// GetBatch against tidwall/btree's Get.
func BenchmarkGet(b *testing.B) {
	setup(b)
	b.Run("fptree/plain", func(b *testing.B) {
		rnd := structtest.NewRand(3)
		c := structtest.StartCPU()
		for b.Loop() {
			k := allKeys[rnd.Intn(len(allKeys))]
			if v, ok, err := tree.Get(k); !ok || err != nil || v != k {
				b.Fatal("lost", k)
			}
		}
		perKey(b, c, 1)
	})
	b.Run("fptree/batch", func(b *testing.B) {
		rnd := structtest.NewRand(3)
		q, vals, found := make([]uint64, 1024), make([]uint64, 1024), make([]bool, 1024)
		c := structtest.StartCPU()
		for b.Loop() {
			for i := range q {
				q[i] = allKeys[rnd.Intn(len(allKeys))]
			}
			if err := tree.GetBatch(q, vals, found); err != nil || !found[0] {
				b.Fatal(err)
			}
		}
		perKey(b, c, len(q))
	})
	b.Run("btree", func(b *testing.B) {
		rnd := structtest.NewRand(3)
		c := structtest.StartCPU()
		for b.Loop() {
			k := allKeys[rnd.Intn(len(allKeys))]
			if v, ok := bt.Get(k); !ok || v != k {
				b.Fatal("lost", k)
			}
		}
		perKey(b, c, 1)
	})
}

// BenchmarkPut inserts new random keys, each durable before the next
// (fptree Put; bbolt: one Update transaction per put, fsync'ed, in a file
// on /dev/shm), and into tidwall/btree (DRAM, nothing durable). Each
// starts from an empty structure that grows with b.N.
func BenchmarkPut(b *testing.B) {
	b.Run("fptree", func(b *testing.B) {
		r := structtest.MapShm(b, 1<<30)
		t, err := fptree.Create(r, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer t.Close()
		rnd := structtest.NewRand(5)
		c := structtest.StartCPU()
		for b.Loop() {
			k := rnd.Uint64()
			if err := t.Put(k, k); err != nil {
				b.Fatal(err)
			}
		}
		perKey(b, c, 1)
	})
	b.Run("fptree/batch16", func(b *testing.B) {
		r := structtest.MapShm(b, 1<<30)
		t, err := fptree.Create(r, &fptree.Options{Group: 16})
		if err != nil {
			b.Fatal(err)
		}
		defer t.Close()
		rnd := structtest.NewRand(5)
		ks := make([]uint64, 16)
		c := structtest.StartCPU()
		for b.Loop() {
			for i := range ks {
				ks[i] = rnd.Uint64()
			}
			if err := t.PutBatch(ks, ks); err != nil {
				b.Fatal(err)
			}
		}
		perKey(b, c, len(ks))
	})
	b.Run("bbolt", func(b *testing.B) {
		db, err := bolt.Open(filepath.Join(structtest.TempShm(b), "bolt.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		name := []byte("k")
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(name); return err }); err != nil {
			b.Fatal(err)
		}
		rnd := structtest.NewRand(5)
		var kb, vb [8]byte
		c := structtest.StartCPU()
		for b.Loop() {
			k := rnd.Uint64()
			for i := range 8 {
				kb[i] = byte(k >> (56 - 8*i))
			}
			vb = kb
			if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(name).Put(kb[:], vb[:]) }); err != nil {
				b.Fatal(err)
			}
		}
		perKey(b, c, 1)
	})
	b.Run("btree", func(b *testing.B) {
		var m btree.Map[uint64, uint64]
		rnd := structtest.NewRand(5)
		c := structtest.StartCPU()
		for b.Loop() {
			k := rnd.Uint64()
			m.Set(k, k)
		}
		perKey(b, c, 1)
	})
}
