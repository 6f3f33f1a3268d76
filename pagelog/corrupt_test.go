package pagelog_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// Corruption tests: bytes of a closed, valid store are damaged after the
// fact (not by a crash), and the store must report it — an error wrapping
// ErrCorrupt from Open, Read or Check — and never return a page that is not
// the one last written.

// flips are the byte masks every sweep XORs into every byte. Under the
// race detector (about ten times slower, and these sweeps run on one
// goroutine: it has nothing to find in them) the sweeps XOR three of the
// six — one bit, a pattern of four, all eight; the other passes of
// make test run all six.
var flips = func() []byte {
	if raceEnabled {
		return []byte{0x01, 0x5a, 0xff}
	}
	return []byte{0x01, 0x02, 0x10, 0x5a, 0x80, 0xff}
}()

// sweepStore builds a store whose slots hold a mix of current and old
// versions (several writes per page, a few through the micro log), closes
// it, and returns it with its region and the last version of every page.
func sweepStore(t *testing.T, o pagelog.Options) (*pagelog.Store, *persist.Region, [][]byte) {
	t.Helper()
	s, r := mustCreate(t, o)
	ps := s.PageSize()
	want := make([][]byte, s.Pages())
	for p := range want {
		want[p] = make([]byte, ps)
	}
	for v := 1; v <= 5; v++ {
		for p := range uint64(s.Pages()) {
			if v == 4 && p%2 == 0 {
				page := append([]byte(nil), want[p]...)
				fillPattern(page[64:128], p, v)
				require.NoError(t, s.WriteLines(p, page, lineMask(ps, 1)))
				want[p] = page
				continue
			}
			want[p] = pattern(p, v, ps)
			require.NoError(t, s.Write(p, want[p]))
		}
	}
	require.NoError(t, s.Check())
	require.NoError(t, s.Close())
	return s, r, want
}

func lineMask(ps, line int) pagelog.Lines {
	m := pagelog.NewLines(ps)
	m.Set(line)
	return m
}

// outcome opens the damaged store and reads every page: "error" when Open,
// a Read or Check returned an error (which must wrap ErrCorrupt), "wrong"
// when a Read returned bytes that are not the page's last version,
// "repaired" when Open restored a page from its backup (Checksum: damage to
// a page in place looks like a torn write) or a superblock or micro-log
// header from its copy, and every page was right,
// "silent" when everything passed and every page was right.
func outcome(t *testing.T, r *persist.Region, want [][]byte, o *pagelog.Options) (string, error) {
	s, err := pagelog.Open(r, o)
	if err != nil {
		if !errors.Is(err, persist.ErrCorrupt) {
			return "", fmt.Errorf("Open: not a corruption error: %w", err)
		}
		return "error", nil
	}
	defer s.Close()
	buf := make([]byte, s.PageSize())
	detected := false
	for p := range uint64(s.Pages()) {
		err := s.Read(p, buf)
		switch {
		case err != nil && !errors.Is(err, persist.ErrCorrupt):
			return "", fmt.Errorf("Read(%d): not a corruption error: %w", p, err)
		case err != nil:
			detected = true
		case !bytes.Equal(buf, want[p]):
			return "wrong", fmt.Errorf("Read(%d) returned wrong bytes (first word %#x), Check: %v", p, le64(buf), s.Check())
		}
	}
	if err := s.Check(); err != nil {
		if !errors.Is(err, persist.ErrCorrupt) {
			return "", fmt.Errorf("Check: not a corruption error: %w", err)
		}
		detected = true
	}
	if detected {
		return "error", nil
	}
	if rec := s.Recovery(); rec.Restored > 0 || rec.Superblock != "" || len(rec.Logs) > 0 {
		return "repaired", nil
	}
	return "silent", nil
}

