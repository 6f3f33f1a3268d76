package pagelog_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

var layouts = []pagelog.Layout{pagelog.Packed, pagelog.TwoWord, pagelog.Checksum}

// configs are the layouts with and without payload CRCs.
var configs = []pagelog.Options{
	{Layout: pagelog.Packed}, {Layout: pagelog.TwoWord}, {Layout: pagelog.Checksum},
	{Layout: pagelog.Packed, PayloadCRC: true}, {Layout: pagelog.TwoWord, PayloadCRC: true},
}

func cfgName(o pagelog.Options) string {
	if o.PayloadCRC {
		return o.Layout.String() + "+crc"
	}
	return o.Layout.String()
}

// used is the used bit of a sealed page-id word's data.
const used = 1 << 47

// packedData is the data of a used Packed header of a store with 3 pid
// bits: version pvn of page pid.
func packedData(pvn, pid uint64) uint64 { return used | pvn<<3 | pid }

// anon maps an anonymous region of size bytes, closed at the end of the test.
func anon(t testing.TB, size int) *persist.Region { return structtest.Region(t, size) }

// closed tells the error of Check on a closed store (or one whose region
// was closed), which Checked skips.
func closed(err error) bool {
	return errors.Is(err, pagelog.ErrClosed) || errors.Is(err, persist.ErrClosed)
}

// mustCreate creates a store in a region of exactly the size it needs;
// its Check runs when the test ends, unless it was closed.
func mustCreate(t testing.TB, o pagelog.Options) (*pagelog.Store, *persist.Region) {
	t.Helper()
	n, err := pagelog.Footprint(&o)
	require.NoError(t, err)
	r := anon(t, n)
	s, err := pagelog.Create(r, &o)
	require.NoError(t, err)
	return structtest.Checked(t, s, closed), r
}

// reopen closes s and opens the store in r again, checking it now and
// when the test ends.
func reopen(t testing.TB, s *pagelog.Store, r *persist.Region, o *pagelog.Options) *pagelog.Store {
	t.Helper()
	require.NoError(t, s.Close())
	s2, err := pagelog.Open(r, o)
	require.NoError(t, err)
	require.NoError(t, s2.Check())
	return structtest.Checked(t, s2, closed)
}

// pattern is the content of version ver of page pid: every word differs
// between pages and versions, so any mix of two versions is visible.
func pattern(pid uint64, ver, size int) []byte {
	b := make([]byte, size)
	fillPattern(b, pid, ver)
	return b
}

func fillPattern(b []byte, pid uint64, ver int) {
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], pid<<40|uint64(ver)<<20|uint64(i/8))
	}
}

func name(l pagelog.Layout, ps int) string { return fmt.Sprintf("%v/%d", l, ps) }

func TestRoundTrip(t *testing.T) {
	for _, l := range layouts {
		for _, ps := range []int{256, 4096, 16384} {
			t.Run(name(l, ps), func(t *testing.T) {
				o := pagelog.Options{Layout: l, PageSize: ps, Pages: 10, Slots: 13}
				s, r := mustCreate(t, o)
				require.Equal(t, 10, s.Pages())
				require.Equal(t, ps, s.PageSize())
				require.Equal(t, 3, s.Lanes())
				buf := make([]byte, ps)
				for p := range 10 {
					require.NoError(t, s.Read(uint64(p), buf))
					require.Equal(t, make([]byte, ps), buf, "fresh page %d", p)
				}
				require.NoError(t, s.Check())
				for v := 1; v <= 5; v++ {
					for p := range 10 {
						require.NoError(t, s.Write(uint64(p), pattern(uint64(p), v, ps)))
					}
				}
				require.NoError(t, s.Check())
				s = reopen(t, s, r, nil)
				for p := range 10 {
					require.NoError(t, s.Read(uint64(p), buf))
					require.Equal(t, pattern(uint64(p), 5, ps), buf)
				}
				require.Equal(t, pagelog.Recovery{}, s.Recovery())
			})
		}
	}
}

