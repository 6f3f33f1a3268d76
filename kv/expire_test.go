package kv

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is a store clock the test moves (Options.Clock).
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock(ms int64) *fakeClock {
	c := &fakeClock{}
	c.ms.Store(ms)
	return c
}

func (c *fakeClock) now() time.Time   { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) advance(ms int64) { c.ms.Add(ms) }

const t0 = int64(1_767_225_600_000) // 2026-01-01 00:00:00 UTC

func ttlOptions(t *testing.T, c *fakeClock) *Options {
	o := testOptions(t, 2)
	o.Clock = c.now
	o.ExpireInterval = -1 // the tests drop expired versions themselves (expireAll)
	return o
}

func TestExpireBasics(t *testing.T) {
	c := newFakeClock(t0)
	s := mustOpen(t, ttlOptions(t, c))
	defer s.Close()
	k := []byte("k")
	require.NoError(t, s.PutAt(k, []byte("v"), t0+1000))
	v, dl, err := s.GetAt(k)
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
	require.Equal(t, t0+1000, dl)
	require.Equal(t, t0, s.Now())

	c.advance(1000) // at the deadline: still there (Redis's rule)
	v, err = s.Get(k)
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
	c.advance(1)
	_, err = s.Get(k)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.TTL(k)
	require.ErrorIs(t, err, ErrNotFound)
	ok, err := s.Expire(k, t0+5000)
	require.NoError(t, err)
	require.False(t, ok, "Expire of an expired key")

	// Expire and Persist of a live key.
	require.NoError(t, s.Put(k, []byte("w")))
	dl, err = s.TTL(k)
	require.NoError(t, err)
	require.Zero(t, dl)
	ok, err = s.Persist(k)
	require.NoError(t, err)
	require.False(t, ok, "Persist of a key without a deadline")
	ok, err = s.Expire(k, t0+9000)
	require.NoError(t, err)
	require.True(t, ok)
	v, dl, err = s.GetAt(k)
	require.NoError(t, err)
	require.Equal(t, "w", string(v))
	require.Equal(t, t0+9000, dl)
	ok, err = s.Persist(k)
	require.NoError(t, err)
	require.True(t, ok)
	v, dl, err = s.GetAt(k)
	require.NoError(t, err)
	require.Equal(t, "w", string(v))
	require.Zero(t, dl)
	ok, err = s.Expire(k, s.Now()) // not after now: deleted
	require.NoError(t, err)
	require.True(t, ok)
	_, err = s.Get(k)
	require.ErrorIs(t, err, ErrNotFound)

	// PutTTL rounds up to whole milliseconds; a batch carries deadlines.
	require.NoError(t, s.PutTTL(k, []byte("x"), 1500*time.Microsecond))
	dl, err = s.TTL(k)
	require.NoError(t, err)
	require.Equal(t, s.Now()+2, dl)
	var b Batch
	b.PutAt([]byte("b1"), []byte("1"), t0+100_000)
	b.Put([]byte("b2"), []byte("2"))
	b.PutAt([]byte("b3"), nil, t0+200_000)
	require.NoError(t, s.Apply(&b))
	for key, want := range map[string]int64{"b1": t0 + 100_000, "b2": 0, "b3": t0 + 200_000} {
		dl, err := s.TTL([]byte(key))
		require.NoError(t, err, key)
		require.Equal(t, want, dl, key)
	}
	v, err = s.Get([]byte("b3"))
	require.NoError(t, err)
	require.Empty(t, v)
	require.Equal(t, int64(3), s.Stats().Expires) // k, b1, b3

	// The clock never goes back while the store runs.
	c.advance(-60_000)
	require.Equal(t, t0+1001, s.Now())
	c.advance(60_000)
}

func TestExpireBadInput(t *testing.T) {
	c := newFakeClock(t0)
	s := mustOpen(t, ttlOptions(t, c))
	defer s.Close()
	for _, dl := range []int64{-1, math.MinInt64} {
		err := s.PutAt([]byte("k"), nil, dl)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "want Unix milliseconds")
		_, err = s.Expire([]byte("k"), dl)
		require.ErrorIs(t, err, ErrInvalid)
		var b Batch
		b.PutAt([]byte("k"), nil, dl)
		require.ErrorIs(t, s.Apply(&b), ErrInvalid)
	}
	_, err := s.Expire([]byte("k"), 0)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, s.PutTTL([]byte("k"), nil, 0), ErrInvalid)
	_, err = s.Persist(nil)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, s.PutAt([]byte("k"), make([]byte, s.c.MaxValue+1), t0+1), ErrTooLarge)
	// The largest deadline is taken; PutTTL saturates there.
	require.NoError(t, s.PutAt([]byte("k"), nil, math.MaxInt64))
	require.NoError(t, s.PutTTL([]byte("j"), nil, math.MaxInt64))
	dl, err := s.TTL([]byte("j"))
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), dl)
}

