//go:build linux

package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// Poisoned media on real segment files (persist.Region.Poison: the pages
// made inaccessible, so that a load faults as on PMem). The tests poison
// a page of a data segment, of a metadata segment, or a segment's header,
// first under the running store, then at a reopen (persist's Mapped hook
// poisons the segment as it is mapped) after a stop without a checkpoint,
// so that recovery replays the poisoned logs.

const poisonKeys = 400

func poisonValue(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 150) }

func poisonStore(t *testing.T) (*Options, *Store) {
	o := testOptions(t, 1)
	o.WorkersPerDevice = 1
	o.NoStartupGC = false
	s := mustOpen(t, o)
	for i := range poisonKeys {
		require.NoError(t, s.Put(fmt.Appendf(nil, "key%04d", i), poisonValue(i)))
	}
	return o, s
}

// where returns the segment of key i's record and the record's range.
func where(s *Store, i int) (*segment, int, int) {
	l, _ := s.idx.lookup(fmt.Appendf(nil, "key%04d", i))
	return s.devs[l.dev].list()[l.seg], int(l.off), int(l.klen) + l.valueLen()
}

// stopNoCheckpoint stops s as a crash would leave it: no checkpoint.
func stopNoCheckpoint(s *Store) {
	s.ops.Lock()
	s.closed.Store(true)
	s.ops.Unlock()
	s.shutdown()
}

// reopenPoisoned reopens o's store with page off of segment seg poisoned
// as it is mapped.
func reopenPoisoned(t *testing.T, o *Options, seg, off int) (*Store, []persist.Range) {
	t.Helper()
	path := filepath.Join(o.Devices[0], segName(seg))
	var bad []persist.Range
	poisoned := *o
	poisoned.Faults = &persist.Faults{Mapped: func(r *persist.Region) {
		if r.Info().Path == path {
			require.NoError(t, r.Poison(off, 1))
			bad = r.Poisoned()
		}
	}}
	s := mustOpen(t, &poisoned)
	require.NotEmpty(t, bad, "segment %d was not mapped", seg)
	return s, bad
}

// servedOrLost checks every key: outside lost it reads its value; inside,
// ErrMedia (the index still names the unreadable record) or ErrNotFound
// (recovery skipped its only version) — never another value.
func servedOrLost(t *testing.T, s *Store, lost func(i int) bool) (served, gone int) {
	t.Helper()
	for i := range poisonKeys {
		v, err := s.Get(fmt.Appendf(nil, "key%04d", i))
		switch {
		case lost(i) && (errors.Is(err, persist.ErrMedia) || errors.Is(err, ErrNotFound)):
			gone++
		case lost(i):
			t.Fatalf("key %d in the poisoned range: %q, %v", i, v, err)
		default:
			require.NoError(t, err, "key %d outside the poisoned range", i)
			require.Equal(t, poisonValue(i), v, "key %d", i)
			served++
		}
	}
	return served, gone
}

func TestPoisonDataSegment(t *testing.T) {
	o, s := poisonStore(t)
	g, off, _ := where(s, poisonKeys/4)
	page := off &^ (os.Getpagesize() - 1)
	require.NoError(t, g.r.Poison(page, 1))
	bad := g.r.Poisoned()
	seg := g.idx
	inBad := func(i int) bool {
		h, o, n := where(s, i)
		return h == g && structtest.Overlaps(bad, o, n)
	}
	lost := map[int]bool{}
	for i := range poisonKeys {
		if inBad(i) {
			lost[i] = true
			_, err := s.Get(fmt.Appendf(nil, "key%04d", i))
			require.NoError(t, structtest.MediaIn(err, bad), "key %d", i)
			require.Contains(t, err.Error(), fmt.Sprintf("segment %d: the record at offset", seg))
		}
	}
	require.NotEmpty(t, lost)
	served, _ := servedOrLost(t, s, func(i int) bool { return lost[i] })
	require.Equal(t, poisonKeys-len(lost), served)
	err := s.Check()
	require.ErrorIs(t, err, persist.ErrMedia)
	require.Contains(t, err.Error(), o.Devices[0])
	// The cleaner leaves the poisoned segment alone; puts go on.
	_, err = s.GC()
	require.NoError(t, err)
	require.NoError(t, s.Put([]byte("new"), []byte("value")))
	stopNoCheckpoint(s)

	// Recovery over the poisoned segment: its unreadable entries skipped
	// and counted, every other key served, the store writable.
	s, _ = reopenPoisoned(t, o, seg, page)
	defer s.Close()
	rep := s.Recovery()
	require.Equal(t, 1, rep.PoisonedSegments)
	require.Equal(t, len(lost), rep.MediaLost, "%+v", rep)
	served, gone := servedOrLost(t, s, func(i int) bool { return lost[i] })
	require.Equal(t, poisonKeys-len(lost), served)
	require.Equal(t, len(lost), gone)
	for i := range lost {
		_, err := s.Get(fmt.Appendf(nil, "key%04d", i))
		require.ErrorIs(t, err, ErrNotFound, "key %d: its only version was unreadable", i)
	}
	require.NoError(t, s.Put([]byte("after"), []byte("reopen")))
	v, err := s.Get([]byte("new"))
	require.NoError(t, err)
	require.Equal(t, "value", string(v))
}