// sweepAll flips every byte of [lo, hi) of r with every mask of flips and
// returns the offsets of the flips that were silent (passed unnoticed,
// every page right) and of those repaired from a backup. A wrong page fails
// the test.
func sweepAll(t *testing.T, r *persist.Region, lo, hi int, want [][]byte, o *pagelog.Options, masks []byte) (silent, repaired []int) {
	t.Helper()
	mem := r.Bytes()
	snap := append([]byte(nil), mem...)
	for off := lo; off < hi; off++ {
		for _, x := range masks {
			copy(mem, snap)
			mem[off] ^= x
			res, err := outcome(t, r, want, o)
			require.NoError(t, err, "flip %#02x at byte %d", x, off)
			switch res {
			case "silent":
				silent = append(silent, off)
			case "repaired":
				repaired = append(repaired, off)
			}
		}
	}
	copy(mem, snap)
	return silent, repaired
}

// TestFlipHeaders: every single-byte change of one copy of the superblock
// is repaired from the other, and of every slot header is reported; none
// returns a wrong page. In the geometry of
// the sweep that found format 1's unchecked headers returning wrong pages
// (16 pages of 4 KiB, 8 spares) and in a small one with 3 lanes and
// wrapping versions.
func TestFlipHeaders(t *testing.T) {
	geos := []pagelog.Options{
		{PageSize: 4096, Pages: 16},
		{PageSize: 256, Pages: 6, Slots: 9, MicroLogLines: 1},
	}
	for _, c := range configs {
		for gi, g := range geos {
			o := c
			o.PageSize, o.Pages, o.Slots, o.MicroLogLines = g.PageSize, g.Pages, g.Slots, g.MicroLogLines
			if gi == 1 && o.Layout == pagelog.Packed {
				o.PIDBits = 45
			}
			t.Run(fmt.Sprintf("%s/%d", cfgName(c), g.PageSize), func(t *testing.T) {
				s, r, want := sweepStore(t, o)
				for _, at := range []int{0, pagelog.SuperCopyOffset} {
					silent, repaired := sweepAll(t, r, at, at+64, want, nil, flips)
					require.Empty(t, silent, "superblock flips neither reported nor repaired")
					require.Len(t, repaired, 64*len(flips), "every flip of one copy of the superblock is repaired from the other")
				}
				lo, hi := pagelog.HeaderOffset(s, 0), pagelog.HeaderOffset(s, s.Slots())
				silent, repaired := sweepAll(t, r, lo, hi, want, nil, flips)
				if o.Layout != pagelog.Checksum {
					require.Empty(t, silent, "header flips not reported at bytes %v", silent)
					require.Empty(t, repaired)
					t.Logf("%d bytes x %d masks: all reported", hi-lo, len(flips))
					return
				}
				// Checksum: a damaged home header looks like a page torn in
				// place; when its lane's backup holds the same version,
				// Open restores it. The backups' seq and CRC are only used
				// when they match; a damaged backup reads as one torn by a
				// crash and is ignored, the page in place being intact.
				for _, off := range silent {
					slot := (off - lo) / pagelog.HeaderSize(s)
					require.GreaterOrEqual(t, slot, s.Pages(), "flip at byte %d of home slot %d not reported", off, slot)
				}
				t.Logf("%d bytes x %d masks: %d flips repaired from a backup, %d silent flips in backup headers (ignored, no data lost)", hi-lo, len(flips), len(repaired), len(silent))
			})
		}
	}
}

// TestFlipPayloads: with payload CRCs (and on the Checksum layout) every
// single-byte change of a current page is reported, by Open's scan or, with
// SkipScan, by Read of that page alone.
func TestFlipPayloads(t *testing.T) {
	for _, c := range configs {
		if !c.PayloadCRC && c.Layout != pagelog.Checksum {
			continue
		}
		t.Run(cfgName(c), func(t *testing.T) {
			o := c
			o.PageSize, o.Pages, o.Slots, o.MicroLogLines = 256, 4, 6, 1
			s, r, want := sweepStore(t, o)
			for p := range s.Pages() {
				lo := pagelog.PayloadOffset(s, pagelog.CurrentSlot(s, p))
				silent, repaired := sweepAll(t, r, lo, lo+256, want, nil, flips)
				require.Empty(t, silent, "page %d", p)
				if c.Layout != pagelog.Checksum || p < 2 {
					require.Empty(t, repaired, "page %d", p)
				}
			}
			// SkipScan: Open succeeds; only the damaged page fails to read.
			// (Page 1: the last write of its lane was page 3's, so on the
			// Checksum layout no backup repairs it.)
			mem := r.Bytes()
			buf := make([]byte, 256)
			for _, off := range []int{0, 1, 100, 255} {
				at := pagelog.PayloadOffset(s, pagelog.CurrentSlot(s, 1)) + off
				mem[at] ^= 0x20
				s2, err := pagelog.Open(r, &pagelog.Options{SkipScan: true})
				require.NoError(t, err)
				for p := range uint64(4) {
					err := s2.Read(p, buf)
					if p == 1 {
						require.ErrorIs(t, err, pagelog.ErrCorrupt)
						continue
					}
					require.NoError(t, err)
					require.Equal(t, want[p], buf)
				}
				require.ErrorIs(t, s2.Check(), persist.ErrCorrupt)
				require.NoError(t, s2.Close())
				mem[at] ^= 0x20
			}
		})
	}
}

