package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/stretchr/testify/require"
)

// segFile is the file of segment seg of device dev.
func segFile(o *Options, dev, seg int) string { return filepath.Join(o.Devices[dev], segName(seg)) }

// patchFile applies fn to the bytes of a closed store's file.
func patchFile(t *testing.T, path string, fn func(b []byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	fn(b)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestDamagedValueCostsItsKey: one flipped value byte of a live record in
// a sealed data segment with garbage (a victim of the start-up GC pass).
// Open works — the pass does not move the record, keeps its segment and
// goes on —, the key reads ErrCorrupt, Check reports it, every other key
// reads its value, and later passes succeed and skip the segment. (The
// start-up pass failed Open with ErrCorrupt.)
func TestDamagedValueCostsItsKey(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice = 1
	s := mustOpen(t, o)
	want := map[string][]byte{}
	for i := range 160 {
		k := fmt.Sprintf("k%03d", min(i, 20+i%20)) // k000..k019 once, the others again and again
		v := append(fmt.Appendf(nil, "%s-%d-", k, i), bytes.Repeat([]byte{'v'}, 900)...)
		require.NoError(t, s.Put([]byte(k), v))
		want[k] = v
	}
	// A key whose latest version lies in a sealed segment with garbage.
	var victim string
	var at loc
	for k := range want {
		l, ok := s.idx.lookup([]byte(k))
		require.True(t, ok)
		g := s.devs[0].list()[l.seg]
		if g.sealed && g.live.Load() < int64(g.size-bodyOff)*9/10 {
			victim, at = k, l
			break
		}
	}
	require.NotEmpty(t, victim, "no live record in a sealed segment with garbage")
	require.NoError(t, s.Close())
	patchFile(t, segFile(o, 0, int(at.seg)), func(b []byte) { b[int(at.off)+int(at.klen)+3] ^= 0x10 })

	for round := range 2 {
		s, err := Open(o)
		require.NoError(t, err, "round %d: open with a damaged value", round)
		require.Equal(t, 1, s.Recovery().GC.Quarantined, "round %d", round)
		_, err = s.Get([]byte(victim))
		require.ErrorIs(t, err, ErrCorrupt, "round %d: the damaged key", round)
		for k, v := range want {
			if k != victim {
				got, err := s.Get([]byte(k))
				require.NoError(t, err, "round %d: %s", round, k)
				require.Equal(t, v, got)
			}
		}
		require.ErrorIs(t, s.Check(), ErrCorrupt, "round %d", round)
		for range 2 {
			rep, err := s.GC()
			require.NoError(t, err, "round %d: a later pass", round)
			require.Zero(t, rep.Quarantined, "round %d: the quarantined segment is not picked again", round)
		}
		_, err = s.Get([]byte(victim))
		require.ErrorIs(t, err, ErrCorrupt, "round %d: the damaged key after the passes", round)
		require.NoError(t, s.Close())
	}
}

// TestZeroedDataHeader: the 64-byte header of a sealed data segment of a
// closed store zeroed. Open works and reports it (ZeroedHeaders,
// DamagedKeys), the keys the checkpoint had there read ErrCorrupt — not
// ErrNotFound —, Check reports it, every other key reads, and a second
// reopen says the same. (Before: Open, Recovery and Check said nothing
// and the keys read ErrNotFound, as if the cleaner had freed the segment.)
func TestZeroedDataHeader(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice, o.NoStartupGC = 1, true
	s := mustOpen(t, o)
	want := map[string][]byte{}
	for i := range 150 {
		k := fmt.Sprintf("k%03d", i)
		v := append(fmt.Appendf(nil, "%s-", k), bytes.Repeat([]byte{'v'}, 900)...)
		require.NoError(t, s.Put([]byte(k), v))
		want[k] = v
	}
	first, ok := s.idx.lookup([]byte("k000"))
	require.True(t, ok)
	require.True(t, s.devs[0].list()[first.seg].sealed)
	var there []string
	for k := range want {
		if l, _ := s.idx.lookup([]byte(k)); l.seg == first.seg {
			there = append(there, k)
		}
	}
	require.NoError(t, s.Close())
	patchFile(t, segFile(o, 0, int(first.seg)), func(b []byte) { clear(b[:64]) })

	for round := range 2 {
		s := mustOpen(t, o)
		rep := s.Recovery()
		require.Equal(t, 1, rep.ZeroedHeaders, "round %d", round)
		require.EqualValues(t, len(there), rep.DamagedKeys, "round %d", round)
		for k, v := range want {
			got, err := s.Get([]byte(k))
			if l, _ := s.idx.lookup([]byte(k)); l.seg == first.seg {
				require.ErrorIs(t, err, ErrCorrupt, "round %d: key %s of the zeroed segment", round, k)
				continue
			}
			require.NoError(t, err, "round %d: %s", round, k)
			require.Equal(t, v, got)
		}
		require.ErrorIs(t, s.Check(), ErrCorrupt, "round %d", round)
		_, err := s.GC()
		require.NoError(t, err)
		require.NoError(t, s.Put([]byte("new"), []byte("value")), "round %d: the store takes writes", round)
		require.NoError(t, s.Close())
	}
}

// crashedLog writes n single puts (one batch each) to a one-worker store
// and abandons it (no checkpoint: the log is all there is), returning the
// metadata segment, the log's end and the values.
func crashedLog(t *testing.T, o *Options, n int) (seg, end int, want map[string][]byte) {
	s := mustOpen(t, o)
	want = map[string][]byte{}
	for i := range n {
		k := fmt.Sprintf("k%04d", i)
		v := fmt.Appendf(nil, "value of %s", k)
		require.NoError(t, s.Put([]byte(k), v))
		want[k] = v
	}
	w := s.workers[0]
	seg, end = w.m.g.idx, w.m.tail
	s.abandon()
	return seg, end, want
}

// TestDamageMidLogFailsOpen: damage to the last metadata segment of a
// crashed store's log, within its last 128 KiB (the reach of a torn
// batch) but with later batches after it: a flipped byte in an entry, a
// zeroed entry, a zeroed 4 KiB page. Open fails with ErrCorrupt naming
// the place and writes nothing. (Before, recovery took each for a torn
// tail: dropped every later entry and zeroed them on the media.)
func TestDamageMidLogFailsOpen(t *testing.T) {
	for _, tc := range []struct {
		name string
		hit  func(b []byte, at int)
	}{
		{"flipped byte", func(b []byte, at int) { b[at+5] ^= 0x40 }},
		{"zeroed entry", func(b []byte, at int) { clear(b[at : at+entrySize]) }},
		{"zeroed page", func(b []byte, at int) { clear(b[at&^4095 : at&^4095+4096]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t, 1)
			o.WorkersPerDevice, o.NoStartupGC = 1, true
			o.SegmentSize, o.DeviceSize = 1<<20, 8<<20
			seg, end, _ := crashedLog(t, o, 600)
			at := bodyOff + entrySize*((end-bodyOff)/entrySize/2) // an entry in the middle
			require.Less(t, end-at, tailReach, "the damage lies within a torn batch's reach")
			path := segFile(o, 0, seg)
			patchFile(t, path, func(b []byte) { tc.hit(b, at) })
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			_, err = Open(o)
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorContains(t, err, "before the end of its log")
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, bytes.Equal(before, after), "a refused Open wrote to the log")
		})
	}
}

// TestTornTailStillRepaired: the same store with the damage after the
// last batch start (what a torn last batch leaves): the tail is repaired
// and every acknowledged put reads.
func TestTornTailStillRepaired(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice, o.NoStartupGC = 1, true
	seg, end, want := crashedLog(t, o, 200)
	patchFile(t, segFile(o, 0, seg), func(b []byte) {
		copy(b[end:], []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}) // a torn entry after the end
	})
	s := mustOpen(t, o)
	require.Equal(t, 1, s.Recovery().Torn)
	for k, v := range want {
		got, err := s.Get([]byte(k))
		require.NoError(t, err, k)
		require.Equal(t, v, got)
	}
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
}

