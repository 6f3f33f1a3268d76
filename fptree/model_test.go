package fptree

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// model is what the tree must hold: a map and the same keys sorted.
type model struct {
	vals   map[uint64]uint64
	sorted []uint64
}

func (m *model) put(k, v uint64) {
	if _, ok := m.vals[k]; !ok {
		i, _ := slices.BinarySearch(m.sorted, k)
		m.sorted = slices.Insert(m.sorted, i, k)
	}
	m.vals[k] = v
}

func (m *model) del(k uint64) bool {
	if _, ok := m.vals[k]; !ok {
		return false
	}
	delete(m.vals, k)
	i, _ := slices.BinarySearch(m.sorted, k)
	m.sorted = slices.Delete(m.sorted, i, i+1)
	return true
}

// TestModel runs random operation sequences against the tree and a model
// (a map and a sorted slice): Put, Delete, Get, Scan and Iter of random
// ranges, GetBatch and PutBatch, reopens (Close and Open) and Check, on
// trees of 4-, 7-, 16- and 64-slot leaves, some in areas so small that
// Puts fail with ErrFull (which must change nothing). 1.2 M operations in
// all (120 k under the race detector); the seed of a failure is printed.
func TestModel(t *testing.T) {
	ops := 300_000
	if raceEnabled || testing.Short() {
		ops = 30_000
	}
	for _, c := range []struct {
		slots, leaves int
		keys          uint64 // key space
	}{
		{4, 0, 3000},
		{7, 300, 2000}, // full: about 1000 keys fit
		{16, 0, 1 << 62},
		{64, 40, 5000}, // full at about 1800 keys
	} {
		t.Run(fmt.Sprintf("slots%d-leaves%d", c.slots, c.leaves), func(t *testing.T) {
			seed := uint64(c.slots*1000 + c.leaves)
			runModel(t, seed, ops, c.slots, c.leaves, c.keys)
		})
	}
}

func runModel(t *testing.T, seed uint64, ops, slots, leaves int, space uint64) {
	rnd := structtest.NewRand(seed)
	r := structtest.Region(t, 4<<20)
	o := &Options{LeafSlots: slots, Leaves: leaves, Offset: 4096}
	tr, err := Create(r, o)
	require.NoError(t, err)
	defer func() { tr.Close() }()
	m := &model{vals: map[uint64]uint64{}}
	fulls := 0
	key := func() uint64 {
		if len(m.sorted) > 0 && (rnd.Intn(3) == 0 || len(m.sorted) > 5000) {
			return m.sorted[rnd.Intn(len(m.sorted))]
		}
		return rnd.Uint64() % space
	}
	for op := range ops {
		where := opName{seed, op}
		switch x := rnd.Intn(1000); {
		case x < 450:
			k, v := key(), rnd.Uint64()
			err := tr.Put(k, v)
			if errors.Is(err, ErrFull) {
				if _, had := m.vals[k]; had {
					t.Fatalf("%s: an update of key %d failed with ErrFull", where, k)
				}
				fulls++
				continue
			}
			if err != nil {
				t.Fatalf("%s: Put(%d): %v", where, k, err)
			}
			m.put(k, v)
		case x < 700:
			k := key()
			ok, err := tr.Delete(k)
			if want := m.del(k); err != nil || ok != want {
				t.Fatalf("%s: Delete(%d) = %v, %v; want %v", where, k, ok, err, want)
			}
		case x < 950:
			k := key()
			v, ok, err := tr.Get(k)
			if want, had := m.vals[k]; err != nil || ok != had || v != want {
				t.Fatalf("%s: Get(%d) = %d, %v, %v; want %d, %v", where, k, v, ok, err, want, had)
			}
		case x < 960:
			from, to := key(), key()
			if rnd.Intn(8) == 0 {
				from, to = 0, math.MaxUint64
			}
			checkScan(t, tr, m, from, to, where)
		case x < 975:
			batchGet(t, tr, m, rnd, key, where)
		case x < 990:
			batchPut(t, tr, m, rnd, key, where)
		case x < 998:
			require.Equal(t, len(m.vals), tr.Len(), where)
		default:
			require.NoError(t, tr.Check(), where)
			require.NoError(t, tr.Close(), where)
			tr, err = Open(r, &Options{Offset: 4096})
			require.NoError(t, err, where)
			require.Equal(t, len(m.vals), tr.Len(), where)
		}
	}
	require.NoError(t, tr.Check())
	checkScan(t, tr, m, 0, math.MaxUint64, opName{seed, ops})
	if leaves > 0 {
		require.Positive(t, fulls, "the small area never filled up")
	}
	t.Logf("seed %d: %d operations, %d keys at the end, %d Puts refused with ErrFull", seed, ops, len(m.vals), fulls)
}

