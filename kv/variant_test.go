package kv

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// pathVariant is one way of running the data path. The tests that prove
// the store (crash, SIGKILL, model, linearizability) run on each.
type pathVariant struct {
	name    string
	workers bool // SKYE's: dedicated workers write (DedicatedWorkers), and reads go to them (WorkerReads)
}

var pathVariants = []pathVariant{{name: "direct"}, {name: "workers", workers: true}}

// variantNamed is the variant called name ("" is the default).
func variantNamed(name string) pathVariant {
	for _, v := range pathVariants {
		if v.name == name {
			return v
		}
	}
	return pathVariants[0]
}

func (v pathVariant) apply(o *Options) *Options {
	o.WorkerReads, o.DedicatedWorkers = v.workers, v.workers
	return o
}

// raceValue is key i's value in TestReadersRaceCleaner: every version
// of a key holds the same bytes, so a reader knows what it must see.
func raceValue(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8), 'v'}, 100) }

// raceStore is a store of n keys whose first data segments are mostly
// garbage: every key written, then the even ones again.
func raceStore(t *testing.T, v pathVariant, n int) *Store {
	o := v.apply(testOptions(t, 1))
	o.WorkersPerDevice = 1
	o.DeviceSize = 40 * o.SegmentSize
	s := mustOpen(t, o)
	for round := range 2 {
		for i := range n {
			if round == 0 || i%2 == 0 {
				require.NoError(t, s.Put(fmt.Appendf(nil, "k%05d", i), raceValue(i)))
			}
		}
	}
	return s
}

// TestReadersRaceCleaner: a reader pinned on a segment the cleaner
// moves out keeps reading it until it unpins (the cleaner waits for it
// and frees the segment only then), readers that come after the retire go
// to the moved copy; and readers running against back-to-back GC passes
// (over keys rewritten with the same value) always get their key's value.
func TestReadersRaceCleaner(t *testing.T) {
	for _, v := range pathVariants {
		t.Run(v.name, func(t *testing.T) {
			s := raceStore(t, v, 1000)
			defer s.Close()
			key := []byte("k00001") // odd: its first version is live in a segment with garbage
			l, ok := s.idx.lookup(key)
			require.True(t, ok)
			g := s.pinAt(l)
			require.NotNil(t, g)
			type result struct {
				rep GCReport
				err error
			}
			ch := make(chan result, 1)
			go func() {
				rep, err := s.GC()
				ch <- result{rep, err}
			}()
			var res *result
			for !g.retired.Load() && res == nil {
				select {
				case r := <-ch:
					res = &r
				default:
					runtime.Gosched()
				}
			}
			require.Nil(t, res, "the GC pass ended without retiring the pinned segment")
			// Retired, waited for: still the data segment l points into.
			val, _, err, miss := s.readPinned(g, opGet, key, keyHash(key), l, 0, nil)
			require.NoError(t, err)
			require.False(t, miss)
			require.Equal(t, raceValue(1), val)
			require.Nil(t, s.pinAt(l), "a reader pinned a retired segment")
			got, err := s.Get(key) // the moved copy
			require.NoError(t, err)
			require.Equal(t, raceValue(1), got)
			nl, _ := s.idx.lookup(key)
			require.NotEqual(t, l, nl, "the cleaner did not move the key")
			g.unpin()
			r := <-ch
			require.NoError(t, r.err)
			require.Greater(t, r.rep.SegmentsFreed, 0)
			require.Nil(t, s.pinAt(l), "a freed segment was pinned")
			require.True(t, g.kind != kindData || g.epoch.Load() != l.epoch, "the segment was not freed")

			// Readers against the cleaner, free-running: 8 passes, each
			// after a quarter of the keys was rewritten (same values).
			var wg sync.WaitGroup
			var stop atomic.Bool
			errs := make(chan error, 4)
			for c := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rnd := structtest.NewRand(uint64(c + 1))
					for n := 0; n < 100 || !stop.Load(); n++ {
						i := rnd.Intn(1000)
						got, err := s.Get(fmt.Appendf(nil, "k%05d", i))
						if err != nil || !bytes.Equal(got, raceValue(i)) {
							errs <- fmt.Errorf("get k%05d: %v (%d bytes)", i, err, len(got))
							return
						}
					}
				}()
			}
			freed := 0
			for pass := range 8 {
				for i := pass % 4; i < 1000; i += 4 {
					require.NoError(t, s.Put(fmt.Appendf(nil, "k%05d", i), raceValue(i)))
				}
				rep, err := s.GC()
				require.NoError(t, err)
				freed += rep.SegmentsFreed
			}
			stop.Store(true)
			wg.Wait()
			require.Greater(t, freed, 0)
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, s.Check())
			t.Logf("%d segments freed beside %d reads", freed, s.Stats().Gets)
		})
	}
}
