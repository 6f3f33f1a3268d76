//go:build linux

package walog_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// Poisoned media: crash images of a log with its header page, a page in
// the middle of its entries or its last page (free space) poisoned. A
// poisoned header is ErrMedia at Open. A poisoned entry fails Open with
// ErrCorrupt wrapping the media error, naming the range, and a salvaging
// Open keeps exactly the entries before it. Poisoned free space costs
// nothing: Open returns every entry. No process death in any case.
const poisonLogSize = 16 << 10 // 4 pages; the entries fill about 2.5

// poisonHist is what the poison workload has acknowledged, as the check
// sees it at a crash.
type poisonHist struct {
	f        walog.Format
	opts     *walog.Options // nil: the defaults, with MaxEntry 600
	created  bool
	acked    []poisonEntry
	inflight *poisonEntry
}

type poisonEntry struct {
	seq     uint64
	data    []byte
	off, fp int // region offsets of its bytes
}

func (h *poisonHist) workload(w *crash.Run) error {
	h.created, h.acked, h.inflight = false, nil, nil
	o := h.opts
	if o == nil {
		o = &walog.Options{Format: h.f, MaxEntry: 600}
	}
	l, err := walog.Create(w.Region("r"), o)
	if err != nil {
		return err
	}
	h.created = true
	w.Durable("create")
	rng := structtest.NewRand(uint64(h.f) + 1)
	off := walog.HeaderSize
	for i := range 40 {
		n := 1 + rng.Intn(500)
		e := poisonEntry{seq: uint64(i + 1), data: crashPayload(uint64(i+1), n), off: off, fp: walog.Footprint(h.f, n)}
		h.inflight = &e
		seq, err := l.Append(e.data)
		if err != nil {
			return err
		}
		if seq != e.seq {
			return fmt.Errorf("append %d got seq %d", i, seq)
		}
		h.acked, h.inflight = append(h.acked, e), nil
		w.Durable("append")
		off = (off + e.fp + 7) &^ 7
		if off > 10<<10 {
			break
		}
	}
	return l.Close()
}

// openOpts are the options of the check's Open: the workload's (for its
// variant), salvaging or not.
func (h *poisonHist) openOpts(salvage bool) *walog.Options {
	var o walog.Options
	if h.opts != nil {
		o = *h.opts
	}
	o.Salvage = salvage
	return &o
}

// check poisons the page at off (none for -1: Config.Poison did) and
// checks what Open, a salvaging Open, the iterator and an append make of
// it.
func (h *poisonHist) check(off int) func(*crash.Image) error {
	return func(img *crash.Image) error {
		if off >= 0 {
			if err := img.Poison("r", off, 1); err != nil {
				return err
			}
		}
		bad := img.Poisoned("r")
		r := img.Region("r")
		l, err := walog.Open(r, h.openOpts(false))
		if done, err := structtest.PoisonedOpen(err, bad, walog.HeaderSize, h.created); done && structtest.Overlaps(bad, 0, walog.HeaderSize) {
			return err // the header is unreadable: ErrMedia
		}
		// The first entry, acknowledged or in flight, on poisoned media.
		hit := len(h.acked)
		for i, e := range h.acked {
			if structtest.Overlaps(bad, e.off, e.fp) {
				hit = i
				break
			}
		}
		inflightHit := h.inflight != nil && structtest.Overlaps(bad, h.inflight.off, h.inflight.fp)
		if err != nil {
			if !h.created {
				return nil
			}
			if merr := structtest.MediaIn(err, bad); merr != nil || !errors.Is(err, walog.ErrCorrupt) {
				return fmt.Errorf("open: want ErrCorrupt wrapping a media error: %v", err)
			}
			// Salvage keeps exactly the acknowledged entries before the
			// hit. (Open may also refuse a log whose acknowledged entries
			// all lie before the poison, when it lies within the reach of
			// the append a crash interrupted: it cannot read what is
			// there. Salvage then keeps every acknowledged entry.)
			var extra *poisonEntry
			if hit == len(h.acked) && !inflightHit {
				extra = h.inflight
			}
			l, err = walog.Open(r, h.openOpts(true))
			if err != nil {
				return fmt.Errorf("salvaging open: %w", err)
			}
			defer l.Close()
			rec := l.Recovery()
			if !rec.Salvaged || structtest.MediaIn(rec.Stop, bad) != nil {
				return fmt.Errorf("salvaged open: %v", rec)
			}
			if err := h.entries(l, h.acked[:hit], extra, bad, img.InRecovery()); err != nil {
				return err
			}
			return appendProbe(l, bad)
		}
		defer l.Close()
		if hit < len(h.acked) {
			if !img.InRecovery() {
				return fmt.Errorf("open succeeded over the poisoned entry %d (%v): %v", hit, bad, l.Recovery())
			}
			// A salvage below, crashed after it cut the log.
			if err := h.entries(l, h.acked[:hit], nil, bad, true); err != nil {
				return err
			}
			return appendProbe(l, bad)
		}
		if err := h.entries(l, h.acked, h.inflight, bad, img.InRecovery()); err != nil {
			return err
		}
		if err := l.Check(); err != nil {
			return fmt.Errorf("check: %w", err)
		}
		return appendProbe(l, bad)
	}
}