func TestWriteLines(t *testing.T) {
	for _, l := range layouts {
		for _, ps := range []int{256, 4096, 16384} {
			t.Run(name(l, ps), func(t *testing.T) {
				o := pagelog.Options{Layout: l, PageSize: ps, Pages: 4, Slots: 6, MicroLogLines: 4}
				s, r := mustCreate(t, o)
				rng := structtest.NewRand(1<<32 | uint64(ps))
				want := make([][]byte, 4)
				for p := range want {
					want[p] = make([]byte, ps)
				}
				lines := ps / 64
				for i := range 200 {
					p := rng.Intn(4)
					page := append([]byte(nil), want[p]...)
					mask := pagelog.NewLines(ps)
					// Mostly few lines (micro log), sometimes many (CoW).
					n := 1 + rng.Intn(4)
					if i%5 == 0 {
						n = lines
					}
					for range n {
						ln := rng.Intn(lines)
						mask.Set(ln)
						fillPattern(page[ln*64:ln*64+64], uint64(p), i+1)
					}
					require.NoError(t, s.WriteLines(uint64(p), page, mask))
					want[p] = page
				}
				require.NoError(t, s.WriteLines(0, want[0], pagelog.NewLines(ps)), "empty mask")
				require.NoError(t, s.Check())
				s = reopen(t, s, r, nil)
				buf := make([]byte, ps)
				for p := range want {
					require.NoError(t, s.Read(uint64(p), buf))
					require.Equal(t, want[p], buf, "page %d", p)
				}
			})
		}
	}
}

func TestLines(t *testing.T) {
	m := pagelog.NewLines(16384)
	require.Len(t, m, 4)
	m.Mark(60, 10) // lines 0 and 1
	m.Mark(64*200, 1)
	m.Mark(0, 0)
	require.Equal(t, 3, m.Count())
	require.True(t, m.Has(1) && m.Has(200) && !m.Has(2))
	m.Reset()
	require.Zero(t, m.Count())
	require.Len(t, pagelog.NewLines(256), 1)

	// Out of range: clipped or ignored, never a panic.
	m = pagelog.NewLines(4096) // 64 lines
	m.Mark(4000, 200)          // lines 62, 63 and beyond the page
	require.Equal(t, 2, m.Count())
	require.True(t, m.Has(62) && m.Has(63))
	m.Mark(-64, 10) // before the page
	require.Equal(t, 2, m.Count())
	m.Mark(-10, 20) // straddles byte 0: line 0
	require.True(t, m.Has(0))
	m.Mark(math.MaxInt-5, 100) // off+n overflows
	m.Set(100000)
	m.Set(-1)
	require.Equal(t, 3, m.Count())
	require.False(t, m.Has(1000) || m.Has(-1))
	require.Empty(t, pagelog.NewLines(-1))
	pagelog.NewLines(-1).Mark(0, 64)
}

func TestNextRun(t *testing.T) {
	runs := func(m []uint64) [][2]int {
		var out [][2]int
		for lo, hi := pagelog.NextRun(m, 0); lo >= 0; lo, hi = pagelog.NextRun(m, hi) {
			out = append(out, [2]int{lo, hi})
		}
		return out
	}
	require.Empty(t, runs([]uint64{0, 0}))
	require.Equal(t, [][2]int{{0, 128}}, runs([]uint64{^uint64(0), ^uint64(0)}))
	require.Equal(t, [][2]int{{63, 65}}, runs([]uint64{1 << 63, 1}))
	require.Equal(t, [][2]int{{0, 1}, {2, 4}, {64, 65}, {127, 128}}, runs([]uint64{0b1101, 1 | 1<<63}))
	// Against a bit-by-bit reference on random masks.
	rng := structtest.NewRand(7<<32 | 7)
	for range 1000 {
		a, b, c, d := rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()
		m := []uint64{a & b, c | d, rng.Uint64()}
		var ref [][2]int
		for i := 0; i < 192; {
			if m[i/64]>>(i%64)&1 == 0 {
				i++
				continue
			}
			j := i
			for j < 192 && m[j/64]>>(j%64)&1 == 1 {
				j++
			}
			ref = append(ref, [2]int{i, j})
			i = j
		}
		require.Equal(t, ref, runs(m))
		if ref == nil {
			require.Empty(t, pagelog.Runs(m))
		} else {
			require.Equal(t, ref, pagelog.Runs(m), "appendRuns")
		}
	}
	for _, m := range [][]uint64{{0, 0}, {^uint64(0), ^uint64(0)}, {1 << 63, 1}, {0b1101, 1 | 1<<63}, {1 << 63, ^uint64(0), 1}} {
		if r := runs(m); r == nil {
			require.Empty(t, pagelog.Runs(m))
		} else {
			require.Equal(t, r, pagelog.Runs(m), "appendRuns of %x", m)
		}
	}
}

