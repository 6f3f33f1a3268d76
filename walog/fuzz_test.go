package walog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// snapDomain is a persistence domain that records a copy of the region at
// every fence: what the media would hold once that fence completes.
type snapDomain struct {
	mem   []byte
	snaps [][]byte
}

func (d *snapDomain) Flush(off, n int)  {}
func (d *snapDomain) Stream(off, n int) {}
func (d *snapDomain) Fence()            { d.snaps = append(d.snaps, bytes.Clone(d.mem)) }
func (d *snapDomain) Close() error      { return nil }

func snapRegion(t testing.TB, mem []byte) (*persist.Region, *snapDomain) {
	d := &snapDomain{mem: mem}
	r, err := persist.NewSimulated(mem, persist.ModeFlush, d, nil)
	require.NoError(t, err)
	return r, d
}

func fuzzGeometry(cfg byte) (Format, int) {
	return []Format{PopLog, RAWL, Classic}[cfg%3], []int{8, 64, 256}[cfg/3%3]
}

// encodeAt returns the bytes an append of (seq, p) writes for an entry,
// from the real encoders, for a log like l.
func encodeAt(l *Log, seq uint64, p []byte) []byte {
	s := &Log{format: l.format, variant: l.variant, v: l.v, clean: l.clean, gap: l.gap, stage: make([]byte, stageSize)}
	switch s.format {
	case PopLog:
		s.writePop(seq, p)
	case RAWL:
		s.writeRAWL(seq, p)
	case Classic:
		s.writeClassic(seq, p)
		binary.LittleEndian.PutUint64(s.stage[s.eN-8:], classicCommit(len(p), seq))
	}
	return s.stage[:s.eN]
}

// entriesAt walks the entries of l as Open left them: offsets and
// contents, checking that each re-encodes to the bytes it was read from
// (the decoder returns nothing an append did not write).
func entriesAt(t *testing.T, l *Log) (offs []int, seqs []uint64, datas [][]byte) {
	for off := l.start; off < l.tail; {
		n, seq, fp, err := l.decode(off, l.hi)
		require.NoError(t, err, "entry at %d below the tail %d", off, l.tail)
		d, err := l.data(off, n, nil)
		require.NoError(t, err)
		require.Equal(t, encodeAt(l, seq, d), l.mem[off:off+fp], "entry at %d does not re-encode to its bytes", off)
		offs, seqs, datas = append(offs, off), append(seqs, seq), append(datas, d)
		off = l.alignUp(off + fp)
	}
	return
}

// FuzzOpen opens logs whose entry area holds arbitrary bytes: Open never
// panics, every entry it returns is exactly what an append of that entry
// writes, Open is idempotent, and the log takes appends afterwards.
func FuzzOpen(f *testing.F) {
	f.Add(byte(0), []byte{})
	f.Add(byte(1), bytes.Repeat([]byte{0xff}, 600))
	for cfg := range byte(18) {
		// Seeds: real logs, so the fuzzer starts from valid entries.
		mem := make([]byte, 4096)
		format, align := fuzzGeometry(cfg)
		r, _ := snapRegion(f, mem)
		l, err := Create(r, &Options{Format: format, Align: align, MaxEntry: 1000, Chunk: 256})
		require.NoError(f, err)
		for i := range 12 {
			l.Append(bytes.Repeat([]byte{byte(i*37 + 1)}, 1+i*13))
		}
		f.Add(cfg, bytes.Clone(mem[HeaderSize:]))
	}
	f.Fuzz(func(t *testing.T, cfg byte, body []byte) {
		mem := make([]byte, 4096)
		format, align := fuzzGeometry(cfg)
		r, _ := snapRegion(t, mem)
		_, err := Create(r, &Options{Format: format, Align: align, MaxEntry: 1000, Chunk: 256})
		require.NoError(t, err)
		copy(mem[HeaderSize:], body)
		binary.LittleEndian.PutUint64(mem[offHi:], uint64(len(mem)))
		binary.LittleEndian.PutUint64(mem[offPass:], 1+uint64(cfg>>7))
		binary.LittleEndian.PutUint64(mem[offFloor:], 1+uint64(cfg>>6&1))

		l, err := Open(r, nil)
		require.NoError(t, err)
		offs, seqs, datas := entriesAt(t, l)
		require.Equal(t, len(offs), l.count)
		it := l.Iter()
		for i := range offs {
			require.True(t, it.Next())
			require.Equal(t, seqs[i], it.Seq())
			require.Equal(t, datas[i], it.Entry())
		}
		require.False(t, it.Next())
		require.NoError(t, it.Err())
		require.NoError(t, l.CheckFree())

		// Open again: the same entries, nothing left to repair.
		l, err = Open(r, nil)
		require.NoError(t, err)
		rep := l.Report()
		require.Zero(t, rep.Scrubbed, "%v", rep)
		require.NoError(t, rep.Stop)
		o2, s2, d2 := entriesAt(t, l)
		require.Equal(t, offs, o2)
		require.Equal(t, seqs, s2)
		require.Equal(t, datas, d2)

		// And appends go on.
		seq, err := l.Append([]byte("after"))
		if err == nil {
			l, err = Open(r, nil)
			require.NoError(t, err)
			_, s3, d3 := entriesAt(t, l)
			require.Equal(t, len(seqs)+1, len(s3))
			require.Equal(t, seq, s3[len(s3)-1])
			require.Equal(t, "after", string(d3[len(d3)-1]))
		} else {
			require.ErrorIs(t, err, ErrFull)
		}
	})
}

