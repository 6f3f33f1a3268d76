package kv

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGCDuringCheckpoints runs GC passes while checkpoints are written
// (Checkpoint calls and the CheckpointInterval checkpointer) and writes go
// on: a GC pass reads the retained checkpoints (needCheckpoints, floor,
// metaFreeable) while a checkpoint appends to them. Under -race it caught
// those reads made without the checkpoints' lock.
func TestGCDuringCheckpoints(t *testing.T) {
	o := testOptions(t, 1)
	o.CheckpointInterval = 1 // as often as the checkpointer can
	s := mustOpen(t, o)
	const rounds = 300
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range rounds * 10 {
			k := fmt.Appendf(nil, "k%d", i%50)
			var err error
			if i%7 == 3 {
				err = s.Delete(k)
			} else {
				err = s.Put(k, fmt.Appendf(nil, "v%d", i))
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range rounds {
			if _, err := s.GC(); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range rounds {
			if err := s.Checkpoint(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}
