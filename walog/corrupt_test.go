package walog_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// offsets returns the region offset of each entry of a log at offset 0
// whose entries have the given sizes and were appended one by one.
func offsets(f walog.Format, align int, sizes []int) []int {
	offs := make([]int, len(sizes))
	off := walog.HeaderSize
	for i, n := range sizes {
		offs[i] = off
		off = (off + walog.Footprint(f, n) + align - 1) &^ (align - 1)
	}
	return offs
}

// TestCorruptMiddle damages one acknowledged entry in the middle of a log
// (the first case found: 100 entries, a byte of entry 26 flipped; and for
// RAWL a validity bit, and the validity bit of a first word): Open reports
// the corruption, says where, and writes nothing — the 74 acknowledged
// entries after it stay on the media. Options.Salvage then keeps the 26
// before it, and the log works on.
func TestCorruptMiddle(t *testing.T) {
	type hit struct {
		name string
		at   int // byte offset inside entry 26
		x    byte
	}
	for _, f := range formats {
		hits := []hit{{"data byte", 18, 0x40}, {"first word", 1, 0x01}, {"sequence number", 8, 0x01}}
		if f == walog.RAWL {
			hits = append(hits, hit{"validity bit of a data word", 16, 0x01}, hit{"validity bit of the first word", 0, 0x01})
		}
		for _, h := range hits {
			t.Run(fmt.Sprintf("%s/%s", f, h.name), func(t *testing.T) {
				r := anon(t, 64<<10)
				mem := r.Bytes()
				o := &walog.Options{Format: f, Chunk: 4096}
				l := mustCreate(t, r, o)
				var want []entry
				var sizes []int
				for i := range 100 {
					p := fmt.Appendf(nil, "entry-%03d", i)
					seq, err := l.Append(p)
					require.NoError(t, err)
					want = append(want, entry{seq, p})
					sizes = append(sizes, len(p))
				}
				require.NoError(t, l.Close())
				at := offsets(f, 8, sizes)[26]
				mem[at+h.at] ^= h.x
				before := bytes.Clone(mem)

				_, err := walog.Open(r, nil)
				require.ErrorIs(t, err, walog.ErrCorrupt)
				require.ErrorIs(t, err, persist.ErrCorrupt)
				require.Contains(t, err.Error(), fmt.Sprint(at), "the error says where")
				require.Contains(t, err.Error(), "26 entries")
				require.Equal(t, before, mem, "an Open that reports corruption writes nothing")
				t.Log(err)

				l, err = walog.Open(r, &walog.Options{Salvage: true})
				require.NoError(t, err)
				rep := l.Recovery()
				require.True(t, rep.Salvaged)
				require.ErrorIs(t, rep.Stop, persist.ErrCorrupt)
				require.Equal(t, at, rep.StopOffset)
				require.Equal(t, want[:26], all(t, l))
				require.Contains(t, rep.String(), "SALVAGED")

				l.Close() // a restart: the old handle goes first
				l = mustOpen(t, r, nil)
				require.Equal(t, want[:26], all(t, l))
				seq, err := l.Append([]byte("after"))
				require.NoError(t, err)
				require.Equal(t, uint64(27), seq)
			})
		}
	}
}

