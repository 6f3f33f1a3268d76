package kv

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// value is a recognizable value of n bytes for key k, version v.
func roomValue(k, v, n int) []byte {
	b := bytes.Repeat([]byte{byte(k*31 + v)}, n)
	copy(b, fmt.Sprintf("k%d v%d", k, v))
	return b
}

// A small live set overwritten with large values, in all forty times the
// device's size, by concurrent sync, async and batch writers, with the
// background cleaner off: every write succeeds (the writers wait for the
// cleaning that their ErrFull used to ask the caller to run), and every
// key holds its last value.
func TestOverwriteManyTimesDevice(t *testing.T) {
	o := testOptions(t, 1) // 16 segments of 64 KiB, 2 workers
	s := mustOpen(t, o)
	defer s.Close()
	const (
		writers = 4
		keys    = 4 // per writer: 16 keys of 12 KiB live, a fifth of the device
		valSize = 12 << 10
	)
	rounds := int(40 * o.DeviceSize / (writers * valSize))
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	last := make([][keys]int, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := structtest.NewRand(uint64(w) + 1)
			for v := 1; v <= rounds; v++ {
				i := rnd.Intn(keys)
				k := w*keys + i
				key := fmt.Appendf(nil, "key%02d", k)
				var err error
				switch v % 3 {
				case 0:
					err = s.Put(key, roomValue(k, v, valSize))
				case 1:
					done := make(chan error, 1)
					if err = s.PutAsync(key, roomValue(k, v, valSize), func(_ Token, err error) { done <- err }); err == nil {
						err = <-done
					}
				default:
					var b Batch
					b.Put(key, roomValue(k, v, valSize))
					err = s.Apply(&b)
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d write %d of %d: %w", w, v, rounds, err)
					return
				}
				last[w][i] = v
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for w := range writers {
		for i, v := range last[w] {
			k := w*keys + i
			if v == 0 {
				continue
			}
			got, err := s.Get(fmt.Appendf(nil, "key%02d", k))
			require.NoError(t, err)
			require.Equal(t, roomValue(k, v, valSize), got, "key %d", k)
		}
	}
	st := s.Stats()
	require.Greater(t, st.RoomWaits, uint64(0), "no write waited for room: the test did not fill the device")
	require.Greater(t, st.GCPasses, uint64(0))
	require.NoError(t, s.Check())
}

// A live set larger than the device: puts get ErrFull (soon: the cleaner
// can free nothing, not after FullWait), every acknowledged value stays
// readable, and deletes with GC make room again.
func TestLiveLargerThanDevice(t *testing.T) {
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	const valSize = 4 << 10
	var n int
	var full error
	for ; ; n++ {
		require.Less(t, n, int(o.DeviceSize/valSize), "no ErrFull with more live data than the device holds")
		if full = s.Put(fmt.Appendf(nil, "k%05d", n), roomValue(n, 0, valSize)); full != nil {
			break
		}
	}
	require.ErrorIs(t, full, ErrFull)
	re := asRoom(full)
	require.NotNil(t, re, "%v", full)
	require.Contains(t, re.why, "live data fills", "gave up for another reason: %v", full)
	require.Contains(t, full.Error(), o.Devices[0])
	// Async puts and batches get it too. One may still succeed when the
	// cleaner has freed a segment meanwhile (a metadata segment behind a
	// checkpoint it took): it then counts as acknowledged. Whether that
	// happens depends on the scheduler, so the loop runs until each kind
	// has met ErrFull, bounded by the device's room for values.
	acked := map[string][]byte{}
	asyncFull, batchFull := false, false
	for i := 0; !asyncFull || !batchFull; i++ {
		require.Less(t, i, int(o.DeviceSize/valSize), "async puts and batches never got ErrFull")
		key, val := fmt.Appendf(nil, "async%d", i), roomValue(i, 1, valSize)
		done := make(chan error, 1)
		require.NoError(t, s.PutAsync(key, val, func(_ Token, err error) { done <- err }))
		if err := <-done; err == nil {
			acked[string(key)] = val
		} else {
			require.ErrorIs(t, err, ErrFull)
			asyncFull = true
		}
		var b Batch
		key, val = fmt.Appendf(nil, "batch%d", i), roomValue(i, 2, valSize)
		b.Put(key, val)
		if err := s.Apply(&b); err == nil {
			acked[string(key)] = val
		} else {
			require.ErrorIs(t, err, ErrFull)
			batchFull = true
		}
	}
	check := func(s *Store, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			v, err := s.Get(fmt.Appendf(nil, "k%05d", i))
			require.NoError(t, err, "acknowledged key %d of %d", i, n)
			require.Equal(t, roomValue(i, 0, valSize), v)
		}
		for k, want := range acked {
			v, err := s.Get([]byte(k))
			require.NoError(t, err, "acknowledged key %s", k)
			require.Equal(t, want, v)
		}
	}
	check(s, 0, n)
	require.NoError(t, s.Check())
	// Everything acknowledged survives a reopen of the full store.
	require.NoError(t, s.Close())
	s = mustOpen(t, o)
	defer s.Close()
	check(s, 0, n)
	for i := 0; i < n/2; i++ {
		require.NoError(t, s.Delete(fmt.Appendf(nil, "k%05d", i)), "delete %d", i)
	}
	_, err := s.GC()
	require.NoError(t, err)
	for i := range n / 4 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "again%05d", i), roomValue(i, 3, valSize)), "put %d after deletes and GC", i)
	}
	check(s, n/2, n)
	require.NoError(t, s.Check())
}

// Validate refuses a device too small for the workers' logs and the
// reserves, naming the sizes and the minimum.
func TestValidateSegments(t *testing.T) {
	o := testOptions(t, 1)
	min := MinSegments(o.WorkersPerDevice)
	o.DeviceSize = int64(min-1) * o.SegmentSize
	err := o.Validate()
	require.ErrorIs(t, err, ErrInvalid)
	for _, want := range []string{fmt.Sprint(o.DeviceSize), fmt.Sprint(o.SegmentSize), fmt.Sprintf("at least %d", min), fmt.Sprintf("DeviceSize at least %d", int64(min)*o.SegmentSize)} {
		require.Contains(t, err.Error(), want)
	}
	_, err = Open(o)
	require.ErrorIs(t, err, ErrInvalid)
	o.DeviceSize = int64(min) * o.SegmentSize
	require.NoError(t, o.Validate())
	s := mustOpen(t, o)
	require.NoError(t, s.Put([]byte("a"), []byte("b")))
	require.NoError(t, s.Close())
}
