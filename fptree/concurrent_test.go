package fptree

import (
	"fmt"
	"math"
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
			errs <- writer(tr, w, writers, ops, &final[w])
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
// checking each with Get, and reads the others' keys.
func writer(tr *Tree, w, writers, ops int, final *map[uint64]uint64) error {
	rnd := structtest.NewRand(uint64(w + 1))
	mine := map[uint64]uint64{}
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
			return e
		}
		if err != nil {
			return err
		}
	}
}