func TestFit(t *testing.T) {
	for _, l := range layouts {
		r := anon(t, 1<<20)
		s, err := pagelog.Create(r, &pagelog.Options{Layout: l})
		require.NoError(t, err)
		n, err := pagelog.Footprint(&pagelog.Options{Layout: l, Pages: s.Pages()})
		require.NoError(t, err)
		require.LessOrEqual(t, n, 1<<20)
		more, err := pagelog.Footprint(&pagelog.Options{Layout: l, Pages: s.Pages() + 1})
		require.NoError(t, err)
		require.Greater(t, more, 1<<20, "%v: %d pages fit, %d would too", l, s.Pages(), s.Pages()+1)
		require.Equal(t, pagelog.DefaultSpares, s.Lanes())
	}
}

func TestBadInput(t *testing.T) {
	s, r := mustCreate(t, pagelog.Options{Pages: 4})
	page := make([]byte, 4096)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"short page", s.Write(0, page[:100]), pagelog.ErrPageSize},
		{"long page", s.Write(0, make([]byte, 8192)), pagelog.ErrPageSize},
		{"pid out of range", s.Write(4, page), pagelog.ErrPageID},
		{"huge pid", s.Write(^uint64(0), page), pagelog.ErrPageID},
		{"read pid", s.Read(99, page), pagelog.ErrPageID},
		{"read size", s.Read(0, nil), pagelog.ErrPageSize},
		{"lines pid", s.WriteLines(4, page, []uint64{1}), pagelog.ErrPageID},
		{"mask length", s.WriteLines(0, page, []uint64{1, 2}), pagelog.ErrInvalid},
		{"nil mask", s.WriteLines(0, page, nil), pagelog.ErrInvalid},
	} {
		require.ErrorIs(t, tc.err, tc.want, tc.name)
	}
	s256, _ := mustCreate(t, pagelog.Options{Pages: 2, PageSize: 256})
	require.ErrorIs(t, s256.WriteLines(0, make([]byte, 256), []uint64{1 << 4}), pagelog.ErrInvalid, "line beyond the page")

	for _, tc := range []struct {
		name string
		o    pagelog.Options
		want error
	}{
		{"page size 100", pagelog.Options{PageSize: 100, Pages: 1}, pagelog.ErrPageSize},
		{"page size 4000", pagelog.Options{PageSize: 4000, Pages: 1}, pagelog.ErrPageSize},
		{"page size 2M", pagelog.Options{PageSize: 2 << 20, Pages: 1}, pagelog.ErrPageSize},
		{"negative pages", pagelog.Options{Pages: -1}, pagelog.ErrInvalid},
		{"slots = pages", pagelog.Options{Pages: 4, Slots: 4}, pagelog.ErrInvalid},
		{"too many spares", pagelog.Options{Pages: 4, Slots: 4 + pagelog.MaxSpares + 1}, pagelog.ErrInvalid},
		{"layout", pagelog.Options{Layout: 9, Pages: 1}, pagelog.ErrInvalid},
		{"pid bits too few", pagelog.Options{Pages: 300, PIDBits: 8}, pagelog.ErrInvalid},
		{"pid bits too many", pagelog.Options{Pages: 3, PIDBits: 60}, pagelog.ErrInvalid},
		{"pid bits two-word", pagelog.Options{Layout: pagelog.TwoWord, Pages: 3, PIDBits: 8}, pagelog.ErrInvalid},
		{"fence-only packed", pagelog.Options{Layout: pagelog.Packed, Pages: 3, FenceOnly: true}, pagelog.ErrInvalid},
	} {
		_, err := pagelog.Footprint(&tc.o)
		require.ErrorIs(t, err, tc.want, tc.name)
		_, err = pagelog.Create(anon(t, 1<<20), &tc.o)
		require.ErrorIs(t, err, tc.want, tc.name)
	}

	_, err := pagelog.Create(anon(t, 64<<10), &pagelog.Options{Pages: 100})
	require.ErrorIs(t, err, pagelog.ErrTooSmall, "region too small for the slots")
	_, err = pagelog.Create(anon(t, 8192), nil)
	require.ErrorIs(t, err, pagelog.ErrTooSmall, "region too small for one page")
	_, err = pagelog.Create(nil, nil)
	require.ErrorIs(t, err, pagelog.ErrInvalid)
	_, err = pagelog.Open(nil, nil)
	require.ErrorIs(t, err, pagelog.ErrInvalid)

	// Open: no store, or not the one asked for.
	_, err = pagelog.Open(anon(t, 1<<16), nil)
	require.ErrorIs(t, err, pagelog.ErrNoStore)
	require.ErrorIs(t, err, persist.ErrEmpty)
	require.NoError(t, s.Close())
	_, err = pagelog.Open(r, &pagelog.Options{PageSize: 16384})
	require.ErrorIs(t, err, pagelog.ErrPageSize)
	_, err = pagelog.Open(r, &pagelog.Options{Layout: pagelog.Checksum})
	require.ErrorIs(t, err, pagelog.ErrInvalid)
	_, err = pagelog.Open(r, &pagelog.Options{Pages: 5})
	require.ErrorIs(t, err, pagelog.ErrInvalid)
	_, err = pagelog.Open(r, &pagelog.Options{FenceOnly: true})
	require.ErrorIs(t, err, pagelog.ErrInvalid)
	s, err = pagelog.Open(r, &pagelog.Options{PageSize: 4096, Pages: 4, Layout: pagelog.Packed})
	require.NoError(t, err)

	// Closed.
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Close(), pagelog.ErrClosed)
	require.ErrorIs(t, s.Write(0, page), pagelog.ErrClosed)
	require.ErrorIs(t, s.WriteLines(0, page, []uint64{1}), pagelog.ErrClosed)
	require.ErrorIs(t, s.Read(0, page), pagelog.ErrClosed)
	require.ErrorIs(t, s.Check(), pagelog.ErrClosed)
}

