package fptree

import (
	"math/bits"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// TestFences counts, with the region's traffic counters, the fences each
// operation costs, as the package documentation states them: an insert
// into a leaf with room 2, an update 1, a delete 1, an insert that splits
// 4 + 2, a delete that frees its leaf 1 + 3, reads 0, and a PutBatch of 16
// inserts 2 in all, into 16 leaves or into one.
func TestFences(t *testing.T) {
	r, err := persist.Anonymous(16<<20, &persist.Options{Counters: true})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	cost := func(what string, do func()) persist.Traffic {
		t.Helper()
		before, ok := r.Traffic()
		require.True(t, ok)
		do()
		after, _ := r.Traffic()
		d := after.Sub(before)
		t.Logf("%-40s %v", what, d)
		return d
	}
	var tr *Tree
	cost("Create", func() { tr = mustCreate(t, r, &Options{LeafSlots: 64, Group: 16}) })

	// Keys 0, 1000, 2000, ... in order: every split leaves the lower
	// half, 32 keys, behind: leaves with room.
	for i := range uint64(2000) {
		require.NoError(t, tr.Put(i*1000, i))
	}
	require.Equal(t, uint64(2), cost("insert, leaf with room", func() { require.NoError(t, tr.Put(1, 1)) }).Fences)
	require.Equal(t, uint64(1), cost("update", func() { require.NoError(t, tr.Put(1, 2)) }).Fences)
	require.Equal(t, uint64(1), cost("delete", func() { ok, err := tr.Delete(1); require.True(t, ok); require.NoError(t, err) }).Fences)
	require.Zero(t, cost("get, getbatch, scan", func() {
		_, _, err := tr.Get(5000)
		require.NoError(t, err)
		require.NoError(t, tr.GetBatch([]uint64{1, 2, 3000}, make([]uint64, 3), make([]bool, 3)))
		require.NoError(t, tr.Scan(0, 1<<20, func(k, v uint64) bool { return true }))
	}).Fences)

	// A full leaf: the last one, filled by more keys at the end.
	for i := range uint64(64) {
		k := 1_999_000 + 1 + i
		l, m, err := tr.lockLeaf(k)
		require.NoError(t, err)
		full := at(tr.leaf(l), offBitmap) == tr.g.full
		m.unlock()
		if full {
			require.Equal(t, uint64(6), cost("insert that splits", func() { require.NoError(t, tr.Put(k, k)) }).Fences)
			break
		}
		require.NoError(t, tr.Put(k, k))
	}

	// 16 new keys in 16 different leaves with room, then 16 in one.
	var keys []uint64
	seen := map[uint32]bool{}
	for i := uint64(0); len(keys) < 16; i += 37 {
		k := i*1000 + 7
		l := tr.root.Load().leafOf(k)
		if !seen[l] && bits.OnesCount64(at(tr.leaf(l), offBitmap)) < tr.g.m-1 {
			seen[l] = true
			keys = append(keys, k)
		}
	}
	require.Equal(t, uint64(2), cost("putbatch of 16 inserts into 16 leaves", func() { require.NoError(t, tr.PutBatch(keys, keys)) }).Fences)
	require.Equal(t, uint64(1), cost("putbatch of 16 updates", func() { require.NoError(t, tr.PutBatch(keys, keys)) }).Fences)
	l := tr.root.Load().leafOf(500_000)
	room := tr.g.m - bits.OnesCount64(at(tr.leaf(l), offBitmap))
	require.GreaterOrEqual(t, room, 16)
	one := make([]uint64, 16)
	for i := range one {
		one[i] = 500_000 + 1 + uint64(i)
	}
	require.Equal(t, uint64(2), cost("putbatch of 16 inserts into one leaf", func() { require.NoError(t, tr.PutBatch(one, one)) }).Fences)

	// Deleting every key of a leaf frees it: the last delete costs 1 + 3.
	l = tr.root.Load().leafOf(700_000)
	lo, hi := tr.meta[l].lo.Load(), tr.meta[l].hi.Load()
	var in []uint64
	require.NoError(t, tr.Scan(lo, hi, func(k, v uint64) bool { in = append(in, k); return true }))
	for _, k := range in[:len(in)-1] {
		_, err := tr.Delete(k)
		require.NoError(t, err)
	}
	used, _ := tr.Leaves()
	require.Equal(t, uint64(4), cost("delete that frees the leaf", func() { _, err := tr.Delete(in[len(in)-1]); require.NoError(t, err) }).Fences)
	after, _ := tr.Leaves()
	require.Equal(t, used-1, after)
}

// TestProbes counts the key comparisons of lookups in full 64-slot leaves
// of random keys: one per slot whose fingerprint matches, up to the key.
// Theory: 1 + (m-1)/512 per hit (half the other m-1 slots are compared
// before it, each a false match with probability 1/256) and m/256 per
// miss. Bounds: 1.15 and 0.3.
func TestProbes(t *testing.T) {
	const m, leaves = 64, 1000
	g := geometry(m)
	r := structtest.Region(t, leaves*g.stride+leavesOff)
	tr := mustCreate(t, r, &Options{LeafSlots: m})
	rnd := structtest.NewRand(11)
	// Fill leaves 0..leaves-1 directly, each with 64 random keys, as full
	// leaves of a tree would hold them.
	var hits, misses, hitProbes, missProbes int
	for l := uint32(0); l < leaves; l++ {
		p := tr.leaf(l)
		keys := make(map[uint64]bool, m)
		for i := range m {
			k := rnd.Uint64()
			for keys[k] {
				k = rnd.Uint64()
			}
			keys[k] = true
			*(*byte)(unsafeAdd(p, offFps+i)) = fingerprint(k)
			g.putKV(p, i, k, uint64(i))
		}
		for i := range m {
			slot, probes := g.find(p, g.full, g.key(p, i))
			if slot != i {
				t.Fatalf("leaf %d: key of slot %d found in slot %d", l, i, slot)
			}
			hits++
			hitProbes += probes
		}
		for range 4 * m {
			k := rnd.Uint64()
			if keys[k] {
				continue
			}
			slot, probes := g.find(p, g.full, k)
			if slot != -1 {
				t.Fatalf("leaf %d: absent key %d found in slot %d", l, k, slot)
			}
			misses++
			missProbes += probes
		}
	}
	perHit, perMiss := float64(hitProbes)/float64(hits), float64(missProbes)/float64(misses)
	t.Logf("%d hits: %.4f probes each (theory %.4f); %d misses: %.4f (theory %.4f)",
		hits, perHit, 1+float64(m-1)/512, misses, perMiss, float64(m)/256)
	require.LessOrEqual(t, perHit, 1.15)
	require.LessOrEqual(t, perMiss, 0.3)
	require.GreaterOrEqual(t, perHit, 1.0)
	// The leaves were written behind the tree's back: clear them again so
	// that the Check at the end of the test sees the empty tree.
	clear(r.Bytes()[leavesOff : leavesOff+g.stride])
}

func unsafeAdd(p unsafe.Pointer, off int) unsafe.Pointer { return unsafe.Add(p, off) }
