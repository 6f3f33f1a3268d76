//go:build linux

package crash_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// pages is a toy structure for the poison model: page p of the region
// holds records (a sequence number and its checksum) in slots of 16
// bytes, each written once; a write makes one record durable, and the
// recovery of a page is its last slot with a good checksum (a torn one
// is the write in flight).
type pages struct {
	n     int
	acked []uint64 // per page, the sequence acknowledged
	// lenient is the broken recovery: a page it cannot read is taken for
	// a page never written, the damage mistaken for "empty".
	lenient bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var sink byte

func (p *pages) workload(w *crash.Run) error {
	r := w.Region("r")
	ps := os.Getpagesize()
	p.acked = make([]uint64, p.n)
	for i := 1; i <= 3*p.n; i++ {
		pg, slot := i%p.n, i/p.n
		b := r.Bytes()[pg*ps+16*slot : pg*ps+16*slot+16]
		put(b, 0, uint64(i))
		put(b, 8, uint64(crc32.Checksum(b[:8], castagnoli)))
		if err := r.Persist(b); err != nil {
			return err
		}
		p.acked[pg] = uint64(i)
		w.Durable("write")
	}
	return nil
}

// read recovers page pg: its sequence, 0 for a page never written, or
// the media error of a poisoned page.
func (p *pages) read(r *persist.Region, pg int) (seq uint64, err error) {
	ps := os.Getpagesize()
	err = r.Guard(func() error {
		for slot := 0; slot < 4; slot++ {
			b := r.Bytes()[pg*ps+16*slot : pg*ps+16*slot+16]
			if u64(b, 0) != 0 && u64(b, 8) == uint64(crc32.Checksum(b[:8], castagnoli)) {
				seq = u64(b, 0)
			}
		}
		return nil
	})
	if p.lenient && errors.Is(err, persist.ErrMedia) {
		return 0, nil
	}
	return seq, err
}

// check: a poisoned page is ErrMedia naming its range, every other page
// holds at least what was acknowledged. poisoned counts the pages found
// poisoned.
func (p *pages) check(poisoned *int) func(*crash.Image) error {
	return func(img *crash.Image) error {
		r := img.Region("r")
		bad := img.Poisoned("r")
		ps := int64(os.Getpagesize())
		for pg := range p.n {
			seq, err := p.read(r, pg)
			var me *persist.MediaError
			inBad := false
			for _, g := range bad {
				inBad = inBad || g.Overlaps(int64(pg)*ps, int64(pg+1)*ps)
			}
			switch {
			case errors.As(err, &me):
				lo, hi := me.Range()
				if !inBad || len(bad) == 0 || lo != bad[0].Lo || hi != bad[0].Hi {
					return fmt.Errorf("page %d: %v, but the poisoned ranges are %v", pg, err, bad)
				}
				*poisoned++
			case err != nil:
				return err
			case inBad:
				return fmt.Errorf("page %d is poisoned (%v) and read without an error", pg, bad)
			case seq < p.acked[pg]:
				return fmt.Errorf("page %d: sequence %d acknowledged, %d recovered", pg, p.acked[pg], seq)
			}
		}
		return nil
	}
}

// Config.Poison poisons one seeded page of every crash image: the
// recovery reports it as ErrMedia naming the range, and reads every
// other page; the lenient recovery, which takes the poisoned page for an
// empty one, is caught.
func TestPoisonEveryImage(t *testing.T) {
	ps := os.Getpagesize()
	// 4 pages: the images are copies in Go memory (a page-multiple
	// allocation is page-aligned, so its pages can be protected); 1 MiB:
	// the images are copy-on-write mappings of the media file.
	for _, size := range []int{4 * ps, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testPoisonEveryImage(t, size) })
	}
}

func testPoisonEveryImage(t *testing.T, size int) {
	ps := os.Getpagesize()
	cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: size}}, Poison: &crash.Poison{Size: 4 * ps}, RecoveryCrashes: -1, Seed: 7}
	p := &pages{n: 4}
	var poisoned int
	rep, err := crash.Check(cfg, p.workload, p.check(&poisoned))
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v %v", rep, rep.Failures)
	require.Positive(t, rep.Images)
	require.Equal(t, rep.Images, poisoned, "one page of every image is poisoned")

	broken := &pages{n: 4, lenient: true}
	rep, err = crash.Check(cfg, broken.workload, broken.check(new(int)))
	require.NoError(t, err)
	require.True(t, rep.Failed(), "damage taken for an empty page is caught")
	msg := rep.Failures[0].Err.Error()
	require.Contains(t, msg, "read without an error")
	require.Contains(t, msg, "(image poisoned: r [", "the failure says what was poisoned")
	require.Contains(t, msg, "(Config.Poison)")
	t.Log(msg)
}

// The same seed poisons the same pages: a failure replays.
func TestPoisonIsSeeded(t *testing.T) {
	ps := os.Getpagesize()
	seen := func(seed uint64) []string {
		var out []string
		cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 8 * ps}}, Poison: &crash.Poison{Pages: 2, Off: ps, Size: 6 * ps}, RecoveryCrashes: -1, Seed: seed}
		p := &pages{n: 8}
		_, err := crash.Check(cfg, p.workload, func(img *crash.Image) error {
			g := img.Poisoned("r")
			if len(g) != 1 || g[0].Len() != int64(2*ps) || g[0].Lo < int64(ps) || g[0].Hi > int64(7*ps) {
				return fmt.Errorf("poisoned %v: want 2 pages inside [%d, %d)", g, ps, 7*ps)
			}
			out = append(out, fmt.Sprint(g))
			return nil
		})
		require.NoError(t, err)
		return out
	}
	a, b, c := seen(1), seen(1), seen(2)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
}

