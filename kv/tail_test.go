package kv

import (
	"fmt"
	"slices"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestTornTail plants what a torn batch and a segment's previous use
// leave after a metadata log's end and reopens: the torn batch's bytes
// (a partial entry in the end's unit, a whole entry valid under the
// segment's epoch after a hole) are counted as torn and zeroed; an entry
// of an older epoch further on is zeroed but not counted; a second
// reopen finds nothing.
func TestTornTail(t *testing.T) {
	o := testOptions(t, 1)
	o.SegmentSize, o.DeviceSize, o.WorkersPerDevice, o.NoStartupGC = 1<<20, 8<<20, 1, true
	s := mustOpen(t, o)
	for i := range 10 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%d", i), []byte("v")))
	}
	w := s.workers[0]
	g, end, epoch := w.m.g, w.m.tail, w.m.g.epoch.Load()
	require.NotZero(t, end%unit, "the test wants the end inside a unit")
	copy(g.mem[end:], []byte{0xff, 0xff, 0xff, 0xff, 0xff}) // a partial entry
	valid := end + 24*entrySize                             // after a hole, in a later unit
	encodeEntry(g.mem[valid:], &entry{serial: 1 << 40, klen: 1, off: bodyOff, vlen: 1, crc: 1}, epoch)
	old := end + 200*entrySize // the segment's previous use
	encodeEntry(g.mem[old:], &entry{serial: 7, klen: 1, off: bodyOff, vlen: 1, crc: 1}, epoch+1000)
	require.NotEqual(t, (valid-end&^(unit-1))/unit, (old-end&^(unit-1))/unit)
	s.abandon()

	s = mustOpen(t, o)
	rep := s.Recovery()
	require.Equal(t, 1, rep.Torn)
	require.Equal(t, 2, rep.TornEntries)
	require.Less(t, rep.MaxSerial, uint64(1<<40), "an entry past the end was replayed")
	w = s.workers[0]
	require.Equal(t, end, w.m.tail)
	require.True(t, allZero(w.m.g.mem[end:end+tailReach]), "the tail was not zeroed")
	for i := range 10 {
		v, err := s.Get(fmt.Appendf(nil, "k%d", i))
		require.NoError(t, err)
		require.Equal(t, "v", string(v))
	}
	s.abandon()

	s = mustOpen(t, o)
	rep = s.Recovery()
	require.Zero(t, rep.Torn)
	require.Zero(t, rep.TornEntries)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// TestLongBatchFences: an Apply whose metadata passes maxUnfencedMeta is
// fenced on the way, so that a torn batch stays within the tail repair's
// reach, and is whole after a reopen.
func TestLongBatchFences(t *testing.T) {
	o := testOptions(t, 1)
	o.SegmentSize, o.DeviceSize, o.WorkersPerDevice = 1<<20, 8<<20, 1
	s := mustOpen(t, o)
	n := 2*maxUnfencedMeta/entrySize + 10
	var b Batch
	for i := range n {
		b.Put(fmt.Appendf(nil, "k%06d", i), []byte("v"))
	}
	f0 := s.Stats().Fences
	require.NoError(t, s.Apply(&b))
	st := s.Stats()
	require.GreaterOrEqual(t, st.Fences-f0, uint64(3), "fences for %d entries of one batch", n)
	s.abandon()
	s = mustOpen(t, o)
	require.Equal(t, int64(n), s.Recovery().Keys)
	require.Zero(t, s.Recovery().Torn)
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// TestRadixOkeys: the rebuild's key sort against a comparison sort of the
// same keys (short, inline, long ones sharing 24-byte prefixes, keys
// that are zero-padded prefixes of others, duplicates of a byte at every
// depth).
func TestRadixOkeys(t *testing.T) {
	x := newIndex(nil, 4, 1, true, true)
	rnd := structtest.NewRand(3)
	var want []string
	seen := map[string]bool{}
	for len(want) < 5000 {
		n := 1 + rnd.Intn(40)
		k := make([]byte, n)
		switch len(want) % 10 {
		case 0: // a long key sharing its 24-byte prefix
			n = 25 + rnd.Intn(10)
			k = append([]byte("prefix-of-twenty-four-b."), make([]byte, n-24)...)
		case 1: // a short key and its zero-padded forms (24 of them)
			if len(want) < 240 {
				k = append([]byte("a"), make([]byte, len(want)/10)...)
			}
		}
		for i := range k {
			if len(want)%10 == 0 && i < 24 || len(want)%10 == 1 && len(want) < 240 {
				continue
			}
			switch rnd.Intn(4) {
			case 0:
				k[i] = 0
			case 1:
				k[i] = 'u'
			default:
				k[i] = byte(rnd.Intn(256))
			}
		}
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		want = append(want, string(k))
		h := keyHash(k)
		sh := x.shardOf(h)
		x.shards[sh].t.insert(tag(h), k, loc{serial: 1})
	}
	var ks []okey
	for sh := range x.shards {
		t := &x.shards[sh].t
		for j := range t.slots {
			if t.slots[j].h != 0 {
				ks = append(ks, okeyOf(t.keyOf(j, nil), sh, j))
			}
		}
	}
	got := x.sortedKeys(ks)
	slices.Sort(want)
	require.Equal(t, want, got)
}