// TestOpenSmallRegion: a superblock that promises more than the region has.
func TestOpenSmallRegion(t *testing.T) {
	s, r := mustCreate(t, pagelog.Options{Pages: 8})
	require.NoError(t, s.Close())
	small := anon(t, r.Size()-4096)
	copy(small.Bytes(), r.Bytes())
	_, err := pagelog.Open(small, nil)
	require.ErrorIs(t, err, pagelog.ErrTooSmall)
	require.ErrorIs(t, err, persist.ErrTooSmall)
	require.NotErrorIs(t, err, persist.ErrCorrupt, "the superblock is intact: the region is short")
	require.ErrorContains(t, err, "map the whole file")
}

// TestPlatformLimits: what an int can count bounds a store. On a 64-bit
// platform the format's 2^32-1 slots are the limit and every store the
// format allows has a size; on a 32-bit one a store must fit in an int
// (2 GiB), and one that does not is ErrTooSmall, never an overflow.
func TestPlatformLimits(t *testing.T) {
	big := pagelog.Options{PageSize: pagelog.MaxPageSize, Pages: 1 << 22} // 4 TiB of pages
	n, err := pagelog.Footprint(&big)
	if bits.UintSize == 64 {
		require.NoError(t, err)
		require.Greater(t, uint64(n), uint64(1)<<42)
		require.Equal(t, uint64(1<<32-1), uint64(pagelog.MaxSlots))
	} else {
		require.ErrorIs(t, err, pagelog.ErrTooSmall)
		require.ErrorContains(t, err, "more than a 32-bit process can map")
		require.Equal(t, math.MaxInt32, pagelog.MaxSlots)
		_, err = pagelog.Create(anon(t, 1<<20), &big)
		require.ErrorIs(t, err, pagelog.ErrTooSmall)
	}
	// The largest page count whose size an int holds still has one.
	n, err = pagelog.Footprint(&pagelog.Options{PageSize: 256, Pages: min(1<<24, math.MaxInt/512)})
	require.NoError(t, err)
	require.Positive(t, n)
	// One slot more than the platform allows is bad input.
	if more := uint64(pagelog.MaxSlots) + 1; more <= math.MaxInt {
		_, err = pagelog.Footprint(&pagelog.Options{PageSize: 256, Pages: 1, Slots: int(more)})
		require.ErrorIs(t, err, pagelog.ErrInvalid)
	}

	// A superblock naming more slots than the format has is corruption;
	// one naming more than this platform maps but no more than the format
	// has is a store too large for this process (32-bit only).
	s, r := mustCreate(t, pagelog.Options{Pages: 8})
	require.NoError(t, s.Close())
	setSlots := func(slots uint64) { // in both copies of the superblock
		for _, b := range [][]byte{r.Bytes(), r.Bytes()[pagelog.SuperCopyOffset:]} {
			binary.LittleEndian.PutUint64(b[32:], slots)
			binary.LittleEndian.PutUint64(b[24:], slots-8)
			binary.LittleEndian.PutUint32(b[20:], uint32(bits.Len64(slots-9))) // Packed pid bits
			binary.LittleEndian.PutUint32(b[56:], persist.CRC32C(b[8:56]))
		}
	}
	setSlots(1 << 32)
	_, err = pagelog.Open(r, nil)
	require.ErrorIs(t, err, pagelog.ErrCorrupt)
	setSlots(1<<32 - 1)
	_, err = pagelog.Open(r, nil)
	require.ErrorIs(t, err, pagelog.ErrTooSmall, "a store of 2^32-1 slots of 4 KiB in a small region")
	if bits.UintSize == 32 {
		require.ErrorContains(t, err, "more than a 32-bit process can map")
		require.NotErrorIs(t, err, pagelog.ErrCorrupt)
	} else {
		require.ErrorContains(t, err, "map the whole file", "promises more than the region has")
	}
}