// Run.Poison marks media: the images taken after the call have the
// pages poisoned, those before do not; a new run starts clean.
func TestRunPoison(t *testing.T) {
	ps := os.Getpagesize()
	var marked bool
	var before, after int
	wl := func(w *crash.Run) error {
		marked = false
		r := w.Region("r")
		for i := range 6 {
			if i == 3 {
				require.NoError(t, w.Poison("r", 2*ps+100, 1))
				marked = true
			}
			put(r.Bytes(), 8*i, uint64(i+1))
			if err := r.Persist(r.Bytes()[8*i : 8*i+8]); err != nil {
				return err
			}
		}
		return nil
	}
	ck := func(img *crash.Image) error {
		g := img.Poisoned("r")
		switch {
		case !marked && len(g) == 0:
			before++
		case marked && len(g) == 1 && g[0] == (persist.Range{Lo: int64(2 * ps), Hi: int64(3 * ps)}):
			after++
			err := img.Region("r").Guard(func() error { sink = img.Region("r").Bytes()[2*ps]; return nil })
			if !errors.Is(err, persist.ErrMedia) {
				return fmt.Errorf("a load from the poisoned page: %v", err)
			}
		default:
			return fmt.Errorf("marked=%v, poisoned %v", marked, g)
		}
		return nil
	}
	cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 4 * ps}}, SampleFences: 5, Seed: 3}
	rep, err := crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v %v", rep, rep.Failures)
	require.Positive(t, before)
	require.Positive(t, after)

	require.ErrorIs(t, crashPoisonErr(t, crash.Config{Regions: []crash.Spec{{Name: "r", Size: 4096 + 8}}}), crash.ErrConfig)
}

func crashPoisonErr(t *testing.T, cfg crash.Config) error {
	var perr error
	_, err := crash.Check(cfg, func(w *crash.Run) error {
		perr = w.Poison("r", 0, 1)
		return nil
	}, func(*crash.Image) error { return nil })
	require.NoError(t, err)
	return perr
}

// Image.Poison poisons a page of one image for its check; the recovery of
// a poisoned image is not crashed again, and the poison is lifted when
// the check returns (the image's memory is reused).
func TestImagePoison(t *testing.T) {
	ps := os.Getpagesize()
	p := &pages{n: 2}
	var checked int
	ck := func(img *crash.Image) error {
		if err := img.Poison("r", 0, 1); err != nil {
			return err
		}
		checked++
		_, err := p.read(img.Region("r"), 0)
		if !errors.Is(err, persist.ErrMedia) {
			return fmt.Errorf("page 0 poisoned, read: %v", err)
		}
		if seq, err := p.read(img.Region("r"), 1); err != nil || seq < p.acked[1] {
			return fmt.Errorf("page 1: %d, %v", seq, err)
		}
		return img.Region("r").Persist(img.Region("r").Bytes()[ps : ps+8]) // recovery's own fence: no crash point now
	}
	rep, err := crash.Check(crash.Config{Regions: []crash.Spec{{Name: "r", Size: 2 * ps}}}, p.workload, ck)
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v %v", rep, rep.Failures)
	require.Equal(t, 0, rep.RecoveryPoints, "a poisoned image's recovery is not crashed again")
	require.Equal(t, rep.Images, checked)

	rep, err = crash.Check(crash.Config{Regions: []crash.Spec{{Name: "r", Size: 2 * ps}}}, p.workload, func(img *crash.Image) error {
		return img.Poison("r", 2*ps, 1)
	})
	require.NoError(t, err)
	require.True(t, rep.Failed())
	require.ErrorIs(t, rep.Failures[0].Err, crash.ErrConfig, "a range outside the region")
}

func TestPoisonConfigErrors(t *testing.T) {
	ps := os.Getpagesize()
	wl := func(*crash.Run) error { return nil }
	ck := func(*crash.Image) error { return nil }
	for _, c := range []struct {
		cfg  crash.Config
		want string
	}{
		{crash.Config{Regions: []crash.Spec{{Name: "r", Size: ps + 8}}, Poison: &crash.Poison{}}, "a multiple of"},
		{crash.Config{Regions: []crash.Spec{{Name: "r", Size: ps}}, Poison: &crash.Poison{Region: "x"}}, `Poison.Region "x"`},
		{crash.Config{Regions: []crash.Spec{{Name: "r", Size: ps}}, Poison: &crash.Poison{Pages: 2}}, "poison of"},
		{crash.Config{Regions: []crash.Spec{{Name: "r", Size: 2 * ps}}, Poison: &crash.Poison{Off: ps, Size: 2 * ps}}, "does not fit"},
		{crash.Config{Regions: []crash.Spec{{Name: "r", Size: ps}}, Poison: &crash.Poison{Pages: -1}}, "negative"},
	} {
		_, err := crash.Check(c.cfg, wl, ck)
		require.ErrorIs(t, err, crash.ErrConfig, "%+v", c.cfg.Poison)
		require.ErrorContains(t, err, c.want)
	}
}