// FuzzTorn appends entries, then crashes the last append at one of its
// fences, with an arbitrary subset of the words written since the fence
// before it reaching the media (mask), and recovers: the result is the
// acknowledged entries, plus possibly the torn one whole. Then it appends
// again on the recovered log and crashes that append the same way: stale
// bytes of the first torn append must not complete the second.
func FuzzTorn(f *testing.F) {
	f.Add(byte(0), []byte{10, 200, 3, 40}, []byte{0x55, 0xaa}, byte(0))
	f.Add(byte(4), []byte{100, 100, 100}, []byte{0xff, 0, 0xff}, byte(1))
	f.Add(byte(8), []byte{1, 2, 250, 250, 250}, []byte{0x0f}, byte(2))
	f.Fuzz(func(t *testing.T, cfg byte, sizes []byte, mask []byte, which byte) {
		if len(sizes) == 0 || len(sizes) > 40 {
			return
		}
		format, align := fuzzGeometry(cfg)
		mem := make([]byte, 16<<10)
		r, d := snapRegion(t, mem)
		o := &Options{Format: format, Align: align, MaxEntry: 600, Chunk: 256}
		l, err := Create(r, o)
		require.NoError(t, err)
		var acked [][]byte
		entry := func(i int) []byte {
			p := bytes.Repeat([]byte{byte(i) ^ 0x5a}, 1+int(sizes[i%len(sizes)])*2)
			p[0] = byte(i)
			return p
		}
		for i := range len(sizes) - 1 {
			if _, err := l.Append(entry(i)); err != nil {
				require.ErrorIs(t, err, ErrFull)
				return
			}
			acked = append(acked, entry(i))
		}
		bit := 0
		tear := func(p []byte) {
			// The torn append, and the image of a crash at one of its fences.
			d.snaps = d.snaps[:0]
			d.snaps = append(d.snaps, bytes.Clone(mem))
			if _, err := l.Append(p); err != nil {
				require.ErrorIs(t, err, ErrFull)
				return
			}
			k := 1 + int(which)%(len(d.snaps)-1)
			before, after := d.snaps[k-1], d.snaps[k]
			copy(mem, before)
			for w := 0; w < len(mem); w += 8 {
				if !bytes.Equal(before[w:w+8], after[w:w+8]) {
					take := len(mask) > 0 && mask[bit/8%len(mask)]>>(bit%8)&1 == 1
					bit++
					if take {
						copy(mem[w:w+8], after[w:w+8])
					}
				}
			}
		}
		check := func(inflight []byte) {
			l, err = Open(r, o)
			require.NoError(t, err)
			it := l.Iter()
			var got [][]byte
			for it.Next() {
				got = append(got, bytes.Clone(it.Entry()))
			}
			require.NoError(t, it.Err())
			switch len(got) {
			case len(acked):
			case len(acked) + 1:
				require.Equal(t, inflight, got[len(got)-1], "the in-flight entry comes back whole or not at all")
			default:
				require.Failf(t, "recovery", "%d entries, %d acknowledged: %v", len(got), len(acked), l.Report())
			}
			for i := range acked {
				require.Equal(t, acked[i], got[i], "entry %d", i)
			}
			acked = got
		}
		last := entry(len(sizes) - 1)
		tear(last)
		check(last)
		which /= 3
		bit += 3
		again := entry(len(sizes) + 7)
		tear(again)
		check(again)
		require.NoError(t, l.CheckFree(), fmt.Sprint(l.Report()))
	})
}

// FuzzHeader opens regions whose header holds arbitrary fields with a
// correct checksum: Open never panics and either fails with a package
// error or recovers a log it can append to.
func FuzzHeader(f *testing.F) {
	for cfg := range byte(9) {
		mem := make([]byte, 8192)
		format, align := fuzzGeometry(cfg)
		r, _ := snapRegion(f, mem)
		l, err := Create(r, &Options{Format: format, Align: align, Chunk: 512})
		require.NoError(f, err)
		l.Append([]byte("seed"))
		f.Add(bytes.Clone(mem[8:HeaderSize]), uint16(0))
	}
	f.Fuzz(func(t *testing.T, hdr []byte, base uint16) {
		mem := make([]byte, 8192)
		r, _ := snapRegion(t, mem)
		off := int(base%16) * HeaderSize
		h := mem[off : off+HeaderSize]
		copy(h, "braidWAL")
		copy(h[8:], hdr)
		binary.LittleEndian.PutUint32(h[60:], crc32.Checksum(h[8:60], castagnoli))
		l, err := Open(r, &Options{Offset: off})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBadFormat) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Open: unexpected error kind: %v", err)
			}
			return
		}
		if _, err := l.Append([]byte("x")); err != nil && !errors.Is(err, ErrFull) {
			t.Fatalf("append: %v", err)
		}
		if _, err := Open(r, &Options{Offset: off}); err != nil {
			t.Fatalf("reopen: %v", err)
		}
	})
}
