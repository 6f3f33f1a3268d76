package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// testOptions: devs devices under a fresh /dev/shm directory, small
// segments.
func testOptions(t testing.TB, devs int) *Options {
	dir := structtest.TempShm(t)
	o := &Options{CheckpointDir: filepath.Join(dir, "ckpt"), SegmentSize: 64 << 10, DeviceSize: 1 << 20, WorkersPerDevice: 2, PMem: true, GCThreshold: -1}
	for i := range devs {
		d := filepath.Join(dir, fmt.Sprintf("dev%d", i))
		require.NoError(t, os.Mkdir(d, 0o755))
		o.Devices = append(o.Devices, d)
	}
	return fakeNUMA(o, devs)
}

func mustOpen(t testing.TB, o *Options) *Store {
	t.Helper()
	s, err := Open(o)
	require.NoError(t, err)
	return s
}

func TestBasic(t *testing.T) {
	o := testOptions(t, 2)
	s := mustOpen(t, o)
	require.True(t, s.Recovery().Created)
	for i := range 500 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "key%04d", i), fmt.Appendf(nil, "value %d", i)))
	}
	v, err := s.Get([]byte("key0042"))
	require.NoError(t, err)
	require.Equal(t, "value 42", string(v))
	_, err = s.Get([]byte("nope"))
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Delete([]byte("key0042")))
	_, err = s.Get([]byte("key0042"))
	require.ErrorIs(t, err, ErrNotFound)
	tok, err := s.PutToken([]byte("tk"), []byte("tv"))
	require.NoError(t, err)
	v, err = s.GetWithToken([]byte("tk"), tok)
	require.NoError(t, err)
	require.Equal(t, "tv", string(v))
	require.NoError(t, s.Put([]byte("tk"), []byte("newer")))
	v, err = s.GetWithToken([]byte("tk"), tok) // stale token: the slow path
	require.NoError(t, err)
	require.Equal(t, "newer", string(v))
	require.Equal(t, uint64(1), s.Stats().TokenHits)
	// Tokens are validated, never trusted: the zero token, another key's
	// token, a forged one all take the slow path.
	other, err := s.PutToken([]byte("tj"), []byte("other"))
	require.NoError(t, err)
	forged := tok
	forged.l.off += 8
	forged.l.serial = 1 << 40
	for _, bad := range []Token{{}, other, forged} {
		v, err = s.GetWithToken([]byte("tk"), bad)
		require.NoError(t, err)
		require.Equal(t, "newer", string(v))
	}
	require.Equal(t, uint64(1), s.Stats().TokenHits)
	require.Equal(t, uint64(4), s.Stats().TokenMisses)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Put([]byte("a"), nil), ErrClosed)

	s = mustOpen(t, o)
	rep := s.Recovery()
	require.NotEmpty(t, rep.Checkpoint)
	v, err = s.Get([]byte("key0007"))
	require.NoError(t, err)
	require.Equal(t, "value 7", string(v))
	_, err = s.Get([]byte("key0042"))
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

func TestBadInput(t *testing.T) {
	o := testOptions(t, 1)
	o.MaxKey, o.MaxValue = 16, 100
	s := mustOpen(t, o)
	require.ErrorIs(t, s.Put(nil, []byte("v")), ErrInvalid)
	err := s.Put(make([]byte, 17), nil)
	require.ErrorIs(t, err, ErrTooLarge)
	require.ErrorContains(t, err, "17 bytes, the limit is 16")
	err = s.Put([]byte("k"), make([]byte, 101))
	require.ErrorIs(t, err, ErrTooLarge)
	require.ErrorContains(t, err, "101 bytes, the limit is 100")
	require.ErrorIs(t, s.Scan(nil, nil, func(k, v []byte) bool { return true }), ErrNoOrder)
	_, err = Open(o)
	require.ErrorIs(t, err, ErrBusy)
	require.ErrorIs(t, err, persist.ErrBusy)

	bad := *o
	bad.Devices = []string{filepath.Join(filepath.Dir(o.Devices[0]), "missing")}
	_, err = Open(&bad)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "missing")
	f := filepath.Join(filepath.Dir(o.Devices[0]), "a-file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	bad = *o
	bad.Devices = []string{f}
	_, err = Open(&bad)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "not a directory")
	require.NoError(t, s.Close())
	bad = *o
	bad.CheckpointDir = filepath.Join(f, "ckpt") // under a file: cannot be made
	_, err = Open(&bad)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "checkpoint directory")
	require.ErrorIs(t, (&Options{}).Validate(), ErrInvalid)
	require.ErrorIs(t, (*Options)(nil).Validate(), ErrInvalid)
	require.ErrorIs(t, (&Options{Devices: []string{"a"}, CheckpointDir: "c", SegmentSize: 1000}).Validate(), ErrInvalid)
}

