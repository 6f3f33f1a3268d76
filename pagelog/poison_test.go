//go:build linux

package pagelog_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
)

// Poisoned media: crash images of a store with one page poisoned — the
// superblock, its copy, the slot headers, a micro log, a page in the
// middle, the last slot. One superblock copy poisoned: Open reads the
// other. The slot headers or a micro log: Open is ErrMedia (damage to
// the structure). A payload: Read of that page is ErrMedia, every other
// page reads its last acknowledged version, a Write of the page relocates
// it (it reads again), its old slot is never reused (the lane's next
// copy-on-write write is refused), and the other lanes write on. No
// process death.
const poisonPages = 8

var poisonLayouts = []pagelog.Options{
	{PageSize: 4096, Pages: poisonPages, Slots: poisonPages + 2, MicroLogBytes: 8192},
	{PageSize: 4096, Pages: poisonPages, Slots: poisonPages + 2, MicroLogBytes: 8192, PayloadCRC: true},
	{PageSize: 4096, Pages: poisonPages, Slots: poisonPages + 2, MicroLogBytes: 8192, Layout: pagelog.TwoWord},
}

func poisonName(o pagelog.Options) string {
	n := o.Layout.String()
	if o.PayloadCRC {
		n += "-crc"
	}
	return n
}

// poisonStore is what the workload has acknowledged, as the check sees it
// at a crash.
type poisonStore struct {
	o        pagelog.Options
	broken   string // a broken variant the check opens the store with
	created  bool
	acked    [][]byte
	inflight int
	next     []byte
}

func (h *poisonStore) size() int {
	f, err := pagelog.Footprint(&h.o)
	if err != nil {
		panic(err)
	}
	return (f + 4095) &^ 4095
}

func (h *poisonStore) workload(w *crash.Run) error {
	h.created, h.inflight = false, -1
	h.acked = make([][]byte, poisonPages)
	s, err := pagelog.Create(w.Region("r"), &h.o)
	if err != nil {
		return err
	}
	h.created = true
	w.Durable("create")
	for op := range 14 {
		p := (op * 3) % poisonPages
		page := make([]byte, h.o.PageSize)
		var err error
		if op%3 == 2 && h.acked[p] != nil {
			// One line through the micro log: its entry names the
			// page's slot, which recovery replays unless it is poisoned.
			copy(page, h.acked[p])
			m := pagelog.NewLines(h.o.PageSize)
			m.Set(op % 64)
			fillPattern(page[op%64*64:][:64], uint64(p), op+1)
			h.inflight, h.next = p, page
			err = s.WriteLines(uint64(p), page, m)
		} else {
			fillPattern(page, uint64(p), op+1)
			h.inflight, h.next = p, page
			err = s.Write(uint64(p), page)
		}
		if err != nil {
			return err
		}
		h.acked[p], h.inflight = page, -1
		if op%3 != 2 {
			// (A micro-log write leaves its lines in place unflushed: the
			// log entry is what is durable.)
			w.Durable("write")
		}
	}
	return s.Close()
}