// TestFlipMicroLog: a lane's micro log (a walog PopLog) holding entries
// for the current versions of its pages, whose lines in place have not
// been written back, in a store closed cleanly: every single-byte change
// of the log's header is repaired from the header's copy, and of its
// entries is reported by Open (walog's per-entry CRC-32C and the tail its
// clean-shutdown word recorded, then the entry decoder); never is a wrong
// page returned, and no damage passes as a torn append. (After a crash,
// damage to the last entry that has the shape of a torn append drops it;
// walog's campaign measures that.)
func TestFlipMicroLog(t *testing.T) {
	for _, c := range configs {
		if c.Layout == pagelog.Checksum {
			continue
		}
		t.Run(cfgName(c), func(t *testing.T) {
			o := c
			o.PageSize, o.Pages, o.Slots, o.MicroLogLines = 256, 4, 6, 2
			_, r, want := sweepStore(t, o)
			s, err := pagelog.Open(r, &pagelog.Options{MicroLogLines: 2})
			require.NoError(t, err)
			for _, p := range []uint64{3, 1} { // lane 1
				page := append([]byte(nil), want[p]...)
				fillPattern(page[0:64], p, 77)
				fillPattern(page[192:256], p, 77)
				mask := lineMask(256, 0)
				mask.Set(3)
				require.NoError(t, s.WriteLines(p, page, mask))
				want[p] = page
			}
			require.Equal(t, 2, pagelog.MicroLogEntries(s, 1))
			require.NoError(t, s.Close())
			lo := pagelog.LogOffset(s, 1)
			hi := lo + walog.HeaderSize + 2*(32+8+128+24) // header and its copy, two entries
			silent, repaired := sweepAll(t, r, lo, hi, want, nil, []byte{0x01, 0x80, 0xff})
			flipped := 3 * (hi - lo)
			t.Logf("%d flips of the log: %d reported, %d repaired from the header's copy, %d silent", flipped, flipped-len(silent)-len(repaired), len(repaired), len(silent))
			require.Empty(t, silent, "the log was closed cleanly: no flip passes as a torn append")
			for _, off := range repaired {
				require.Less(t, off, lo+walog.HeaderSize, "a flip at byte %d of the entries was repaired", off-lo)
			}
		})
	}
}