func TestScanAndBatch(t *testing.T) {
	o := testOptions(t, 2)
	o.OrderedIndex = true
	s := mustOpen(t, o)
	defer s.Close()
	var b Batch
	for i := range 50 {
		b.Put(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "v%d", i))
	}
	b.Delete([]byte("k10"))
	require.Equal(t, 51, b.Len())
	require.NoError(t, s.Apply(&b))
	var got []string
	require.NoError(t, s.Scan([]byte("k08"), []byte("k13"), func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		return true
	}))
	require.Equal(t, []string{"k08=v8", "k09=v9", "k11=v11", "k12=v12"}, got)
	done := make(chan error, 10)
	for i := range 10 {
		require.NoError(t, s.PutAsync(fmt.Appendf(nil, "a%d", i), []byte("x"), func(_ Token, err error) { done <- err }))
	}
	for range 10 {
		require.NoError(t, <-done)
	}
	v, err := s.Get([]byte("a7"))
	require.NoError(t, err)
	require.Equal(t, "x", string(v))
}

func TestFullThenGC(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice = 1
	o.DeviceSize = 16 * o.SegmentSize
	s := mustOpen(t, o)
	defer s.Close()
	val := make([]byte, 1000)
	var n int
	for ; ; n++ {
		err := s.Put(fmt.Appendf(nil, "k%06d", n), val)
		if err != nil {
			require.ErrorIs(t, err, ErrFull, "after %d puts", n)
			break
		}
		require.Less(t, n, 10000)
	}
	require.Greater(t, n, 500)
	v, err := s.Get([]byte("k000001"))
	require.NoError(t, err)
	require.Len(t, v, 1000)
	for i := 0; i < n; i++ {
		require.NoError(t, s.Delete(fmt.Appendf(nil, "k%06d", i)), "delete %d of %d", i, n)
	}
	rep, err := s.GC()
	require.NoError(t, err)
	require.Greater(t, rep.SegmentsFreed, 0)
	for i := range n / 2 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "again%06d", i), val), "put %d after GC", i)
	}
	require.NoError(t, s.Check())
	st := s.Stats()
	require.Equal(t, int64(n/2), st.Keys)
	require.Greater(t, st.SpaceAmplification, 1.0)
}

func TestForeignFiles(t *testing.T) {
	o := testOptions(t, 1)
	s := mustOpen(t, o)
	require.NoError(t, s.Put([]byte("a"), []byte("b")))
	require.NoError(t, s.Close())
	// Another kind's magic in a segment file: ErrBadFormat naming it.
	p := filepath.Join(o.Devices[0], segName(3))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	copy(b, "braidWAL")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	_, err = Open(o)
	require.ErrorIs(t, err, ErrBadFormat)
	require.ErrorContains(t, err, "walog")
	clear(b[:8])
	require.NoError(t, os.WriteFile(p, b, 0o644))
	// A foreign checkpoint.
	names, _ := osDir(o.CheckpointDir).list()
	require.NotEmpty(t, names)
	cb, err := os.ReadFile(filepath.Join(o.CheckpointDir, names[len(names)-1]))
	require.NoError(t, err)
	copy(cb, "braidCOW")
	require.NoError(t, os.WriteFile(filepath.Join(o.CheckpointDir, names[len(names)-1]), cb, 0o644))
	_, err = Open(o)
	require.ErrorIs(t, err, ErrBadFormat)
	require.False(t, errors.Is(err, ErrCorrupt))
}