// TestChecksumDetects: a page torn with no backup to repair it is reported
// by Read and Check, never returned.
func TestChecksumDetects(t *testing.T) {
	s, r := mustCreate(t, pagelog.Options{Layout: pagelog.Checksum, Pages: 4, PageSize: 256})
	require.NoError(t, s.Write(1, pattern(1, 1, 256)))
	require.NoError(t, s.Write(3, pattern(3, 1, 256))) // overwrites lane 1's backup of page 1
	r.Bytes()[pagelog.PayloadOffset(s, 1)+100] ^= 1
	buf := make([]byte, 256)
	err := s.Read(1, buf)
	require.ErrorIs(t, err, persist.ErrCorrupt)
	require.ErrorIs(t, s.Check(), persist.ErrCorrupt)
	require.NoError(t, s.Read(3, buf))

	// A torn page whose backup is intact is repaired by Open.
	require.NoError(t, s.Write(2, pattern(2, 1, 256)))
	r.Bytes()[pagelog.PayloadOffset(s, 2)+7] ^= 0xff
	r.Bytes()[pagelog.PayloadOffset(s, 1)+100] ^= 1 // undo the other damage
	s = reopen(t, s, r, nil)
	require.Equal(t, 1, s.Recovery().Restored)
	require.NoError(t, s.Read(2, buf))
	require.Equal(t, pattern(2, 1, 256), buf)
}