// check poisons the page at off (none for -1: Config.Poison did) and
// checks what Open, Read, Write and Check make of it.
func (h *poisonStore) check(off int) func(*crash.Image) error {
	return func(img *crash.Image) error {
		if off >= 0 {
			if err := img.Poison("r", off, 1); err != nil {
				return err
			}
		}
		bad := img.Poisoned("r")
		var s *pagelog.Store
		var err error
		if h.broken != "" {
			s, err = pagelog.OpenBroken(img.Region("r"), nil, h.broken)
		} else {
			s, err = pagelog.Open(img.Region("r"), nil)
		}
		if err != nil {
			switch {
			case !h.created:
				return nil
			case structtest.MediaIn(err, bad) != nil || !errors.Is(err, pagelog.ErrCorrupt):
				return fmt.Errorf("open: want ErrCorrupt wrapping a media error: %v", err)
			}
			// The slot headers and micro logs lie between the superblock
			// area and the payload slots, which end the store.
			f, _ := pagelog.Footprint(&h.o)
			if !structtest.Overlaps(bad, 8192, f-h.o.Slots*h.o.PageSize-8192) {
				return fmt.Errorf("open failed, but the slot headers and micro logs are readable: %v", err)
			}
			return nil // the structure is damaged
		}
		defer s.Close()
		if h.created && structtest.Overlaps(bad, 0, 8192) && s.Recovery().Superblock == "" {
			return fmt.Errorf("a poisoned superblock copy, and Recovery says nothing: %v", s.Recovery())
		}
		if err := structtest.PoisonedAgrees(s.Poisoned(), bad, 0, h.size()); err != nil {
			return err
		}
		buf := make([]byte, h.o.PageSize)
		var hurt []uint64
		for p := range poisonPages {
			sl := pagelog.CurrentSlot(s, p)
			err := s.Read(uint64(p), buf)
			if structtest.Overlaps(bad, pagelog.PayloadOffset(s, sl), h.o.PageSize) {
				hurt = append(hurt, uint64(p))
				if err := structtest.MediaIn(err, bad); err != nil {
					return fmt.Errorf("page %d, in poisoned slot %d: %w", p, sl, err)
				}
				if !bytes.Equal(buf, make([]byte, len(buf))) {
					return fmt.Errorf("page %d: ErrMedia, and the buffer holds data", p)
				}
				continue
			}
			want := h.acked[p]
			if want == nil {
				want = make([]byte, h.o.PageSize)
			}
			switch {
			case err != nil:
				return fmt.Errorf("page %d, outside the poisoned pages: %w", p, err)
			case !h.created || bytes.Equal(buf, want) || h.inflight == p && bytes.Equal(buf, h.next):
			default:
				return fmt.Errorf("page %d: not its acknowledged version", p)
			}
		}
		if !slices.Equal(s.Recovery().Unreadable, hurt) {
			return fmt.Errorf("Recovery().Unreadable %v, the poisoned pages are %v", s.Recovery().Unreadable, hurt)
		}
		if err := s.Check(); err != nil && !errors.Is(err, persist.ErrMedia) {
			return fmt.Errorf("check: %w", err)
		}
		return h.relocate(s, hurt, bad)
	}
}

// relocate writes every poisoned page (relocated: it reads again, and its
// lane refuses its next copy-on-write write, whose spare is the poisoned
// slot) and one page of every other lane.
func (h *poisonStore) relocate(s *pagelog.Store, hurt []uint64, bad []persist.Range) error {
	page := make([]byte, h.o.PageSize)
	buf := make([]byte, h.o.PageSize)
	lost := map[int]bool{}
	for l := range s.Lanes() {
		lost[l] = structtest.Overlaps(bad, pagelog.PayloadOffset(s, pagelog.Spare(s, l)), h.o.PageSize)
	}
	for _, p := range hurt {
		l := int(p) % s.Lanes()
		old := pagelog.CurrentSlot(s, int(p))
		fillPattern(page, p, 1000)
		err := s.Write(p, page)
		if lost[l] {
			if err := refused(err); err != nil {
				return fmt.Errorf("write of page %d on lane %d, whose spare is poisoned: %w", p, l, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("relocating write of page %d: %w", p, err)
		}
		if err := s.Read(p, buf); err != nil || !bytes.Equal(buf, page) {
			return fmt.Errorf("page %d after its relocating write: %v", p, err)
		}
		if sp := pagelog.Spare(s, l); sp != old {
			return fmt.Errorf("lane %d's spare is slot %d, not the poisoned %d", l, sp, old)
		}
		lost[l] = true
	}
	for l := range s.Lanes() {
		p := uint64(l) // a page of lane l
		if slices.Contains(hurt, p) {
			continue
		}
		fillPattern(page, p, 2000)
		err := s.Write(p, page)
		switch {
		case lost[l] && refused(err) != nil:
			return fmt.Errorf("write of page %d on lane %d, whose spare is poisoned: %w", p, l, refused(err))
		case lost[l]:
			if err := s.Read(p, buf); err != nil {
				return fmt.Errorf("page %d after a refused write: %w", p, err)
			}
		case err != nil:
			return fmt.Errorf("write of page %d on the healthy lane %d: %w", p, l, err)
		}
	}
	return nil
}

// refused checks that a write on a lane whose spare slot is poisoned was
// refused with ErrMedia up front, not tried: a store into poisoned media
// faults here, but on real PMem it need not, and the page would be lost.
func refused(err error) error {
	var me *persist.MediaError
	switch {
	case errors.As(err, &me):
		return fmt.Errorf("the write stored into the poisoned slot: %w", err)
	case !errors.Is(err, persist.ErrMedia):
		return fmt.Errorf("%v, want it refused with ErrMedia", err)
	}
	return nil
}

// A store that reuses a poisoned slot as a spare is caught.
func TestPoisonBroken(t *testing.T) {
	h := &poisonStore{o: poisonLayouts[0], broken: "reuse-poisoned-slot"}
	cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: h.size()}}, SampleFences: 4, MaxImages: 4, MaxAlone: 4, Pairs: -1, RecoveryCrashes: -1, Seed: 5}
	rep, err := crash.Check(cfg, h.workload, h.check(32768))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Failures, "the broken variant was not caught")
	t.Logf("caught (%s)", rep.Failures[0].Summary())
}