// TestExpireActive: the expirer drops expired versions as tombstones
// with their serials, counts them, and GC reclaims their bytes; a reopen
// (clean or after a kill) keeps the deadlines and never shows an expired
// key.
func TestExpireActive(t *testing.T) {
	c := newFakeClock(t0)
	o := ttlOptions(t, c)
	s := mustOpen(t, o)
	defer func() { s.Close() }()
	val := make([]byte, 600)
	const n = 300
	for i := range n {
		dl := int64(0)
		if i%3 != 0 {
			dl = t0 + int64(1000*(i%3)) // 1 s or 2 s from now
		}
		require.NoError(t, s.PutAt(fmt.Appendf(nil, "key%04d", i), val, dl))
	}
	st := s.Stats()
	require.Equal(t, int64(n), st.Keys)
	require.Equal(t, int64(2*n/3), st.Expires)

	// A reopen after a kill (no checkpoint) and a clean one keep them.
	s.abandon()
	s = mustOpen(t, o)
	require.Equal(t, int64(2*n/3), s.Stats().Expires)
	require.NoError(t, s.Close())
	s = mustOpen(t, o)
	require.Equal(t, int64(2*n/3), s.Stats().Expires)
	dl, err := s.TTL([]byte("key0001"))
	require.NoError(t, err)
	require.Equal(t, t0+1000, dl)

	c.advance(1500) // the 1-s keys are due
	dropped, err := s.expireAll()
	require.NoError(t, err)
	require.Equal(t, n/3, dropped)
	st = s.Stats()
	require.Equal(t, uint64(n/3), st.ExpiredKeys)
	require.Equal(t, int64(n/3), st.Expires)
	require.Equal(t, int64(2*n/3), st.Keys)
	require.Equal(t, int64(n/3), st.Tombstones)
	dropped, err = s.expireAll()
	require.NoError(t, err)
	require.Zero(t, dropped, "nothing more is due")

	// After a kill, the dropped keys stay gone and the others keep theirs.
	s.abandon()
	s = mustOpen(t, o)
	for i := range n {
		v, dl, err := s.GetAt(fmt.Appendf(nil, "key%04d", i))
		switch i % 3 {
		case 1:
			require.ErrorIs(t, err, ErrNotFound, "key %d", i)
		default:
			require.NoError(t, err, "key %d", i)
			require.Len(t, v, len(val))
			require.Equal(t, map[int]int64{0: 0, 2: t0 + 2000}[i%3], dl)
		}
	}

	// A read of an expired version wakes the expirer (lazily, on access).
	c.advance(1000)
	_, err = s.Get([]byte("key0002"))
	require.ErrorIs(t, err, ErrNotFound)
	require.Eventually(t, func() bool { return s.Stats().ExpiredKeys >= 1 }, time.Minute, time.Millisecond)
	_, err = s.expireAll()
	require.NoError(t, err)
	st = s.Stats()
	require.Equal(t, uint64(n/3), st.ExpiredKeys) // since this Open
	require.Zero(t, st.Expires)
	require.Equal(t, int64(n/3), st.Keys)

	// The dropped versions' bytes are garbage: GC frees them.
	require.Equal(t, int64(n/3)*int64(recSize(7, len(val)))+int64(2*n/3)*int64(recSize(7, 0)), st.LiveBytes)
	_, err = s.GC()
	require.NoError(t, err)
	require.Equal(t, int64(n/3), s.Stats().Keys)
	require.NoError(t, s.Check())
}

// TestExpireGC: GC moves an expired version it finds (not yet dropped by
// the expirer, which is off here) as a tombstone: its value's bytes are
// not moved.
func TestExpireGC(t *testing.T) {
	c := newFakeClock(t0)
	o := ttlOptions(t, c)
	s := mustOpen(t, o)
	defer s.Close()
	val := make([]byte, 1000)
	for i := range 600 { // more than the workers' first data segments hold
		require.NoError(t, s.PutAt(fmt.Appendf(nil, "key%04d", i), val, t0+10))
	}
	for i := range 600 { // garbage in every worker's segments, so that GC takes them
		if i/4%2 == 0 {
			require.NoError(t, s.Delete(fmt.Appendf(nil, "key%04d", i)))
		}
	}
	c.advance(11)
	st := s.Stats()
	require.Equal(t, int64(300), st.Expires)
	rep, err := s.GC()
	require.NoError(t, err)
	appended := s.Stats().AppendedBytes - st.AppendedBytes
	st = s.Stats()
	require.Positive(t, rep.Cleaned)
	require.Positive(t, rep.Moved)
	require.Equal(t, uint64(rep.Moved), st.ExpiredKeys, "GC moved live versions, not tombstones: %+v", rep)
	// A tombstone of a 7-byte key and its entry, and a marker per segment
	// switch at most: no value was moved.
	require.LessOrEqual(t, appended, st.ExpiredKeys*uint64(recSize(7, 0)+2*entrySize), "GC moved expired values: %+v", rep)
	for i := range 600 {
		_, err := s.Get(fmt.Appendf(nil, "key%04d", i))
		require.ErrorIs(t, err, ErrNotFound)
	}
	require.NoError(t, s.Check())
}
