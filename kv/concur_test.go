package kv

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentReopen: goroutines put their own keys at once; after the
// store is abandoned (a kill) and reopened every key holds its last value.
func TestConcurrentReopen(t *testing.T) {
	for _, v := range pathVariants {
		t.Run(v.name, func(t *testing.T) { concurrentReopen(t, v) })
	}
}

func concurrentReopen(t *testing.T, v pathVariant) {
	o := v.apply(testOptions(t, 2))
	o.GCThreshold, o.NoStartupGC = -1, true
	for round := range 3 {
		s := mustOpen(t, o)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 300 {
					k := fmt.Sprintf("g%d-k%d", g, i%10)
					require.NoError(t, s.Put([]byte(k), fmt.Appendf(nil, "r%d-i%d-%0100d", round, i, 0)))
				}
			}()
		}
		wg.Wait()
		for g := range 8 {
			for j := range 10 {
				k := fmt.Sprintf("g%d-k%d", g, j)
				v, err := s.Get([]byte(k))
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("r%d-i%d-%0100d", round, 290+j, 0), string(v), "round %d before the kill", round)
			}
		}
		s.abandon()
		s = mustOpen(t, o)
		for g := range 8 {
			for j := range 10 {
				k := fmt.Sprintf("g%d-k%d", g, j)
				v, err := s.Get([]byte(k))
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("r%d-i%d-%0100d", round, 290+j, 0), string(v), "round %d after the kill: %+v", round, s.Recovery())
			}
		}
		s.abandon()
	}
}