func TestPoison(t *testing.T) {
	for _, o := range poisonLayouts {
		h := &poisonStore{o: o}
		sites := append(structtest.PoisonSites(0, h.size()),
			structtest.PoisonSite{Name: "superblock-copy", Off: 4096},
			structtest.PoisonSite{Name: "slot-headers", Off: 8192},
			structtest.PoisonSite{Name: "micro-log", Off: 16384})
		for _, site := range sites {
			t.Run(fmt.Sprintf("%s/%s", poisonName(o), site.Name), func(t *testing.T) {
				cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: h.size()}}, SampleFences: 8, MaxImages: 8, MaxAlone: 8, Pairs: -1, RecoveryCrashes: -1, Seed: 5}
				rep := crash.Test(t, cfg, h.workload, h.check(site.Off))
				require.Positive(t, rep.Images)
			})
		}
	}
}

// The same on a seeded random page of the store in every image
// (Config.Poison).
func TestPoisonRandom(t *testing.T) {
	for _, o := range poisonLayouts {
		t.Run(poisonName(o), func(t *testing.T) {
			h := &poisonStore{o: o}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: h.size()}}, SampleFences: 8, MaxImages: 4, MaxAlone: 4, Pairs: -1,
				RecoveryCrashes: -1, Poison: &crash.Poison{Size: h.size()}, Seed: 9}
			crash.Test(t, cfg, h.workload, h.check(-1))
		})
	}
}

// The Checksum layout keeps pages in place: a poisoned page's Read is
// ErrMedia, its Write is refused up front (no relocation), the other
// pages read and write, and Open lists it in Recovery().Unreadable.
func TestPoisonChecksum(t *testing.T) {
	o := pagelog.Options{Layout: pagelog.Checksum, PageSize: 4096, Pages: 4, Slots: 6}
	size, err := pagelog.Footprint(&o)
	require.NoError(t, err)
	r := structtest.Region(t, (size+4095)&^4095)
	s, err := pagelog.Create(r, &o)
	require.NoError(t, err)
	pages := make([][]byte, 4)
	for p := range pages {
		pages[p] = make([]byte, 4096)
		fillPattern(pages[p], uint64(p), 1)
		require.NoError(t, s.Write(uint64(p), pages[p])) // lane 1's backup ends with page 3
	}
	require.NoError(t, s.Close())
	s, err = pagelog.Open(r, nil)
	require.NoError(t, err)
	require.NoError(t, r.Poison(pagelog.PayloadOffset(s, 1), 1))
	bad := r.Poisoned()
	buf := make([]byte, 4096)
	require.NoError(t, structtest.MediaIn(s.Read(1, buf), bad))
	require.NoError(t, refused(s.Write(1, pages[1])))
	for _, p := range []uint64{0, 2, 3} {
		require.NoError(t, s.Read(p, buf))
		require.Equal(t, pages[p], buf)
		require.NoError(t, s.Write(p, pages[p]))
	}
	require.ErrorIs(t, s.Check(), persist.ErrMedia)
	require.NoError(t, s.Close())
	s, err = pagelog.Open(r, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{1}, s.Recovery().Unreadable)
	require.NoError(t, structtest.PoisonedAgrees(s.Poisoned(), bad, 0, size))
	require.NoError(t, s.Close())
}
