package walog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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
func encodeAt(l *Log, seq uint64, p []byte, more bool) []byte {
	s := &Log{format: l.format, variant: l.variant, noChecksum: l.noChecksum, v: l.v, clean: l.clean, gap: l.gap, stage: make([]byte, stageSize)}
	switch s.format {
	case PopLog:
		s.writePop(seq, p, more)
	case RAWL:
		s.writeRAWL(seq, p, more)
	case Classic:
		w0, _ := s.writeClassic(seq, p, more)
		binary.LittleEndian.PutUint64(s.stage[s.eN-8:], classicCommit(w0))
	}
	return s.stage[:s.eN]
}

// entriesAt walks the entries of l as Open left them: offsets and
// contents, checking that each re-encodes to the bytes it was read from
// (the decoder returns nothing an append did not write).
func entriesAt(t *testing.T, l *Log) (offs []int, seqs []uint64, datas [][]byte) {
	for off := l.start; off < l.tail; {
		e, err := l.decode(off, l.hi)
		require.NoError(t, err, "entry at %d below the tail %d", off, l.tail)
		d, err := l.data(off, e.n, nil)
		require.NoError(t, err)
		require.Equal(t, encodeAt(l, seqWord(e.seq, e.idx), d, e.more), l.mem[off:off+e.fp], "entry at %d does not re-encode to its bytes", off)
		offs, seqs, datas = append(offs, off), append(seqs, e.seq), append(datas, d)
		off = l.alignUp(off + e.fp)
	}
	return
}

// fuzzOptions are the options of a fuzzed log: format and alignment,
// checksums or not, MaxBatch from 1100 to 1868 bytes.
func fuzzOptions(cfg byte) *Options {
	format, align := fuzzGeometry(cfg)
	return &Options{Format: format, Align: align, MaxEntry: 1000, Chunk: 256, MaxBatch: 1100 + 256*int(cfg>>4&3), NoChecksum: cfg&0x20 != 0}
}

