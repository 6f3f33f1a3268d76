package fptree

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// TestConcurrent runs goroutines that put, delete, get, scan and batch at
// once on a tree of 8-slot leaves (splits and leaf frees all the time).
// Each writer owns the keys congruent to its number modulo the writers, so
// it knows what Get must return for its own keys at every moment
// (read-your-writes through every split and free of the others), and the
// final contents exactly; all goroutines also read and scan everyone's
// keys, which must come back in ascending order with values someone put.
// Run under -race, it also checks the scheme's synchronization (DRAM
// version locks, copy-on-write inner nodes published atomically).
func TestConcurrent(t *testing.T) {
	const writers = 6
	ops := 4000
	if raceEnabled || testing.Short() {
		ops = 1500
	}
	r := structtest.Region(t, 8<<20)
	tr := mustCreate(t, r, &Options{LeafSlots: 8, Group: 8})
	final := make([]map[uint64]uint64, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- writer(tr, w, writers, ops, &final[w], nil)
		}()
	}
	stop := make(chan struct{})
	var rd sync.WaitGroup
	rd.Add(1)
	go func() {
		defer rd.Done()
		errs <- scanner(tr, stop)
	}()
	wg.Wait()
	close(stop)
	rd.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, tr.Check())
	n := 0
	for w := range writers {
		for k, v := range final[w] {
			got, ok, err := tr.Get(k)
			require.NoError(t, err)
			require.True(t, ok, "writer %d's key %d", w, k)
			require.Equal(t, v, got, "writer %d's key %d", w, k)
		}
		n += len(final[w])
	}
	require.Equal(t, n, tr.Len())
}

// writer runs ops random changes of its own keys (w, w+writers, ...),
// checking each with Get, and reads the others' keys. With closing set,
// an ErrClosed ends it without error, leaving in *closing the batch then
// in flight (whose keys may each be old or new).
func writer(tr *Tree, w, writers, ops int, final *map[uint64]uint64, closing *[]change) (err error) {
	rnd := structtest.NewRand(uint64(w + 1))
	mine := map[uint64]uint64{}
	if closing != nil {
		defer func() {
			if errors.Is(err, ErrClosed) {
				err = nil
			}
			*final = mine
		}()
	}
	own := func() uint64 { return uint64(rnd.Intn(600)*writers + w) }
	for op := range ops {
		switch x := rnd.Intn(10); {
		case x < 4:
			k, v := own(), uint64(op)<<8|uint64(w)
			if err := tr.Put(k, v); err != nil {
				return err
			}
			mine[k] = v
		case x < 6:
			k := own()
			ok, err := tr.Delete(k)
			if err != nil {
				return err
			}
			if _, had := mine[k]; had != ok {
				return fmt.Errorf("writer %d: Delete(%d) = %v, the key was there: %v", w, k, ok, had)
			}
			delete(mine, k)
		case x < 7:
			n := 1 + rnd.Intn(20)
			keys, vals := make([]uint64, n), make([]uint64, n)
			for i := range keys {
				keys[i], vals[i] = own(), uint64(op)<<8|uint64(w)
			}
			if err := tr.PutBatch(keys, vals); err != nil {
				if closing != nil {
					for i, k := range keys {
						*closing = append(*closing, change{k: k, v: vals[i]})
					}
				}
				return err
			}
			for i, k := range keys {
				mine[k] = vals[i]
			}
		case x < 8:
			n := 1 + rnd.Intn(40)
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = own()
			}
			vals, found := make([]uint64, n), make([]bool, n)
			if err := tr.GetBatch(keys, vals, found); err != nil {
				return err
			}
			for i, k := range keys {
				if v, had := mine[k]; had != found[i] || v != vals[i] {
					return fmt.Errorf("writer %d: GetBatch of its key %d = %d, %v; it put %d, %v", w, k, vals[i], found[i], v, had)
				}
			}
		default:
			k := own()
			v, ok, err := tr.Get(k)
			if err != nil {
				return err
			}
			if want, had := mine[k]; had != ok || v != want {
				return fmt.Errorf("writer %d: Get of its key %d = %d, %v; it put %d, %v", w, k, v, ok, want, had)
			}
			// Someone else's key: any value, but one its owner put.
			o := uint64(rnd.Intn(600 * writers))
			if v, ok, err := tr.Get(o); err != nil {
				return err
			} else if ok && int(v&0xff) != int(o%uint64(writers)) {
				return fmt.Errorf("key %d holds %#x, which its owner never put", o, v)
			}
		}
	}
	*final = mine
	return nil
}