// TestFormat1Refused: a metadata segment of format 1 (its header without
// the batch-start flag) is ErrBadFormat naming both formats.
func TestFormat1Refused(t *testing.T) {
	o := testOptions(t, 1)
	seg, _, _ := crashedLog(t, o, 10)
	patchFile(t, segFile(o, 0, seg), func(b []byte) {
		h, err := decodeSegHeader(b)
		require.NoError(t, err)
		f := h.fields()
		f.Flags = 0
		pmheader.Encode(b, &f)
		binary.LittleEndian.PutUint64(b, metaKind.Magic)
	})
	_, err := Open(o)
	require.ErrorIs(t, err, ErrBadFormat)
	require.ErrorContains(t, err, "format 1")
	require.ErrorContains(t, err, "format 2")
}

// TestLostSegmentFile: the file of a data segment in use (the device's
// last) removed from a closed store. Open makes it again as zeros (kv.id
// counts the device's files), and the checkpoint's entries naming it are
// kept and reported: their keys read ErrCorrupt, not ErrNotFound.
func TestLostSegmentFile(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice, o.NoStartupGC = 1, true
	s := mustOpen(t, o)
	last := int(o.DeviceSize/o.SegmentSize) - 1
	// The pool hands out segments in file order (the device grows to
	// DeviceSize) and keeps 2 back from puts; the freed ones queue after
	// them: fill, free, fill again.
	val := bytes.Repeat([]byte{'v'}, 500)
	for i := 0; len(s.devs[0].list()) <= last || s.devs[0].freeCount() > reservePut+1; i++ {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%04d", i%40), val))
	}
	_, err := s.GC()
	require.NoError(t, err)
	for i := 0; s.devs[0].list()[last].kind != kindData; i++ {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%04d", i%40), val))
	}
	require.NoError(t, s.Put([]byte("there"), []byte("value")))
	l, _ := s.idx.lookup([]byte("there"))
	require.EqualValues(t, last, l.seg)
	require.NoError(t, s.Close())
	require.NoError(t, os.Remove(segFile(o, 0, last)))
	s = mustOpen(t, o)
	require.Equal(t, 1, s.Recovery().ZeroedHeaders, "kv.id's file count: the file is made again, its references reported")
	_, err = s.Get([]byte("there"))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, s.Check(), ErrCorrupt)
	require.NoError(t, s.Close())
}

// TestZeroedLogEndReported: the last page of a crashed store's metadata
// log zeroed, with the log's end in it. Nothing after it tells the wiped
// entries from a log that ended there (the limit the README states), but
// the data log still holds the records they committed, past the last one
// the log now commits: RecoveryReport.DataPastEnd says so. (Before, the
// keys came back at older values or not at all, nothing reported.)
func TestZeroedLogEndReported(t *testing.T) {
	o := testOptions(t, 1)
	o.WorkersPerDevice, o.NoStartupGC = 1, true
	seg, end, want := crashedLog(t, o, 200)
	page := end &^ 4095
	require.Greater(t, page, bodyOff)
	patchFile(t, segFile(o, 0, seg), func(b []byte) { clear(b[page:end]) })
	s := mustOpen(t, o)
	rep := s.Recovery()
	require.Equal(t, 1, rep.DataPastEnd, "%+v", rep)
	lost := 0
	for k := range want {
		if _, err := s.Get([]byte(k)); err != nil {
			lost++
		}
	}
	require.Positive(t, lost, "the test wants the page to hold entries")
	t.Logf("%d keys lost; torn %d, data past end %d", lost, rep.Torn, rep.DataPastEnd)
	require.NoError(t, s.Close())
}