// TestMicroLogReplay: lines a micro-log write stored in place that never
// reached the media (lost here by overwriting them) come back from the log
// at Open; a stale entry (the page was written again since) is skipped.
// The entries stay in the log until it is emptied.
func TestMicroLogReplay(t *testing.T) {
	for _, c := range configs {
		if c.Layout == pagelog.Checksum {
			continue
		}
		t.Run(cfgName(c), func(t *testing.T) {
			o := c
			o.PageSize, o.Pages, o.Slots, o.MicroLogLines = 256, 4, 6, 2
			s, r := mustCreate(t, o)
			page := pattern(1, 1, 256)
			require.NoError(t, s.Write(1, page))
			stale := append([]byte(nil), page...)
			fillPattern(stale[64:128], 1, 2)
			require.NoError(t, s.WriteLines(1, stale, lineMask(256, 1))) // then superseded:
			require.NoError(t, s.Write(1, page))
			next := append([]byte(nil), page...)
			fillPattern(next[128:192], 1, 3)
			require.NoError(t, s.WriteLines(1, next, lineMask(256, 2)))
			require.Equal(t, 2, pagelog.MicroLogEntries(s, 1))
			sl := pagelog.CurrentSlot(s, 1)
			require.NoError(t, s.Close())
			clear(r.Bytes()[pagelog.PayloadOffset(s, sl)+128 : pagelog.PayloadOffset(s, sl)+192])

			s, err := pagelog.Open(r, nil)
			require.NoError(t, err)
			require.Equal(t, 1, s.Recovery().Replayed)
			require.Equal(t, 2, pagelog.MicroLogEntries(s, 1), "the entries stay after Open")
			buf := make([]byte, 256)
			require.NoError(t, s.Read(1, buf))
			require.Equal(t, next, buf)
			require.NoError(t, s.Check())
			// Recovery cannot tell how many versions a Packed lane went
			// through since its entries: its next copy-on-write write
			// empties the log first. TwoWord versions never repeat.
			require.NoError(t, s.Write(3, pattern(3, 1, 256)))
			if c.Layout == pagelog.TwoWord {
				require.Equal(t, 2, pagelog.MicroLogEntries(s, 1))
			} else {
				require.Zero(t, pagelog.MicroLogEntries(s, 1))
			}
			s = reopen(t, s, r, nil)
			require.Zero(t, s.Recovery().Replayed)
			require.NoError(t, s.Read(1, buf))
			require.Equal(t, next, buf)
			require.NoError(t, s.Close())
		})
	}
}

// TestMicroLogWraps: a full micro log writes its entries' lines back and
// starts over; no write is lost, across wraps and reopens, and a copy-on-
// write write of a page between its micro-log writes leaves the older
// entries stale. With 2 version bits the log is emptied before a version
// can wrap around to an entry's.
func TestMicroLogWraps(t *testing.T) {
	for _, pidBits := range []int{0, 45} {
		t.Run(fmt.Sprint("pidbits-", pidBits), func(t *testing.T) {
			o := pagelog.Options{PageSize: 256, Pages: 4, Slots: 6, MicroLogLines: 2, MicroLogBytes: 1024, PIDBits: pidBits}
			s, r := mustCreate(t, o)
			want := make([][]byte, 4)
			for p := range want {
				want[p] = make([]byte, 256)
			}
			wraps := 0
			for i := range 60 {
				p := uint64(i % 4)
				if i%5 == 4 {
					want[p] = pattern(p, i, 256)
					require.NoError(t, s.Write(p, want[p]))
				} else {
					ln := i % 4
					fillPattern(want[p][64*ln:64*ln+64], p, i)
					require.NoError(t, s.WriteLines(p, want[p], lineMask(256, ln)))
				}
				if i%17 == 16 {
					wraps += pagelog.MicroLogWraps(s, 0) + pagelog.MicroLogWraps(s, 1)
					s = reopen(t, s, r, nil)
				}
			}
			wraps += pagelog.MicroLogWraps(s, 0) + pagelog.MicroLogWraps(s, 1)
			require.Positive(t, wraps, "no micro log wrapped")
			require.NoError(t, s.Check())
			s = reopen(t, s, r, nil)
			buf := make([]byte, 256)
			for p := range uint64(4) {
				require.NoError(t, s.Read(p, buf))
				require.Equal(t, want[p], buf, "page %d", p)
			}
			require.NoError(t, s.Close())
		})
	}
}

