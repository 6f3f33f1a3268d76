package raftstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fptree"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// small is a geometry that fills segments quickly.
var small = Options{Segments: 4, SegmentSize: 8 << 10, StableSize: 8 << 10}

// openTemp opens a store in a new file of a test's temporary directory.
func openTemp(t testing.TB, opts *Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raft.pm")
	s, err := Open(path, fast(opts))
	require.NoError(t, err)
	return s, path
}

// fast returns opts (copied) with the PMem path forced: no msync per
// write on the test file system.
func fast(opts *Options) *Options {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Region = &persist.Options{ForcePMem: true}
	return &o
}

// entry is the deterministic entry of index i in term.
func entry(i, term uint64) *raft.Log {
	l := &raft.Log{Index: i, Term: term, Type: raft.LogType(i % 7), Data: []byte(fmt.Sprintf("entry %d of term %d", i, term))}
	if i%3 == 0 {
		l.Extensions = []byte{byte(i), 1, 2}
	}
	if i%2 == 0 {
		l.AppendedAt = time.Unix(1_700_000_000, int64(i))
	}
	if i%5 == 0 {
		l.Data = bytes.Repeat([]byte{byte(i)}, int(i%300))
	}
	return l
}

func entries(from, to, term uint64) []*raft.Log {
	var ls []*raft.Log
	for i := from; i <= to; i++ {
		ls = append(ls, entry(i, term))
	}
	return ls
}

func equalLog(t testing.TB, want, got *raft.Log) {
	t.Helper()
	require.Equal(t, want.Index, got.Index)
	require.Equal(t, want.Term, got.Term)
	require.Equal(t, want.Type, got.Type)
	require.True(t, bytes.Equal(want.Data, got.Data), "index %d: data %x, want %x", want.Index, got.Data, want.Data)
	require.True(t, bytes.Equal(want.Extensions, got.Extensions), "index %d: extensions", want.Index)
	require.True(t, want.AppendedAt.Equal(got.AppendedAt), "index %d: appended at %v, want %v", want.Index, got.AppendedAt, want.AppendedAt)
}

// sameAs checks that s holds exactly what m (raft's InmemStore) holds.
func sameAs(t testing.TB, s *Store, m *raft.InmemStore) {
	t.Helper()
	f1, _ := m.FirstIndex()
	l1, _ := m.LastIndex()
	f2, err := s.FirstIndex()
	require.NoError(t, err)
	l2, err := s.LastIndex()
	require.NoError(t, err)
	require.Equal(t, [2]uint64{f1, l1}, [2]uint64{f2, l2}, "first and last index")
	for i := max(f1, 1) - 1; i <= l1+1; i++ {
		var want, got raft.Log
		err1 := m.GetLog(i, &want)
		err2 := s.GetLog(i, &got)
		require.Equal(t, err1, err2, "GetLog(%d)", i)
		if err1 == nil {
			equalLog(t, &want, &got)
		}
	}
}

// TestModel runs seeded random sequences of StoreLogs and prefix and
// suffix DeleteRange against raft's InmemStore, reopening now and then.
func TestModel(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 29))
			s, path := openTemp(t, &small)
			m := raft.NewInmemStore()
			term := uint64(1)
			for op := range 400 {
				last, _ := m.LastIndex()
				first, _ := m.FirstIndex()
				switch k := rng.IntN(10); {
				case k < 6:
					n := 1 + rng.IntN(20)
					ls := entries(last+1, last+uint64(n), term)
					require.NoError(t, s.StoreLogs(ls), "op %d", op)
					require.NoError(t, m.StoreLogs(ls))
				case k < 8 && last > 0:
					max := first + uint64(rng.IntN(int(last-first)+1))
					require.NoError(t, s.DeleteRange(first, max), "op %d", op)
					require.NoError(t, m.DeleteRange(first, max))
				case last > 0:
					min := first + uint64(rng.IntN(int(last-first)+1))
					term++
					require.NoError(t, s.DeleteRange(min, last), "op %d", op)
					require.NoError(t, m.DeleteRange(min, last))
				}
				if rng.IntN(40) == 0 {
					require.NoError(t, s.Close())
					var err error
					s, err = Open(path, fast(nil))
					require.NoError(t, err)
				}
				sameAs(t, s, m)
			}
			require.NoError(t, s.Close())
		})
	}
}

func TestStable(t *testing.T) {
	s, path := openTemp(t, &small)
	_, err := s.Get([]byte("CurrentTerm"))
	require.ErrorIs(t, err, ErrKeyNotFound)
	require.Equal(t, "not found", err.Error()) // what hashicorp/raft looks for
	_, err = s.GetUint64([]byte("CurrentTerm"))
	require.ErrorIs(t, err, ErrKeyNotFound)
	want := map[string][]byte{}
	// Enough Sets to compact the 8 KiB stable log many times.
	for i := range 2000 {
		k := fmt.Sprintf("key-%d", i%37)
		v := bytes.Repeat([]byte{byte(i)}, i%50)
		require.NoError(t, s.Set([]byte(k), v))
		want[k] = v
		require.NoError(t, s.SetUint64([]byte("CurrentTerm"), uint64(i)))
	}
	check := func(s *Store) {
		for k, v := range want {
			got, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.True(t, bytes.Equal(v, got), "key %s", k)
		}
		n, err := s.GetUint64([]byte("CurrentTerm"))
		require.NoError(t, err)
		require.Equal(t, uint64(1999), n)
		v, err := s.Get([]byte("CurrentTerm"))
		require.NoError(t, err)
		require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0x07, 0xcf}, v) // big-endian, as raft-boltdb
	}
	check(s)
	require.NoError(t, s.Close())
	s, err = Open(path, fast(nil))
	require.NoError(t, err)
	check(s)
	require.ErrorIs(t, s.Set(nil, []byte("x")), ErrInvalid)
	require.ErrorIs(t, s.Set([]byte("k"), make([]byte, 4096)), ErrInvalid)
	require.NoError(t, s.Set([]byte("short"), []byte("abc")))
	_, err = s.GetUint64([]byte("short"))
	require.ErrorIs(t, err, ErrInvalid)
	require.NoError(t, s.Close())
}