// TestVersions: Packed versions wrap around (here every 4 writes, with 2
// version bits), across reopens and micro-log writes; TwoWord versions run
// out with ErrVersionExhausted.
func TestVersions(t *testing.T) {
	for _, crc := range []bool{false, true} {
		o := pagelog.Options{Pages: 3, Slots: 5, PageSize: 256, PIDBits: 45, MicroLogLines: 1, PayloadCRC: crc}
		s, r := mustCreate(t, o)
		buf := make([]byte, 256)
		want := make([][]byte, 3)
		for p := range want {
			want[p] = make([]byte, 256)
		}
		for v := 1; v <= 50; v++ {
			for p := range uint64(3) {
				if v%3 == int(p) {
					page := append([]byte(nil), want[p]...)
					fillPattern(page[64:128], p, v)
					require.NoError(t, s.WriteLines(p, page, []uint64{0b10}))
					want[p] = page
					continue
				}
				want[p] = pattern(p, v, 256)
				require.NoError(t, s.Write(p, want[p]))
			}
			if v%7 == 0 {
				s = reopen(t, s, r, nil)
			}
			require.NoError(t, s.Check())
			for p := range uint64(3) {
				require.NoError(t, s.Read(p, buf))
				require.Equal(t, want[p], buf, "version %d of page %d", v, p)
			}
		}
	}

	s, _ := mustCreate(t, pagelog.Options{Layout: pagelog.TwoWord, Pages: 2, PageSize: 256})
	pagelog.SetMaxVersion(s, 5)
	for v := 2; v <= 5; v++ {
		require.NoError(t, s.Write(1, pattern(1, v, 256)))
	}
	require.ErrorIs(t, s.Write(1, pattern(1, 6, 256)), pagelog.ErrVersionExhausted)
	require.NoError(t, s.Write(0, pattern(0, 6, 256)))
}