// TestReadOnly: Create refuses a read-only region; Open serves Read and
// Check from one, refuses writes, and refuses to open a store whose
// recovery would have to write.
func TestReadOnly(t *testing.T) {
	for _, c := range configs {
		t.Run(cfgName(c), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pages")
			o := c
			o.PageSize, o.Pages, o.Slots, o.MicroLogLines = 256, 4, 6, 2
			size, err := pagelog.Footprint(&o)
			require.NoError(t, err)
			rw, err := persist.Map(path, &persist.Options{Size: int64(size), Create: true})
			require.NoError(t, err)
			s, err := pagelog.Create(rw, &o)
			require.NoError(t, err)
			for p := range uint64(4) {
				require.NoError(t, s.Write(p, pattern(p, 1, 256)))
			}
			require.NoError(t, s.Close())
			require.NoError(t, rw.Close())

			ro, err := persist.Map(path, &persist.Options{ReadOnly: true})
			require.NoError(t, err)
			_, err = pagelog.Create(ro, &o)
			require.ErrorIs(t, err, pagelog.ErrReadOnly)
			require.ErrorIs(t, err, persist.ErrReadOnly)
			s, err = pagelog.Open(ro, nil)
			require.NoError(t, err)
			buf := make([]byte, 256)
			for p := range uint64(4) {
				require.NoError(t, s.Read(p, buf))
				require.Equal(t, pattern(p, 1, 256), buf)
			}
			require.NoError(t, s.Check())
			require.ErrorIs(t, s.Write(1, buf), persist.ErrReadOnly)
			require.ErrorIs(t, s.WriteLines(1, buf, lineMask(256, 0)), pagelog.ErrReadOnly)
			require.NoError(t, s.Close())
			require.NoError(t, ro.Close())

			// Leave something for recovery to write: a micro-log write
			// whose line in place did not reach the media, or (Checksum)
			// a page torn in place with its backup intact.
			rw, err = persist.Map(path, nil)
			require.NoError(t, err)
			s, err = pagelog.Open(rw, &pagelog.Options{MicroLogLines: 2})
			require.NoError(t, err)
			if c.Layout == pagelog.Checksum {
				require.NoError(t, s.Write(2, pattern(2, 2, 256)))
				rw.Bytes()[pagelog.PayloadOffset(s, 2)+9] ^= 0x40
			} else {
				page := pattern(2, 1, 256)
				fillPattern(page[64:128], 2, 9)
				require.NoError(t, s.WriteLines(2, page, lineMask(256, 1)))
				rw.Bytes()[pagelog.PayloadOffset(s, pagelog.CurrentSlot(s, 2))+70] ^= 0x40
			}
			require.NoError(t, s.Close())
			require.NoError(t, rw.Close())
			ro, err = persist.Map(path, &persist.Options{ReadOnly: true})
			require.NoError(t, err)
			_, err = pagelog.Open(ro, nil)
			require.ErrorIs(t, err, pagelog.ErrReadOnly)
			require.ErrorIs(t, err, persist.ErrReadOnly)
			t.Log(err)
			require.NoError(t, ro.Close())
		})
	}
}

// TestClosedRegion: a closed region is an error wrapping persist.ErrClosed
// for Create and Open, and for every operation of a store whose region was
// closed before it (a misuse: close the store first).
func TestClosedRegion(t *testing.T) {
	closed := func() *persist.Region {
		r, err := persist.Anonymous(1<<20, nil)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		return r
	}
	_, err := pagelog.Create(closed(), nil)
	require.ErrorIs(t, err, persist.ErrClosed)
	_, err = pagelog.Open(closed(), nil)
	require.ErrorIs(t, err, persist.ErrClosed)

	for _, c := range configs {
		r, err := persist.Anonymous(1<<20, nil)
		require.NoError(t, err)
		s, err := pagelog.Create(r, &c)
		require.NoError(t, err, cfgName(c))
		require.NoError(t, r.Close())
		page := make([]byte, s.PageSize())
		require.ErrorIs(t, s.Write(0, page), persist.ErrClosed)
		require.ErrorIs(t, s.WriteLines(0, page, pagelog.NewLines(s.PageSize())), persist.ErrClosed)
		require.ErrorIs(t, s.Read(0, page), persist.ErrClosed)
		require.ErrorIs(t, s.Check(), persist.ErrClosed)
		require.NoError(t, s.Close())
	}
}

func put64(r *persist.Region, off int, v uint64) { binary.LittleEndian.PutUint64(r.Bytes()[off:], v) }

// microEntry lays out a micro-log entry by hand: pid, slot, version, CRC
// word, a one-word mask and n zero lines.
func microEntry(pid, slot, ver, crcw, mask uint64, n int) []byte {
	e := make([]byte, 40+64*n)
	le := binary.LittleEndian
	le.PutUint64(e, pid)
	le.PutUint64(e[8:], slot)
	le.PutUint64(e[16:], ver)
	le.PutUint64(e[24:], crcw)
	le.PutUint64(e[32:], mask)
	return e
}