func TestPoisonMetadataSegment(t *testing.T) {
	o, s := poisonStore(t)
	m := s.workers[0].m.g
	seg := m.idx
	// A page in the middle of the metadata log: entries of 24 bytes.
	page := (bodyOff + poisonKeys*entrySize/2) &^ (os.Getpagesize() - 1)
	// Where each key's entry is: by its serial.
	at := map[uint64]int{}
	for off := bodyOff; off+entrySize <= int(m.tail.Load()); off += entrySize {
		if e, st := decodeEntry(m.mem[off:off+entrySize], m.epoch.Load()); st == entryOK && !e.marker() {
			at[e.serial] = off
		}
	}
	entryOf := make([]int, poisonKeys)
	for i := range poisonKeys {
		l, _ := s.idx.lookup(fmt.Appendf(nil, "key%04d", i))
		entryOf[i] = at[l.serial]
		require.NotZero(t, entryOf[i], "key %d's entry", i)
	}
	stopNoCheckpoint(s)
	s, bad := reopenPoisoned(t, o, seg, page)
	defer s.Close()
	rep := s.Recovery()
	require.Equal(t, 1, rep.PoisonedSegments)
	require.Greater(t, rep.MediaLost, 0, "%+v", rep)
	lost := func(i int) bool { return structtest.Overlaps(bad, entryOf[i], entrySize) }
	served, gone := servedOrLost(t, s, lost)
	require.Greater(t, served, poisonKeys/2)
	// MediaLost counts the page's slots: the keys' entries and the
	// data segments' markers it held.
	require.Positive(t, gone)
	require.LessOrEqual(t, gone, rep.MediaLost, "%+v", rep)
	require.GreaterOrEqual(t, gone, rep.MediaLost-2, "%+v", rep)
	err := s.Check()
	require.NoError(t, structtest.MediaIn(err, bad))
	require.Contains(t, err.Error(), fmt.Sprintf("metadata segment %d", seg))
	// The worker does not continue the poisoned log: new puts go to a new
	// one, and survive another reopen.
	for i := range 50 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "more%02d", i), []byte("x")))
	}
	require.NotEqual(t, seg, s.workers[0].m.g.idx)
}

func TestPoisonSegmentHeader(t *testing.T) {
	o, s := poisonStore(t)
	g, _, _ := where(s, 0)
	seg := g.idx
	lost := map[int]bool{}
	for i := range poisonKeys {
		if h, _, _ := where(s, i); h == g {
			lost[i] = true
		}
	}
	stopNoCheckpoint(s)
	s, _ = reopenPoisoned(t, o, seg, 0)
	defer s.Close()
	rep := s.Recovery()
	require.Equal(t, 1, rep.LostSegments)
	require.Equal(t, len(lost), rep.MediaLost, "%+v", rep)
	served, gone := servedOrLost(t, s, func(i int) bool { return lost[i] })
	require.Equal(t, poisonKeys-len(lost), served)
	require.Equal(t, len(lost), gone)
	require.NoError(t, s.Check())
	for i := range 50 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "more%02d", i), []byte("x")))
	}
}