func TestBadInput(t *testing.T) {
	s, _ := openTemp(t, &small)
	defer s.Close()
	require.NoError(t, s.StoreLogs(entries(1, 10, 1)))
	require.ErrorIs(t, s.StoreLog(entry(10, 1)), ErrInvalid, "an index not above the last")
	require.ErrorIs(t, s.StoreLogs([]*raft.Log{entry(11, 1), entry(11, 1)}), ErrInvalid, "indexes that do not grow")
	require.ErrorIs(t, s.StoreLogs([]*raft.Log{nil}), ErrInvalid)
	require.ErrorIs(t, s.StoreLog(&raft.Log{Index: 11, Data: make([]byte, 8<<10)}), ErrInvalid, "a record over a quarter segment")
	require.ErrorIs(t, s.DeleteRange(3, 5), ErrInvalid, "a hole")
	require.NoError(t, s.DeleteRange(20, 30), "past the end: nothing to delete")
	require.NoError(t, s.DeleteRange(5, 3), "an empty range")
	for _, o := range []Options{{Segments: 1}, {SegmentSize: 5000}, {StableSize: 1024}, {Segments: MaxSegments + 1}} {
		_, err := Open(filepath.Join(t.TempDir(), "x"), &o)
		require.ErrorIs(t, err, ErrInvalid, "%+v", o)
		require.ErrorIs(t, err, persist.ErrInvalid)
	}
}

// TestReopenMismatch: options that contradict the recorded geometry are
// ErrInvalid (not ErrBadFormat: the store is one); a region too small,
// ErrTooSmall.
func TestReopenMismatch(t *testing.T) {
	s, path := openTemp(t, &small)
	require.NoError(t, s.StoreLogs(entries(1, 3, 1)))
	require.NoError(t, s.Close())
	_, err := Open(path, &Options{Segments: 5})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, err, persist.ErrInvalid)
	require.NotErrorIs(t, err, persist.ErrBadFormat)
	r, err := persist.Map(filepath.Join(t.TempDir(), "tiny"), &persist.Options{Size: 16 << 10, Create: true})
	require.NoError(t, err)
	defer r.Close()
	_, err = OpenRegion(r, &small)
	require.ErrorIs(t, err, ErrTooSmall)
}

// TestForeignKind: a region that holds another kind of structure, or a
// CoW array that is not a raft store's meta, is ErrBadFormat naming what
// it holds and the raft store, never "not a CoW array".
func TestForeignKind(t *testing.T) {
	for _, c := range []struct {
		found string
		make  func(r *persist.Region) error // creates it and closes it
	}{
		{"a walog log (package walog), not a raft store", func(r *persist.Region) error { return closed(walog.Create(r, nil)) }},
		{"a FP-tree (package fptree), not a raft store", func(r *persist.Region) error { return closed(fptree.Create(r, nil)) }},
		{"a CoW array (package cow) that is not a raft store's meta array", func(r *persist.Region) error {
			return closed(cow.Create(r, &cow.Options{ObjectSize: 64, Count: 4}))
		}},
	} {
		r, err := persist.Map(filepath.Join(t.TempDir(), "x"), &persist.Options{Size: 1 << 20, Create: true, ForcePMem: true})
		require.NoError(t, err)
		require.NoError(t, c.make(r))
		_, err = OpenRegion(r, &small)
		require.ErrorIs(t, err, ErrBadFormat)
		require.ErrorIs(t, err, persist.ErrBadFormat)
		require.Contains(t, err.Error(), "raftstore: not a raft store of this format: offset 0 holds "+c.found)
		require.NoError(t, r.Close())
	}
}

// closed closes what a Create made.
func closed[T interface{ Close() error }](x T, err error) error {
	if err != nil {
		return err
	}
	return x.Close()
}

// TestClosed: every method of a closed store is ErrClosed.
func TestClosed(t *testing.T) {
	s, _ := openTemp(t, &small)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Close(), ErrClosed)
	require.ErrorIs(t, s.Close(), persist.ErrClosed)
	_, err := s.FirstIndex()
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.LastIndex()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.GetLog(1, new(raft.Log)), ErrClosed)
	require.ErrorIs(t, s.StoreLog(entry(1, 1)), ErrClosed)
	require.ErrorIs(t, s.DeleteRange(1, 2), ErrClosed)
	require.ErrorIs(t, s.Set([]byte("k"), nil), ErrClosed)
	_, err = s.Get([]byte("k"))
	require.ErrorIs(t, err, ErrClosed)
}

// TestFull: a log whose segments all hold live entries is ErrFull, and
// takes entries again once raft compacts it.
func TestFull(t *testing.T) {
	s, _ := openTemp(t, &small)
	defer s.Close()
	var err error
	last := uint64(0)
	for err == nil {
		err = s.StoreLogs(entries(last+1, last+10, 1))
		if err == nil {
			last += 10
		}
	}
	require.ErrorIs(t, err, ErrFull)
	require.NoError(t, s.DeleteRange(1, last/2))
	require.NoError(t, s.StoreLogs(entries(last+1, last+10, 1)))
	first, _ := s.FirstIndex()
	require.Equal(t, last/2+1, first)
}

// segmentsUsed returns how many segments hold entries.
func (s *Store) segmentsUsed() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, sg := range s.segs {
		if sg.n > 0 {
			n++
		}
	}
	return n
}