// TestFlipSweep flips one byte (five patterns) at every offset of a closed
// log of 20 entries and of some free space after it, and opens it: with
// checksums every flip is reported (ErrCorrupt, nothing written) or
// harmless (padding, free space) — none returns wrong data and, the tail
// being recorded at Close, none drops entries as a torn tail (format 2,
// without that record, dropped the last one or two entries for 26 of
// 5,360 RAWL flips and 5 of 5,360 Classic ones). The raw formats
// (NoChecksum) detect torn writes only: the sweep counts the wrong data
// they return.
func TestFlipSweep(t *testing.T) {
	for _, raw := range []bool{false, true} {
		for _, f := range formats {
			t.Run(fmt.Sprintf("%s/raw=%v", f, raw), func(t *testing.T) {
				r := anon(t, 8<<10)
				mem := r.Bytes()
				o := &walog.Options{Format: f, Chunk: 2048, NoChecksum: raw}
				l := mustCreate(t, r, o)
				var want []entry
				var sizes []int
				for i := range 20 {
					p := fmt.Appendf(nil, "entry-%03d-%s", i, bytes.Repeat([]byte{'x'}, i))
					seq, err := l.Append(p)
					require.NoError(t, err)
					want = append(want, entry{seq, p})
					sizes = append(sizes, len(p))
				}
				offs := offsets(f, 8, sizes)
				last := offs[18]
				tail := walog.HeaderSize + l.Stats().Used
				l.Close()
				patterns := []byte{0x01, 0x03, 0x5a, 0x80, 0xff}
				if raw {
					patterns = []byte{0x5a}
				}
				orig := bytes.Clone(mem)
				var reported, harmless, lost, wrong, lostEarly int
				for off := walog.HeaderSize; off < tail+128; off++ {
					for _, x := range patterns {
						copy(mem, orig)
						mem[off] ^= x
						flipped := bytes.Clone(mem)
						l, err := walog.Open(r, nil)
						if err != nil {
							require.ErrorIs(t, err, persist.ErrCorrupt, "flip %#x at %d", x, off)
							require.Equal(t, flipped, mem, "flip %#x at %d: Open reported corruption but wrote", x, off)
							reported++
							continue
						}
						got := all(t, l)
						l.Close()
						switch {
						case len(got) > len(want) || !slicesEqualEntries(got, want[:len(got)]):
							wrong++
							if !raw {
								t.Errorf("flip %#x at %d: wrong data returned: %v", x, off, l.Recovery())
							}
						case len(got) < len(want):
							lost++
							if off < last {
								lostEarly++
							}
							if off < last && !raw {
								t.Errorf("flip %#x at %d: entries from %d dropped as a torn tail: %v", x, off, len(got), l.Recovery())
							}
						default:
							harmless++
						}
					}
				}
				t.Logf("%s raw=%v: %d flips reported as corruption, %d harmless, %d dropped entries at the end as a torn tail, %d returned wrong data",
					f, raw, reported, harmless, lost, wrong)
				if !raw {
					require.Zero(t, wrong)
					require.Zero(t, lost, "the log was closed cleanly: no flip passes as a torn tail")
				}
			})
		}
	}
}

func slicesEqualEntries(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].seq != b[i].seq || !bytes.Equal(a[i].data, b[i].data) {
			return false
		}
	}
	return true
}

// TestHeaderWordFlip flips every bit of the header's changing words (the
// prepared end, pass, floors, dirty range, clean-shutdown tail), in one of
// its two copies or in both: each flip is caught by the word's check, so
// a flipped floor cannot discard the entries or a flipped pass hide them.
// With one copy hit, Open reads the header from the other and rewrites
// the damaged one (Recovery().Header says so); with both hit it reports
// corruption and writes nothing.
func TestHeaderWordFlip(t *testing.T) {
	for _, f := range formats {
		r := anon(t, 16<<10)
		mem := r.Bytes()
		l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 1024})
		var want []entry
		for i := range 10 {
			p := fmt.Appendf(nil, "e%d", i)
			seq, err := l.Append(p)
			require.NoError(t, err)
			want = append(want, entry{seq, p})
		}
		require.NoError(t, l.Close())
		orig := bytes.Clone(mem)
		for off := 64; off < 120; off++ {
			for b := range 8 {
				for _, which := range []string{"header", "copy", "both"} {
					copy(mem, orig)
					if which != "copy" {
						mem[off] ^= 1 << b
					}
					if which != "header" {
						mem[walog.BlockSize+off] ^= 1 << b
					}
					hit := bytes.Clone(mem)
					l, err := walog.Open(r, nil)
					if which == "both" {
						require.ErrorIs(t, err, walog.ErrCorrupt, "%s: bit %d of header byte %d in both copies", f, b, off)
						require.Equal(t, hit, mem, "an Open that reports corruption writes nothing")
						continue
					}
					require.NoError(t, err, "%s: bit %d of header byte %d in the %s", f, b, off, which)
					require.Equal(t, want, all(t, l))
					rep := l.Recovery()
					require.NotEmpty(t, rep.Header, "%s: bit %d of byte %d in the %s", f, b, off, which)
					require.True(t, rep.Closed)
					require.NoError(t, l.Check(), "both copies rewritten")
					require.NoError(t, l.Close())
				}
			}
		}
		copy(mem, orig)
		mem[3] ^= 0x10 // the magic, in an otherwise sound header: the copy holds
		l, err := walog.Open(r, nil)
		require.NoError(t, err)
		require.Contains(t, l.Recovery().Header, "magic")
		require.NoError(t, l.Close())
		mem[3] ^= 0x10
		mem[walog.BlockSize+3] ^= 0x10
		_, err = walog.Open(r, nil)
		require.ErrorIs(t, err, walog.ErrCorrupt, "the magic of both copies")
	}
}

func closedRegion(t *testing.T) *persist.Region {
	r, err := persist.Anonymous(1<<20, nil)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	return r
}