// probe is what the check appends once the log is open.
var probe = make([]byte, 300)

// entries checks that the log holds want (and possibly extra after it;
// in an image of a crashed recovery, also the check's probe).
func (h *poisonHist) entries(l *walog.Log, want []poisonEntry, extra *poisonEntry, bad []persist.Range, inRecovery bool) error {
	it := l.Iter()
	i := 0
	for it.Next() {
		if inRecovery && bytes.Equal(it.Entry(), probe) {
			continue // the probe below, before the crash in recovery
		}
		var w poisonEntry
		switch {
		case i < len(want):
			w = want[i]
		case i == len(want) && extra != nil && it.Seq() == extra.seq:
			w = *extra
		default:
			return fmt.Errorf("entry %d (seq %d) beyond the %d expected", i, it.Seq(), len(want))
		}
		if it.Seq() != w.seq || !bytes.Equal(it.Entry(), w.data) {
			return fmt.Errorf("entry %d: seq %d, %d bytes; want seq %d, %d bytes", i, it.Seq(), len(it.Entry()), w.seq, len(w.data))
		}
		i++
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("iter: %w", err)
	}
	if i < len(want) {
		return fmt.Errorf("%d entries, want %d (poisoned %v)", i, len(want), bad)
	}
	return nil
}

// appendProbe appends the probe: acknowledged, or a media error when it
// reaches poisoned free space.
func appendProbe(l *walog.Log, bad []persist.Range) error {
	if _, err := l.Append(probe); err != nil && structtest.MediaIn(err, bad) != nil {
		return fmt.Errorf("append after open: %w", err)
	}
	return nil
}

func TestPoison(t *testing.T) {
	for _, f := range formats {
		for _, site := range structtest.PoisonSites(0, poisonLogSize) {
			t.Run(fmt.Sprintf("%s/%s", f, site.Name), func(t *testing.T) {
				h := &poisonHist{f: f}
				cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: poisonLogSize}}, SampleFences: 12, MaxImages: 8, MaxAlone: 8, Pairs: -1, RecoveryCrashes: -1, Seed: 5}
				rep := crash.Test(t, cfg, h.workload, h.check(site.Off))
				require.Positive(t, rep.Images)
			})
		}
	}
}

// A recovery blind to poison (reading and rewriting the poisoned free
// space) is caught: the salvage of a poisoned entry fails.
func TestPoisonBroken(t *testing.T) {
	for _, f := range formats {
		h := &poisonHist{f: f, opts: walog.PoisonBlind(walog.Options{Format: f, MaxEntry: 600})}
		cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: poisonLogSize}}, SampleFences: 4, MaxImages: 4, MaxAlone: 4, Pairs: -1, RecoveryCrashes: -1, Seed: 5}
		rep, err := crash.Check(cfg, h.workload, h.check(structtest.PoisonSites(0, poisonLogSize)[1].Off))
		require.NoError(t, err)
		require.NotEmpty(t, rep.Failures, "%s: the broken variant was not caught", f)
		t.Logf("%s: caught (%s)", f, rep.Failures[0].Summary())
	}
}

// The same on a seeded random page of the log in every image
// (Config.Poison).
func TestPoisonRandom(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			h := &poisonHist{f: f}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: poisonLogSize}}, SampleFences: 12, MaxImages: 8, MaxAlone: 8, Pairs: -1,
				Poison: &crash.Poison{Size: poisonLogSize}, Seed: 9}
			crash.Test(t, cfg, h.workload, h.check(-1))
		})
	}
}