// plant appends the raw entries es to lane l's micro log of the closed
// store in r (reopened and closed again), for TestCorrupt.
func plant(l int, es ...[]byte) func(*pagelog.Store, *persist.Region) {
	return func(_ *pagelog.Store, r *persist.Region) {
		s, err := pagelog.Open(r, nil)
		if err != nil {
			panic(err)
		}
		for _, e := range es {
			if err := pagelog.AppendMicro(s, l, e); err != nil {
				panic(err)
			}
		}
		if err := s.Close(); err != nil {
			panic(err)
		}
	}
}

// bothSupers applies damage to both copies of a store's superblock.
func bothSupers(damage func(b []byte)) func(*pagelog.Store, *persist.Region) {
	return func(s *pagelog.Store, r *persist.Region) {
		damage(r.Bytes())
		damage(r.Bytes()[pagelog.SuperCopyOffset:])
	}
}

func TestCorrupt(t *testing.T) {
	type tc struct {
		name   string
		o      pagelog.Options
		mangle func(s *pagelog.Store, r *persist.Region)
	}
	packed := pagelog.Options{Layout: pagelog.Packed}
	twoWord := pagelog.Options{Layout: pagelog.TwoWord}
	checksum := pagelog.Options{Layout: pagelog.Checksum}
	packedCRC := pagelog.Options{Layout: pagelog.Packed, PayloadCRC: true}
	twoWordCRC := pagelog.Options{Layout: pagelog.TwoWord, PayloadCRC: true}
	// 5 pages, 7 slots: lane 0 writes pages 0, 2, 4, lane 1 pages 1, 3;
	// Packed uses 3 pid bits. Every page is at version 1 in slot p.
	for _, c := range []tc{
		// The superblock: damage to one copy is repaired from the other
		// (TestFlipHeaders); to both, it is corruption.
		{"superblock bit flip", packed, bothSupers(func(b []byte) { b[20] ^= 1 })},
		{"superblock crc", checksum, bothSupers(func(b []byte) { b[56] ^= 0x80 })},
		{"superblock reserved word", packed, bothSupers(func(b []byte) { b[61] = 1 })},
		{"superblock zeroed", packed, bothSupers(func(b []byte) { clear(b[:64]) })},
		{"packed header fails its check", packed, func(s *pagelog.Store, r *persist.Region) { r.Bytes()[pagelog.HeaderOffset(s, 2)+3] ^= 0x10 }},
		{"packed unused header fails its check", packed, func(s *pagelog.Store, r *persist.Region) { r.Bytes()[pagelog.HeaderOffset(s, 6)] = 1 }},
		{"packed header names page 6", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 0), pagelog.Seal(packedData(1, 6)))
		}},
		{"packed header without used bit", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 0), pagelog.Seal(1<<3) /* version 1 of page 0, no used bit */)
		}},
		{"packed duplicate version", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5), pagelog.Seal(packedData(1, 2))) // a spare claims version 1 of page 2
		}},
		{"packed versions not consecutive", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5), pagelog.Seal(packedData(3, 2)))
		}},
		{"packed page without slot", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 3), pagelog.Seal(1)) // unused
		}},
		// A zeroed header word is never valid (an unused slot has a mark
		// of its own): else zeroing a page's current slot would make its
		// previous version, in its lane's spare, current unseen.
		{"packed header zeroed", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 2), 0)
		}},
		{"packed unused header zeroed", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 6), 0)
		}},
		{"two-word version word zeroed", twoWord, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 1)+8, 0)
		}},
		{"two-word page-id word zeroed", twoWord, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5), 0)
		}},
		{"packed two spares for one page", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 3), pagelog.Seal(packedData(2, 1))) // page 3's slot now holds page 1: page 3 has none
		}},
		{"packed old versions of one lane in two slots", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5), pagelog.Seal(packedData(0, 0))) // version 0 of page 0
			put64(r, pagelog.HeaderOffset(s, 6), pagelog.Seal(packedData(0, 2))) // version 0 of page 2: both lane 0
		}},
		{"packed three slots for a page", packed, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5), pagelog.Seal(packedData(0, 0)))
			put64(r, pagelog.HeaderOffset(s, 6), pagelog.Seal(packedData(2, 0)))
		}},
		{"two-word page-id word fails its check", twoWord, func(s *pagelog.Store, r *persist.Region) {
			r.Bytes()[pagelog.HeaderOffset(s, 1)] ^= 0x02
		}},
		{"two-word version word fails its check", twoWord, func(s *pagelog.Store, r *persist.Region) {
			r.Bytes()[pagelog.HeaderOffset(s, 1)+13] ^= 0x5a
		}},
		{"two-word header names page 77", twoWord, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 1), pagelog.Seal(used|77))
		}},
		{"two-word unused slot with version", twoWord, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5)+8, pagelog.Seal(1<<47|3))
		}},
		{"two-word raw page id", twoWord, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 1), 1)
		}},
		{"payload CRC word fails its check", packedCRC, func(s *pagelog.Store, r *persist.Region) {
			r.Bytes()[pagelog.HeaderOffset(s, 2)+8] ^= 0x80
		}},
		{"payload CRC word of a spare fails its check", twoWordCRC, func(s *pagelog.Store, r *persist.Region) {
			r.Bytes()[pagelog.HeaderOffset(s, 6)+17] ^= 0x01
		}},
		{"two-word reserved word", twoWordCRC, func(s *pagelog.Store, r *persist.Region) {
			r.Bytes()[pagelog.HeaderOffset(s, 3)+24] = 1
		}},
		// Micro-log entries planted in a lane's log: every page is at
		// version 1 in slot p.
		{"micro log names page 8", packed, plant(0, microEntry(8, 0, 1, 0, 1, 1))},
		{"micro log of the wrong lane", packed, plant(0, microEntry(1, 1, 1, 0, 1, 1))}, // page 1 is on lane 1
		{"micro log slot out of range", twoWord, plant(1, microEntry(1, 9, 1, 0, 1, 1))},
		{"micro log line beyond the page", twoWord, plant(1, microEntry(1, 1, 1, 0, 1<<10, 1))}, // 256-byte pages have 4 lines
		{"micro log entry shorter than its mask", packed, plant(1, microEntry(3, 3, 1, 0, 0b11, 1))},
		{"micro log entry longer than its mask", packed, plant(1, microEntry(3, 3, 1, 0, 0b1, 2))},
		{"micro log empty mask", packed, plant(1, microEntry(3, 3, 1, 0, 0, 0))},
		{"micro log CRC word without payload CRCs", packed, plant(1, microEntry(3, 3, 1, pagelog.Seal(7), 1, 1))},
		{"micro log CRC word fails its check", packedCRC, plant(1, microEntry(3, 3, 1, 7, 1, 1))},
		{"micro log version beyond the version bits", packed, plant(0, microEntry(2, 2, 1<<50, 0, 1, 1))},
		{"micro log header and its copy", packed, func(s *pagelog.Store, r *persist.Region) {
			r.Bytes()[pagelog.LogOffset(s, 1)+20] ^= 0x01
			r.Bytes()[pagelog.LogOffset(s, 1)+walog.BlockSize+20] ^= 0x01
		}},
		{"micro log entry damaged", twoWordCRC, func(s *pagelog.Store, r *persist.Region) {
			// Two good (stale) entries, then damage to the first: not a
			// tear.
			e := microEntry(3, 3, 0, pagelog.Seal(9), 1, 1)
			plant(1, e, e)(s, r)
			r.Bytes()[pagelog.LogOffset(s, 1)+walog.HeaderSize+16+40] ^= 0xff // a zero byte of its line
		}},
		{"checksum home names another page", checksum, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 2), 3)
		}},
		{"checksum reserved bits", checksum, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 2)+16, 1<<40)
		}},
		{"checksum backup of the wrong lane", checksum, func(s *pagelog.Store, r *persist.Region) {
			put64(r, pagelog.HeaderOffset(s, 5), 1) // lane 0 backs up pages 0, 2, 4
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Pages, o.Slots, o.PageSize = 5, 7, 256
			s, r := mustCreate(t, o)
			require.NoError(t, s.Close())
			c.mangle(s, r)
			_, err := pagelog.Open(r, nil)
			require.ErrorIs(t, err, persist.ErrCorrupt)
			require.ErrorIs(t, err, pagelog.ErrCorrupt)
			t.Log(err)
		})
	}
}