// checkScan compares Scan and Iter of [from, to] with the model.
func checkScan(t *testing.T, tr *Tree, m *model, from, to uint64, where opName) {
	var want []uint64
	if from <= to {
		i, _ := slices.BinarySearch(m.sorted, from)
		j, _ := slices.BinarySearch(m.sorted, to)
		if j < len(m.sorted) && m.sorted[j] == to {
			j++
		}
		want = m.sorted[i:j]
	}
	var got, gotV, wantV []uint64
	for _, k := range want {
		wantV = append(wantV, m.vals[k])
	}
	require.NoError(t, tr.Scan(from, to, func(k, v uint64) bool {
		got, gotV = append(got, k), append(gotV, v)
		return true
	}), where)
	if !slices.Equal(want, got) || !slices.Equal(wantV, gotV) {
		require.Equal(t, want, got, "%s: Scan(%d, %d)'s keys", where, from, to)
		require.Equal(t, wantV, gotV, "%s: Scan(%d, %d)'s values", where, from, to)
	}
	got, gotV = got[:0], gotV[:0]
	it := tr.Iter(from, to)
	for it.Next() {
		got, gotV = append(got, it.Key()), append(gotV, it.Value())
	}
	require.NoError(t, it.Err(), where)
	if !slices.Equal(want, got) || !slices.Equal(wantV, gotV) {
		require.Equal(t, want, got, "%s: Iter(%d, %d)'s keys", where, from, to)
		require.Equal(t, wantV, gotV, "%s: Iter(%d, %d)'s values", where, from, to)
	}
	// Scan stops when fn says so.
	if len(want) > 2 {
		n := 0
		require.NoError(t, tr.Scan(from, to, func(k, v uint64) bool { n++; return n < 2 }), where)
		require.Equal(t, 2, n, where)
	}
}

func batchGet(t *testing.T, tr *Tree, m *model, rnd *structtest.Rand, key func() uint64, where opName) {
	n := rnd.Intn(100)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = key()
	}
	vals, found := make([]uint64, n), make([]bool, n)
	require.NoError(t, tr.GetBatch(keys, vals, found), where)
	for i, k := range keys {
		if want, had := m.vals[k]; had != found[i] || want != vals[i] {
			t.Fatalf("%s: GetBatch key %d (%d of %d): got %d, %v; want %d, %v", where, k, i, n, vals[i], found[i], want, had)
		}
	}
}

func batchPut(t *testing.T, tr *Tree, m *model, rnd *structtest.Rand, key func() uint64, where opName) {
	n := rnd.Intn(40)
	keys, vals := make([]uint64, n), make([]uint64, n)
	for i := range keys {
		keys[i], vals[i] = key(), rnd.Uint64()
	}
	err := tr.PutBatch(keys, vals)
	if errors.Is(err, ErrFull) {
		// The Puts before the failing insert were applied, the others
		// not (updates never fail): every key holds its old value or
		// one the batch gave it. The model learns which from the tree.
		for _, k := range keys {
			v, ok, gerr := tr.Get(k)
			require.NoError(t, gerr)
			old, had := m.vals[k]
			if ok == had && v == old {
				continue
			}
			require.True(t, ok && slices.Contains(batchValues(keys, vals, k), v),
				"%s: key %d of a failed PutBatch is %d, %v: neither its old value (%d, %v) nor one of the batch's", where, k, v, ok, old, had)
			m.put(k, v)
		}
		return
	}
	require.NoError(t, err, where)
	for i, k := range keys {
		m.put(k, vals[i])
	}
}

// batchValues returns the values a batch gives k.
func batchValues(keys, vals []uint64, k uint64) []uint64 {
	var vs []uint64
	for i := range keys {
		if keys[i] == k {
			vs = append(vs, vals[i])
		}
	}
	return vs
}

// opName names an operation of a model run in messages (formatted only
// when one is printed).
type opName struct {
	seed uint64
	op   int
}

func (o opName) String() string { return fmt.Sprintf("seed %d, operation %d", o.seed, o.op) }