// TestCorrupt: a flipped byte in a value is found by Check and by Get
// (ErrCorrupt, never the damaged value), and a flipped metadata entry by
// Check and by the next Open.
func TestCorrupt(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice = 1
	s := mustOpen(t, o)
	require.NoError(t, s.Put([]byte("key"), []byte("the value")))
	require.NoError(t, s.Put([]byte("other"), []byte("fine")))
	l, ok := s.idx.lookup([]byte("key"))
	require.True(t, ok)
	g := s.devs[l.dev].list()[l.seg]
	g.mem[int(l.off)+5] ^= 0x20 // what a stray write or a media error does
	err := s.Check()
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, persist.ErrCorrupt)
	require.ErrorContains(t, err, "checksum")
	_, err = s.Get([]byte("key"))
	require.ErrorIs(t, err, ErrCorrupt)
	v, err := s.Get([]byte("other"))
	require.NoError(t, err)
	require.Equal(t, "fine", string(v))
	g.mem[int(l.off)+5] ^= 0x20
	require.NoError(t, s.Check())
	// A metadata entry of a sealed segment.
	m := s.workers[0].m.g
	m.mem[bodyOff+entrySize+3] ^= 1 // the first put's entry (after the marker)
	err = s.Check()
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "metadata segment")
	m.mem[bodyOff+entrySize+3] ^= 1
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// TestScanChunks: scans across many chunks, stopping early and at bounds.
func TestScanChunks(t *testing.T) {
	o := testOptions(t, 1)
	o.OrderedIndex = true
	s := mustOpen(t, o)
	defer s.Close()
	var b Batch
	for i := range 1000 {
		b.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d", i))
	}
	require.NoError(t, s.Apply(&b))
	n := 0
	require.NoError(t, s.Scan([]byte("k0100"), nil, func(k, v []byte) bool {
		require.Equal(t, fmt.Sprintf("k%04d", 100+n), string(k))
		n++
		return true
	}))
	require.Equal(t, 900, n)
	n = 0
	require.NoError(t, s.Scan([]byte("k0100"), []byte("k0300"), func(k, v []byte) bool { n++; return true }))
	require.Equal(t, 200, n)
	n = 0
	require.NoError(t, s.Scan(nil, nil, func(k, v []byte) bool { n++; return n < 130 }))
	require.Equal(t, 130, n)
}

// TestTokenAfterDrop: a token of a key whose tombstone GC dropped from
// the index (the key in neither the shards nor a merge log) is not the
// latest version: the get takes the slow path and finds nothing, with
// merge logs as with the direct index.
func TestTokenAfterDrop(t *testing.T) {
	for _, merge := range []bool{false, true} {
		o := testOptions(t, 1)
		o.MergeLogs = merge
		s := mustOpen(t, o)
		key := []byte("tk")
		tok, err := s.PutToken(key, []byte("tv"))
		require.NoError(t, err)
		require.NoError(t, s.Delete(key))
		s.drainMerge()
		l, ok := s.idx.lookup(key)
		require.True(t, ok)
		require.True(t, l.tomb())
		require.True(t, s.idx.drop(key, l), "as GC drops a tombstone below the floor")
		_, err = s.GetWithToken(key, tok)
		require.ErrorIs(t, err, ErrNotFound, "merge logs %v", merge)
		require.Equal(t, uint64(1), s.Stats().TokenMisses)
		require.NoError(t, s.Close())
	}
}

// TestReopenWorkers: a store reopened with fewer or more WorkersPerDevice
// than it was written with keeps every value and passes Check. The
// metadata logs of the workers it no longer runs are recorded in every
// checkpoint at their ends, so a reopen after two checkpoints replays
// nothing of them (were they started over, entries behind the checkpoint
// — a key whose tombstone GC dropped since — would come back).
func TestReopenWorkers(t *testing.T) {
	o := testOptions(t, 2)
	want := map[string]string{}
	write := func(s *Store, from, n int) {
		for i := from; i < from+n; i++ {
			k, v := fmt.Sprintf("key%04d", i%300), fmt.Sprintf("value %d of %d", i, from)
			if i%7 == 0 {
				require.NoError(t, s.Delete([]byte(k)))
				delete(want, k)
				continue
			}
			require.NoError(t, s.Put([]byte(k), []byte(v)))
			want[k] = v
		}
	}
	verify := func(s *Store) {
		t.Helper()
		for i := range 300 {
			k := fmt.Sprintf("key%04d", i)
			v, err := s.Get([]byte(k))
			if w, ok := want[k]; ok {
				require.NoError(t, err, k)
				require.Equal(t, w, string(v), k)
			} else {
				require.ErrorIs(t, err, ErrNotFound, k)
			}
		}
		require.NoError(t, s.Check())
	}
	s := mustOpen(t, o) // 2 workers per device
	write(s, 0, 600)
	require.NoError(t, s.Close())

	o.WorkersPerDevice = 1
	s = mustOpen(t, o)
	verify(s)
	write(s, 600, 300)
	require.Len(t, s.orphans, 2, "one log per device of the worker not run")
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Checkpoint()) // the checkpoint of the 2-worker run is gone now
	_, err := s.GC()
	require.NoError(t, err)
	verify(s)
	s.abandon()
	s = mustOpen(t, o)
	require.Zero(t, s.Recovery().Entries, "a log of a worker not run is replayed from its checkpointed end")
	verify(s)
	require.NoError(t, s.Close())

	o.WorkersPerDevice = 3
	s = mustOpen(t, o)
	verify(s)
	require.Empty(t, s.orphans)
	write(s, 900, 300)
	verify(s)
	s.abandon()
	o.WorkersPerDevice = 2
	s = mustOpen(t, o)
	verify(s)
	require.NoError(t, s.Close())
}