// FuzzOpen opens logs whose entry area holds arbitrary bytes: Open never
// panics; it either fails with ErrCorrupt and leaves the region as it was,
// or every entry it returns is exactly what an append of that entry
// writes, Open is idempotent, and the log takes appends afterwards. With
// Options.Salvage it always succeeds.
func FuzzOpen(f *testing.F) {
	f.Add(byte(0), []byte{}, false)
	f.Add(byte(1), bytes.Repeat([]byte{0xff}, 600), true)
	for cfg := range byte(64) {
		// Seeds: real logs, so the fuzzer starts from valid entries.
		mem := make([]byte, 4096)
		r, _ := snapRegion(f, mem)
		l, err := Create(r, fuzzOptions(cfg))
		require.NoError(f, err)
		for i := range 12 {
			if i%4 == 3 {
				l.AppendBatch([][]byte{{byte(i)}, bytes.Repeat([]byte{byte(i*37 + 1)}, 1+i*13)})
			} else {
				l.Append(bytes.Repeat([]byte{byte(i*37 + 1)}, 1+i*13))
			}
		}
		f.Add(cfg, bytes.Clone(mem[HeaderSize:]), cfg%5 == 0)
	}
	f.Fuzz(func(t *testing.T, cfg byte, body []byte, salvage bool) {
		mem := make([]byte, 4096)
		r, _ := snapRegion(t, mem)
		l0, err := Create(r, fuzzOptions(cfg))
		require.NoError(t, err)
		l0.Close()
		copy(mem[HeaderSize:], body)
		binary.LittleEndian.PutUint64(mem[offHi:], checkedWord(uint64(len(mem))))
		binary.LittleEndian.PutUint64(mem[offPass:], checkedWord(1+uint64(cfg>>7)))
		binary.LittleEndian.PutUint64(mem[offFloor:], checkedWord(1+uint64(cfg>>6&1)))

		before := bytes.Clone(mem)
		l, err := Open(r, &Options{Salvage: salvage})
		if err != nil {
			require.False(t, salvage, "Open with Salvage: %v", err)
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorIs(t, err, persist.ErrCorrupt)
			require.Equal(t, before, mem, "Open that reports corruption must not write")
			l, err = Open(r, &Options{Salvage: true})
			require.NoError(t, err)
			require.True(t, l.Recovery().Salvaged)
		}
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

		// Open again (without Salvage): the same entries, nothing left to
		// repair.
		l.Close() // a restart: the old handle goes first
		l, err = Open(r, nil)
		require.NoError(t, err)
		rep := l.Recovery()
		require.Zero(t, rep.Scrubbed, "%v", rep)
		require.NoError(t, rep.Stop)
		o2, s2, d2 := entriesAt(t, l)
		require.Equal(t, offs, o2)
		require.Equal(t, seqs, s2)
		require.Equal(t, datas, d2)

		// And appends go on.
		seq, err := l.Append([]byte("after"))
		if err == nil {
			l.Close() // a restart: the old handle goes first
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

// FuzzTorn appends entries, then crashes the last append — an Append, or
// an AppendBatch of three — at one of its fences, with an arbitrary subset
// of the words written since the fence before it reaching the media
// (mask), and recovers: Open must succeed (a crash is never corruption)
// with the acknowledged entries, plus possibly a prefix of the torn
// append, whole. Then it appends again on the recovered log and crashes
// that append the same way: stale bytes of the first torn append must not
// complete the second.
func FuzzTorn(f *testing.F) {
	f.Add(byte(0), []byte{10, 200, 3, 40}, []byte{0x55, 0xaa}, byte(0))
	f.Add(byte(4), []byte{100, 100, 100}, []byte{0xff, 0, 0xff}, byte(1))
	f.Add(byte(8), []byte{1, 2, 250, 250, 250}, []byte{0x0f}, byte(2))
	f.Add(byte(0x61), []byte{7, 250, 120}, []byte{0xf0, 0x0f}, byte(0x85))
	f.Fuzz(func(t *testing.T, cfg byte, sizes []byte, mask []byte, which byte) {
		if len(sizes) == 0 || len(sizes) > 40 {
			return
		}
		format, align := fuzzGeometry(cfg)
		mem := make([]byte, 16<<10)
		r, d := snapRegion(t, mem)
		o := &Options{Format: format, Align: align, MaxEntry: 600, Chunk: 256, NoChecksum: cfg&0x20 != 0}
		// MaxBatch just fits the largest batch of three entries, so that
		// the bound on a torn tail is tight.
		o.MaxBatch = 3 * ((format.footprint(600) + align - 1) &^ (align - 1))
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
		tear := func(ps [][]byte) bool {
			// The torn append, and the image of a crash at one of its fences.
			d.snaps = d.snaps[:0]
			d.snaps = append(d.snaps, bytes.Clone(mem))
			var err error
			if len(ps) == 1 {
				_, err = l.Append(ps[0])
			} else {
				_, err = l.AppendBatch(ps)
			}
			if err != nil {
				require.ErrorIs(t, err, ErrFull)
				return false
			}
			k := 1 + int(which)%(len(d.snaps)-1)
			before, after := d.snaps[k-1], d.snaps[k]
			l.Close() // the process dies: what Close records does not count
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
			return true
		}
		check := func(inflight [][]byte) {
			l.Close() // a restart: the old handle goes first
			l, err = Open(r, o)
			require.NoError(t, err, "a torn append must not read as corruption")
			it := l.Iter()
			var got [][]byte
			for it.Next() {
				got = append(got, bytes.Clone(it.Entry()))
			}
			require.NoError(t, it.Err())
			require.GreaterOrEqual(t, len(got), len(acked), "acknowledged entries lost: %v", l.Recovery())
			require.LessOrEqual(t, len(got), len(acked)+len(inflight), "%v", l.Recovery())
			for i := range acked {
				require.Equal(t, acked[i], got[i], "entry %d", i)
			}
			for i := len(acked); i < len(got); i++ {
				require.Equal(t, inflight[i-len(acked)], got[i], "the in-flight entries come back whole or not at all")
			}
			acked = got
		}
		batch := func(first int) [][]byte {
			if which&0x80 == 0 {
				return [][]byte{entry(first)}
			}
			return [][]byte{entry(first), entry(first + 1), entry(first + 2)}
		}
		torn := batch(len(sizes) - 1)
		if !tear(torn) {
			return
		}
		check(torn)
		which = which&0x80 | which&0x7f/3
		bit += 3
		again := batch(len(sizes) + 7)
		if !tear(again) {
			return
		}
		check(again)
		require.NoError(t, l.CheckFree(), fmt.Sprint(l.Recovery()))
	})
}

// FuzzHeader opens regions whose header holds arbitrary fields with a
// correct checksum (and, with fix, correct checks on its changing words):
// Open never panics and either fails with a package error or recovers a
// log it can append to.
func FuzzHeader(f *testing.F) {
	for cfg := range byte(18) {
		mem := make([]byte, 8192)
		format, align := fuzzGeometry(cfg)
		r, _ := snapRegion(f, mem)
		l, err := Create(r, &Options{Format: format, Align: align, Chunk: 512, NoChecksum: cfg >= 9})
		require.NoError(f, err)
		l.Append([]byte("seed"))
		f.Add(bytes.Clone(mem[8:HeaderSize]), uint16(0), cfg%2 == 0)
	}
	f.Fuzz(func(t *testing.T, hdr []byte, base uint16, fix bool) {
		mem := make([]byte, 8192)
		r, _ := snapRegion(t, mem)
		off := int(base%16) * HeaderSize
		h := mem[off : off+HeaderSize]
		copy(h, "braidWAL")
		copy(h[8:], hdr)
		binary.LittleEndian.PutUint32(h[60:], persist.CRC32C(h[8:60]))
		if fix {
			for w := offHi; w <= offDirtyTo; w += 8 {
				binary.LittleEndian.PutUint64(h[w:], checkedWord(binary.LittleEndian.Uint64(h[w:])&wordMask))
			}
		}
		l, err := Open(r, &Options{Offset: off})
		if err != nil {
			// ErrTooSmall: a header whose size runs past the region's end.
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBadFormat) && !errors.Is(err, ErrInvalid) &&
				!errors.Is(err, ErrTooSmall) {
				t.Fatalf("Open: unexpected error kind: %v", err)
			}
			return
		}
		if _, err := l.Append([]byte("x")); err != nil && !errors.Is(err, ErrFull) {
			t.Fatalf("append: %v", err)
		}
		l.Close()
		if _, err := Open(r, &Options{Offset: off}); err != nil {
			t.Fatalf("reopen: %v", err)
		}
	})
}