// TestClosedRegion: every entry point given a closed region returns an
// error wrapping persist.ErrClosed (no panic, no fault), and so does a log
// whose region was closed under it.
func TestClosedRegion(t *testing.T) {
	_, err := walog.Create(closedRegion(t), nil)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = walog.Open(closedRegion(t), nil)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = walog.CreateSet([]walog.Part{{Region: closedRegion(t)}}, nil)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = walog.OpenSet([]walog.Part{{Region: closedRegion(t)}}, nil)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = walog.Split(closedRegion(t), 2)
	require.ErrorIs(t, err, persist.ErrClosed)

	for _, f := range formats {
		r, err := persist.Anonymous(1<<20, nil)
		require.NoError(t, err)
		l := mustCreate(t, r, &walog.Options{Format: f})
		_, err = l.Append([]byte("hello"))
		require.NoError(t, err)
		it := l.Iter()
		require.NoError(t, r.Close()) // wrong order: the log first
		_, err = l.Append([]byte("hello"))
		require.ErrorIs(t, err, persist.ErrClosed)
		_, err = l.AppendBatch([][]byte{[]byte("a"), []byte("b")})
		require.ErrorIs(t, err, persist.ErrClosed)
		require.ErrorIs(t, l.Reset(), persist.ErrClosed)
		require.ErrorIs(t, l.Truncate(1), persist.ErrClosed)
		require.False(t, it.Next())
		require.ErrorIs(t, it.Err(), persist.ErrClosed)
		require.NoError(t, l.Close())
	}
}

// closedWord is the offset of the clean-shutdown word in each copy of the
// header.
const closedWord = 112

// TestReadOnly maps a log's file read-only: Create refuses (a store would
// be a fatal fault), Open of a cleanly closed log succeeds and reads, its
// writes fail with persist.ErrReadOnly, and Open of a log whose recovery
// must write fails with it.
func TestReadOnly(t *testing.T) {
	dir := structtest.TempShm(t)
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("walog-ro-%d-%s.pm", os.Getpid(), f))
			t.Cleanup(func() { os.Remove(path) })
			rw, err := persist.Map(path, &persist.Options{Size: 1 << 20, Create: true})
			require.NoError(t, err)
			l := mustCreate(t, rw, &walog.Options{Format: f, Chunk: 4096})
			var want []entry
			for i := range 10 {
				p := fmt.Appendf(nil, "entry %d", i)
				seq, err := l.Append(p)
				require.NoError(t, err)
				want = append(want, entry{seq, p})
			}
			tail := l.Stats().Used + walog.HeaderSize
			require.NoError(t, l.Close())
			require.NoError(t, rw.Close())

			ro, err := persist.Map(path, &persist.Options{ReadOnly: true})
			require.NoError(t, err)
			_, err = walog.Create(ro, nil)
			require.ErrorIs(t, err, persist.ErrReadOnly)
			_, err = walog.CreateSet([]walog.Part{{Region: ro}}, nil)
			require.ErrorIs(t, err, persist.ErrReadOnly)
			l.Close() // a restart: the old handle goes first
			l, err = walog.Open(ro, nil)
			require.NoError(t, err)
			require.Equal(t, want, all(t, l))
			_, err = l.Append([]byte("x"))
			require.ErrorIs(t, err, persist.ErrReadOnly)
			require.ErrorIs(t, l.Reset(), persist.ErrReadOnly)
			require.ErrorIs(t, l.Truncate(3), persist.ErrReadOnly)
			require.NoError(t, l.Close())
			require.NoError(t, ro.Close())

			// Leftovers of a torn append past the tail, after a crash (the
			// clean-shutdown word in both copies of the header is 0, as in
			// a log that was open): recovery must clean them, which a
			// read-only region cannot.
			rw, err = persist.Map(path, nil)
			require.NoError(t, err)
			rw.Bytes()[tail+40] = 0xff
			clear(rw.Bytes()[closedWord : closedWord+8])
			clear(rw.Bytes()[walog.BlockSize+closedWord : walog.BlockSize+closedWord+8])
			require.NoError(t, rw.Close())
			ro, err = persist.Map(path, &persist.Options{ReadOnly: true})
			require.NoError(t, err)
			_, err = walog.Open(ro, nil)
			require.ErrorIs(t, err, persist.ErrReadOnly)
			require.NoError(t, ro.Close())
			rw, err = persist.Map(path, nil)
			require.NoError(t, err)
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, rw, nil)
			require.Equal(t, want, all(t, l))
			require.Positive(t, l.Recovery().Scrubbed)
			require.NoError(t, rw.Close())
		})
	}
}