// scanner scans the whole tree until stop: keys ascending, each value
// put by the key's owner.
func scanner(tr *Tree, stop chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		var prev uint64
		first := true
		var err error
		if e := tr.Scan(0, math.MaxUint64, func(k, v uint64) bool {
			if !first && k <= prev {
				err = fmt.Errorf("Scan returned %d after %d", k, prev)
			} else if v&0xff != k%6 {
				err = fmt.Errorf("Scan: key %d holds %#x, which its owner never put", k, v)
			}
			prev, first = k, false
			return err == nil
		}); e != nil {
			if errors.Is(e, ErrClosed) {
				return nil
			}
			return e
		}
		if err != nil {
			return err
		}
	}
}

// TestCloseWhileBusy closes the tree while writers, batches and a scanner
// run on it (round after round): every call returns nil or ErrClosed,
// never panics or hangs; once Close returned the area is not written
// again (its bytes compared after every goroutine ended); and the tree
// reopened holds exactly what was acknowledged, each key of a batch cut
// short by the Close old or new.
func TestCloseWhileBusy(t *testing.T) {
	const writers, rounds = 6, 6 // six: the scanner checks values against k % 6
	total := 0
	for round := range rounds {
		r := structtest.Region(t, 4<<20)
		tr := mustCreate(t, r, &Options{LeafSlots: 4, Group: 8})
		final := make([]map[uint64]uint64, writers)
		cut := make([][]change, writers)
		errs := make(chan error, writers+1)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- writer(tr, w, writers, 1<<20, &final[w], &cut[w])
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- scanner(tr, nil)
		}()
		// Close once the writers have put some keys (more each round).
		for i := 0; tr.Len() < 100*(round+1) && i < 1e8; i++ {
			_, _, _ = tr.Get(uint64(i))
			runtime.Gosched()
		}
		require.NoError(t, tr.Close())
		after := append([]byte(nil), r.Bytes()...)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, after, r.Bytes(), "round %d: the area was written after Close returned", round)

		tr = mustOpen(t, r, nil)
		require.NoError(t, tr.Check())
		n := 0
		for w := range writers {
			maybe := map[uint64][]uint64{}
			for _, c := range cut[w] {
				maybe[c.k] = append(maybe[c.k], c.v)
			}
			for k, v := range final[w] {
				got, ok, err := tr.Get(k)
				require.NoError(t, err)
				if ok && got == v {
					n++
					continue
				}
				require.True(t, ok && slices.Contains(maybe[k], got), "round %d: writer %d's key %d: %d, %v; acknowledged %d", round, w, k, got, ok, v)
				n++
			}
			for k, vs := range maybe {
				if _, had := final[w][k]; had {
					continue
				}
				if got, ok, _ := tr.Get(k); ok {
					require.Contains(t, vs, got, "round %d: writer %d's key %d", round, w, k)
					n++
				}
			}
		}
		require.Equal(t, n, tr.Len(), "round %d: no key but the acknowledged and the batch cut short", round)
		require.NoError(t, tr.Close())
		total += n
	}
	require.Positive(t, total, "the writers put keys before the Closes")
}

// TestPutBatchCutShort: a PutBatch whose group meets a Close half-way
// (after it found one key to update and staged one insert, before it
// locked its next leaf) returns ErrClosed and changes nothing of that
// group: the update is stored only at the group's commit.
func TestPutBatchCutShort(t *testing.T) {
	r := structtest.Region(t, 1<<20)
	tr := mustCreate(t, r, &Options{LeafSlots: 4, Group: 8})
	for k := uint64(0); k < 40; k++ {
		require.NoError(t, tr.Put(k*10, k))
	}
	before := append([]byte(nil), r.Bytes()...)
	holds := 0
	tr.holdHook = func() {
		if holds++; holds == 2 {
			tr.closed.Store(true) // as a Close would, between two leaf locks
		}
	}
	// 0 is an update and 1 an insert into leaf 0; 395 is in the last leaf.
	err := tr.PutBatch([]uint64{0, 1, 395}, []uint64{100, 101, 102})
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, 2, holds)
	tr.closed.Store(false)
	tr.holdHook = nil
	v, ok, err := tr.Get(0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(0), v, "the update of a group cut short is not stored")
	_, ok, _ = tr.Get(1)
	require.False(t, ok)
	require.NoError(t, tr.Check())
	require.NoError(t, tr.Close())
	tr = mustOpen(t, r, nil)
	v, _, _ = tr.Get(0)
	require.Equal(t, uint64(0), v)
	require.Equal(t, 40, tr.Len())
	// The bitmaps and values are as before; only a free slot was staged.
	var changed []int
	for i := range before {
		if before[i] != r.Bytes()[i] {
			changed = append(changed, i)
		}
	}
	require.LessOrEqual(t, len(changed), 17, "at most one free slot (16 bytes) and its fingerprint byte changed: %v", changed)
}