// A page poisoned under an open log: the iterator returns the entries
// before it and ends with ErrCorrupt wrapping the media error; Check
// reports it; an append that reaches poisoned free space fails with the
// media error, acknowledges nothing, and the log takes no more appends.
func TestPoisonLive(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := structtest.Region(t, 5*4096)
			l, err := walog.Create(r, &walog.Options{Format: f, Chunk: 4096})
			require.NoError(t, err)
			var acked [][]byte
			for i := 0; l.Stats().Used < 6000; i++ {
				p := crashPayload(uint64(i+1), 100)
				_, err := l.Append(p)
				require.NoError(t, err)
				acked = append(acked, p)
			}
			require.NoError(t, r.Poison(4096, 1))
			bad := r.Poisoned()
			require.NoError(t, structtest.PoisonedAgrees(l.Poisoned(), bad, 0, r.Size()))
			it := l.Iter()
			n := 0
			for it.Next() {
				require.Equal(t, acked[n], it.Entry(), "entry %d", n)
				n++
			}
			require.NoError(t, structtest.MediaIn(it.Err(), bad))
			require.ErrorIs(t, it.Err(), walog.ErrCorrupt)
			require.Equal(t, (4096-walog.HeaderSize)/walog.Footprint(f, 100), n, "entries before the poisoned page")
			require.NoError(t, structtest.MediaIn(l.Check(), bad))

			// Poisoned free space ahead: the append that reaches it fails.
			require.NoError(t, r.Poison(3*4096, 1))
			bad = r.Poisoned()
			var failed error
			for range 100 {
				if _, err := l.Append(make([]byte, 100)); err != nil {
					failed = err
					break
				}
			}
			require.NoError(t, structtest.MediaIn(failed, bad))
			_, err = l.Append([]byte("after"))
			require.NoError(t, structtest.MediaIn(err, bad), "the log takes no more appends")
			require.NoError(t, l.Close())

			// Unpoisoned (the pages keep their bytes), the log opens with
			// every acknowledged entry.
			require.NoError(t, r.Unpoison(0, r.Size()))
			l, err = walog.Open(r, nil)
			require.NoError(t, err)
			it = l.Iter()
			n = 0
			for it.Next() {
				if n < len(acked) {
					require.Equal(t, acked[n], it.Entry(), "entry %d", n)
				}
				n++
			}
			require.NoError(t, it.Err())
			require.GreaterOrEqual(t, n, len(acked))
			require.NoError(t, l.Close())
		})
	}
}

// Create over a poisoned page is ErrMedia and leaves nothing claimed.
func TestCreateOnPoison(t *testing.T) {
	for _, f := range formats {
		r := structtest.Region(t, 16<<10)
		require.NoError(t, r.Poison(0, 1))
		_, err := walog.Create(r, &walog.Options{Format: f})
		require.ErrorIs(t, err, persist.ErrMedia)
		require.ErrorIs(t, err, persist.ErrCorrupt)
		structtest.RequireFree(t, r, 0, r.Size())
		require.NoError(t, r.Unpoison(0, r.Size()))
		l, err := walog.Create(r, &walog.Options{Format: f})
		require.NoError(t, err)
		require.NoError(t, l.Close())
	}
}

// A set member with a poisoned entry: OpenSet fails with ErrCorrupt
// wrapping the media error, naming the member; a salvaging OpenSet cuts
// that member before the entry and keeps the other whole.
func TestPoisonSet(t *testing.T) {
	r := structtest.Region(t, 32<<10)
	parts, err := walog.Split(r, 2)
	require.NoError(t, err)
	s, err := walog.CreateSet(parts, nil)
	require.NoError(t, err)
	for i := range 200 {
		_, err := s.Log(i % 2).Append(crashPayload(uint64(i+1), 100))
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	off := parts[1].Offset + 8192 // a page of member 1's entries
	require.NoError(t, r.Poison(off, 1))
	bad := r.Poisoned()
	_, err = walog.OpenSet(parts, nil)
	require.NoError(t, structtest.MediaIn(err, bad))
	require.ErrorIs(t, err, walog.ErrCorrupt)
	require.Contains(t, err.Error(), "set member 1")
	s, err = walog.OpenSet(parts, &walog.Options{Salvage: true})
	require.NoError(t, err)
	defer s.Close()
	rec := s.Recovery()
	require.False(t, rec[0].Salvaged)
	require.Equal(t, 100, rec[0].Entries)
	require.True(t, rec[1].Salvaged)
	require.NoError(t, structtest.MediaIn(rec[1].Stop, bad))
	require.Positive(t, rec[1].Entries)
	require.Less(t, parts[1].Offset+walog.HeaderSize+rec[1].Entries*walog.Footprint(walog.PopLog, 100), off+1)
}