// TestConcurrent: writers on all lanes, several on the same pages, readers
// alongside; every read sees one whole version.
func TestConcurrent(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.String(), func(t *testing.T) {
			const pages, writers, rounds = 16, 6, 150
			s, r := mustCreate(t, pagelog.Options{Layout: l, Pages: pages, Slots: pages + 4, PageSize: 1024})
			var wg sync.WaitGroup
			errs := make(chan error, 2*writers)
			for w := range writers {
				wg.Go(func() {
					rng := structtest.NewRand(uint64(w)<<32 | 3)
					page := make([]byte, 1024)
					for i := range rounds {
						p := uint64(rng.Intn(pages))
						fillPattern(page, p, w<<12|i)
						var err error
						if i%3 == 0 {
							err = s.WriteLines(p, page, pagelog.Lines{^uint64(0) >> 48})
						} else {
							err = s.Write(p, page)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
				wg.Go(func() {
					buf := make([]byte, 1024)
					for i := range rounds {
						p := uint64((w + i) % pages)
						if err := s.Read(p, buf); err != nil {
							errs <- err
							return
						}
						if err := wholeVersion(p, buf); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, s.Check())
			s = reopen(t, s, r, nil)
			buf := make([]byte, 1024)
			for p := range pages {
				require.NoError(t, s.Read(uint64(p), buf))
				require.NoError(t, wholeVersion(uint64(p), buf))
			}
		})
	}
}

// wholeVersion checks that buf is a zero page or one pattern of page pid
// (WriteLines in TestConcurrent writes all 16 lines of a 1 KiB page).
func wholeVersion(pid uint64, buf []byte) error {
	first := binary.LittleEndian.Uint64(buf)
	if first == 0 {
		for _, c := range buf {
			if c != 0 {
				return fmt.Errorf("page %d: a mix of zeros and data", pid)
			}
		}
		return nil
	}
	ver := int(first>>20) & (1<<20 - 1)
	want := pattern(pid, ver, len(buf))
	for i := range buf {
		if buf[i] != want[i] {
			return fmt.Errorf("page %d: not one whole version (byte %d)", pid, i)
		}
	}
	return nil
}

// TestCRCTail: the allocation-free CRC continuation equals hash/crc32's.
func TestCRCTail(t *testing.T) {
	rng := structtest.NewRand(3<<32 | 4)
	for range 1000 {
		c, pid, seq := uint32(rng.Uint64()), rng.Uint64(), rng.Uint64()
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:], pid)
		binary.LittleEndian.PutUint64(b[8:], seq)
		require.Equal(t, persist.UpdateCRC32C(c, b[:]), pagelog.CRCTail(c, pid, seq))
	}
}

// TestOffset: two stores share a region; each opens at its offset.
func TestOffset(t *testing.T) {
	a := pagelog.Options{Pages: 3, PageSize: 1024}
	b := pagelog.Options{Pages: 5, PageSize: 512, Layout: pagelog.Checksum}
	na, err := pagelog.Footprint(&a)
	require.NoError(t, err)
	nb, err := pagelog.Footprint(&b)
	require.NoError(t, err)
	b.Offset = (na + 4095) &^ 4095
	r := anon(t, b.Offset+nb)
	sa, err := pagelog.Create(r, &a)
	require.NoError(t, err)
	sb, err := pagelog.Create(r, &b)
	require.NoError(t, err)
	require.NoError(t, sa.Write(2, pattern(2, 1, 1024)))
	require.NoError(t, sb.Write(4, pattern(4, 1, 512)))
	require.NoError(t, sa.Close())
	require.NoError(t, sb.Close())
	sa, err = pagelog.Open(r, nil)
	require.NoError(t, err)
	sb, err = pagelog.Open(r, &pagelog.Options{Offset: b.Offset})
	require.NoError(t, err)
	buf := make([]byte, 1024)
	require.NoError(t, sa.Read(2, buf))
	require.Equal(t, pattern(2, 1, 1024), buf)
	require.NoError(t, sb.Read(4, buf[:512]))
	require.Equal(t, pattern(4, 1, 512), buf[:512])
	require.NoError(t, sa.Check())
	require.NoError(t, sb.Check())

	_, err = pagelog.Open(r, &pagelog.Options{Offset: 100})
	require.ErrorIs(t, err, pagelog.ErrInvalid)
	_, err = pagelog.Open(r, &pagelog.Options{Offset: 1 << 30})
	require.ErrorIs(t, err, pagelog.ErrBadFormat)
	_, err = pagelog.Create(r, &pagelog.Options{Offset: 1 << 30})
	require.ErrorIs(t, err, pagelog.ErrTooSmall)
	_, err = pagelog.Create(r, &pagelog.Options{Offset: b.Offset, Pages: 100})
	require.ErrorIs(t, err, pagelog.ErrTooSmall)
}

// TestOneOpenStorePerArea: a second store on the bytes of an open one is
// refused (two stores writing pages of one lane lost an acknowledged
// version before stores claimed their areas), whether the second one's
// claim or its micro log's meets the first; Close lets it open. (That an
// Open failing after its micro logs were opened releases them is shown by
// TestFlipMicroLog and TestFlipPayloads, which open again after each
// refused Open.)
func TestOneOpenStorePerArea(t *testing.T) {
	for _, layout := range []pagelog.Layout{pagelog.Packed, pagelog.TwoWord, pagelog.Checksum} {
		t.Run(layout.String(), func(t *testing.T) {
			o := pagelog.Options{Layout: layout, PageSize: 4096, Pages: 16}
			s1, r := mustCreate(t, o)
			require.NoError(t, s1.Write(0, pattern(0, 1, 4096)))

			_, err := pagelog.Open(r, nil)
			require.ErrorIs(t, err, persist.ErrBusy)
			_, err = pagelog.Create(r, &o)
			require.ErrorIs(t, err, persist.ErrBusy)
			_, err = walog.Create(r, &walog.Options{Offset: 0, Size: 4096})
			require.ErrorIs(t, err, persist.ErrBusy, "the superblock is claimed")

			require.NoError(t, s1.Write(0, pattern(0, 2, 4096)), "the first store is untouched by the refusals")
			s2 := reopen(t, s1, r, nil)
			buf := make([]byte, 4096)
			require.NoError(t, s2.Read(0, buf))
			require.Equal(t, pattern(0, 2, 4096), buf)
			require.NoError(t, s2.Close())

			s3, err := pagelog.Open(r, nil)
			require.NoError(t, err)
			require.NoError(t, s3.Close())
		})
	}
}