// TestMaxBatch: a batch larger than MaxBatch is ErrTooLarge and appends
// nothing; MaxBatch is recorded in the header and checked by Open.
func TestMaxBatch(t *testing.T) {
	for _, f := range formats {
		r := anon(t, 1<<20)
		_, err := walog.Create(r, &walog.Options{Format: f, MaxEntry: 1000, MaxBatch: 500})
		require.ErrorIs(t, err, walog.ErrInvalid, "MaxBatch below one entry of MaxEntry")
		_, err = walog.Create(r, &walog.Options{Format: f, MaxBatch: walog.MaxBatchLimit + 1})
		require.ErrorIs(t, err, walog.ErrInvalid)
		mb := walog.BatchNeed(f, 8, 1000, 1000)
		l := mustCreate(t, r, &walog.Options{Format: f, MaxEntry: 1000, MaxBatch: mb})
		require.Equal(t, mb, l.Stats().MaxBatch)
		_, err = l.AppendBatch([][]byte{make([]byte, 1000), make([]byte, 1000)})
		require.NoError(t, err)
		_, err = l.AppendBatch([][]byte{make([]byte, 1000), make([]byte, 1000), {1}})
		require.ErrorIs(t, err, walog.ErrTooLarge)
		require.Equal(t, 2, l.Stats().Entries)
		_, err = walog.Open(r, &walog.Options{MaxBatch: mb + 8})
		require.ErrorIs(t, err, walog.ErrInvalid)
		l.Close() // a restart: the old handle goes first
		l = mustOpen(t, r, &walog.Options{MaxBatch: mb})
		require.Equal(t, 2, l.Stats().Entries)
		require.True(t, l.Stats().Checksum)

		l.Close() // a restart: the old handle goes first
		l = mustCreate(t, r, &walog.Options{Format: f, MaxEntry: 1000})
		require.Equal(t, walog.DefaultMaxBatch, l.Stats().MaxBatch)
		l.Close() // a restart: the old handle goes first
		l = mustCreate(t, r, &walog.Options{Format: f, MaxEntry: 1000, Size: 4096})
		require.Equal(t, 4096-walog.HeaderSize, l.Stats().MaxBatch, "clamped to the log")
	}
}

// TestSetReport: a member's report says its numbers are the set's.
func TestSetReport(t *testing.T) {
	r := anon(t, 1<<20)
	parts, err := walog.Split(r, 3)
	require.NoError(t, err)
	s, err := walog.CreateSet(parts, nil)
	require.NoError(t, err)
	for i := range 30 {
		_, err := s.Log(i % 3).Append([]byte("x"))
		require.NoError(t, err)
	}
	s.Close() // a restart: the old handle goes first
	s, err = walog.OpenSet(parts, nil)
	require.NoError(t, err)
	rep := s.Recovery()[1]
	require.Equal(t, 1, rep.Member)
	require.Equal(t, 3, rep.Members)
	require.Equal(t, uint64(2), rep.FirstSeq)
	require.Equal(t, uint64(29), rep.LastSeq)
	require.Equal(t, uint64(31), rep.NextSeq)
	str := rep.String()
	require.Contains(t, str, "set member 1 of 3")
	require.Contains(t, str, "set-wide seq 2 to 29")
	require.True(t, strings.HasPrefix(str, "poplog log (set member 1 of 3): 10 entries"), str)
	t.Log(str)

	l := mustCreate(t, anon(t, 64<<10), nil)
	require.Equal(t, -1, l.Recovery().Member)
}

// TestStrayFreeSpace: bytes damaged in free space far past the tail, where
// no append could have written, are reported (nothing acknowledged is at
// stake, but the log cannot tell); Salvage cleans them and keeps every
// entry.
func TestStrayFreeSpace(t *testing.T) {
	for _, f := range formats {
		r := anon(t, 64<<10)
		mem := r.Bytes()
		l := mustCreate(t, r, &walog.Options{Format: f, MaxEntry: 100, MaxBatch: 1024, Chunk: 32 << 10})
		for range 10 {
			_, err := l.Append([]byte("entry"))
			require.NoError(t, err)
		}
		mem[20<<10] ^= 0x01
		l.Close() // a restart: the old handle goes first
		_, err := walog.Open(r, nil)
		require.ErrorIs(t, err, walog.ErrCorrupt, f)
		l, err = walog.Open(r, &walog.Options{Salvage: true})
		require.NoError(t, err)
		require.Equal(t, 10, l.Stats().Entries)
		require.NoError(t, l.CheckFree())
		l.Close() // a restart: the old handle goes first
		l = mustOpen(t, r, nil)
		require.Equal(t, 10, l.Stats().Entries)
	}
}
