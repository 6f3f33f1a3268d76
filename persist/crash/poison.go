package crash

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

// Poison is the poison model of a Config (Config.Poison): every crash
// image gets a seeded random range of pages poisoned before the check
// runs, as uncorrectable media errors poison ranges of real PMem. A load
// or store there faults (persist.Region.Poison): a structure that reads
// it under persist.Guard gets persist.ErrMedia naming the range, one that
// does not kills the test process. The check learns the range from
// Image.Poisoned.
type Poison struct {
	// Region names the region poisoned; "" picks one of the Config's
	// regions for each image, with the seed.
	Region string
	// Off and Size bound the poisoned pages to the bytes [Off, Off+Size)
	// of the region (a structure's area); Size 0 means to the region's
	// end.
	Off, Size int
	// Pages is the length of the poisoned range, in pages
	// (os.Getpagesize()); 0 means 1.
	Pages int
}

// poisonMarks are the ranges Run.Poison marked in a region's media; the
// images of the region taken after the call have them poisoned. A
// region's Spec carries them (Spec.marks), so the images made from it
// share them and a new run of the workload starts without.
type poisonMarks struct{ ranges []persist.Range }

// Poison marks the bytes [off, off+n) of the named region as poisoned on
// media from now on: every crash image taken after this call has the
// pages holding them unreadable (faulting), as media that went bad while
// the program ran. The workload's own memory stays readable — the
// simulator reads it to find what it wrote — so the structure running the
// workload does not see the poison; its recovery, on each later image,
// does. Poisoning needs whole pages of memory: the region's Size must be
// a multiple of os.Getpagesize() (ErrConfig otherwise). An unknown name
// panics as in Region.
func (w *Run) Poison(name string, off, n int) error {
	s := w.m.region(name)
	if err := poisonable(s.spec, off, n); err != nil {
		return err
	}
	if s.spec.marks == nil {
		s.spec.marks = &poisonMarks{}
	}
	s.spec.marks.ranges = append(s.spec.marks.ranges, persist.Range{Lo: int64(off), Hi: int64(off + n)})
	return nil
}

// Poison poisons the pages holding bytes [off, off+n) of the named
// region of this image, now (persist.Region.Poison): the check's loads
// and stores there fault. The harness lifts the poison when the check
// returns. The recovery of a poisoned image is not crashed again
// (Config.RecoveryCrashes): the simulator would read the poisoned pages
// to find what the recovery wrote. An unknown name panics as in Region.
func (img *Image) Poison(name string, off, n int) error {
	s := img.m.region(name)
	if err := poisonable(s.spec, off, n); err != nil {
		return err
	}
	img.m.mu.Lock()
	img.m.tracking = false
	img.m.mu.Unlock()
	return s.region.Poison(off, n)
}

// Poisoned returns the poisoned ranges of the named region of this image
// (whole pages), from Run.Poison, Config.Poison and Image.Poison.
func (img *Image) Poisoned(name string) []persist.Range {
	return img.m.region(name).region.Poisoned()
}

// poisonable checks a range to poison in a region of spec.
func poisonable(spec Spec, off, n int) error {
	ps := os.Getpagesize()
	switch {
	case spec.Size%ps != 0:
		return fmt.Errorf("%w: poison in region %q of %d bytes: poisoning needs whole pages, a size that is a multiple of %d", ErrConfig, spec.Name, spec.Size, ps)
	case off < 0 || n <= 0 || off > spec.Size || n > spec.Size-off:
		return fmt.Errorf("%w: poison of %d bytes at offset %d of region %q (%d bytes)", ErrConfig, n, off, spec.Name, spec.Size)
	}
	return nil
}

// validate checks the poison model against the Config's regions.
func (p *Poison) validate(regions []Spec) error {
	if p == nil {
		return nil
	}
	if p.Pages < 0 || p.Off < 0 || p.Size < 0 {
		return fmt.Errorf("%w: Poison %+v: negative", ErrConfig, *p)
	}
	found := false
	for _, s := range regions {
		if p.Region != "" && s.Name != p.Region {
			continue
		}
		found = true
		if err := poisonable(s, p.Off, max(p.pages()*os.Getpagesize(), 1)); err != nil {
			return fmt.Errorf("%w (Config.Poison %+v)", err, *p)
		}
		if p.Size > 0 && (p.Size > s.Size-p.Off || p.pages()*os.Getpagesize() > p.Size) {
			return fmt.Errorf("%w: Poison %+v: the area does not fit region %q (%d bytes) or is smaller than the pages poisoned", ErrConfig, *p, s.Name, s.Size)
		}
	}
	if !found {
		return fmt.Errorf("%w: Poison.Region %q is not a region of the Config", ErrConfig, p.Region)
	}
	return nil
}

func (p *Poison) pages() int { return max(p.Pages, 1) }

// poisonCheck wraps the user's check: before it runs, an image gets its
// regions' Run.Poison marks and the Config's random range poisoned;
// after, every page is lifted again (the image's memory goes back to the
// store whole). A failure on a poisoned image says what was poisoned.
func poisonCheck(cfg Config, check func(*Image) error) func(*Image) error {
	return func(img *Image) error {
		defer func() {
			for _, s := range img.m.regions {
				_ = s.region.Unpoison(0, s.region.Size()) // ErrClosed: Close lifted it
			}
		}()
		applied, err := applyPoison(cfg, img)
		if err != nil {
			return err
		}
		err = check(img)
		if err != nil && applied != "" {
			err = &poisonedError{err: err, what: applied}
		}
		return err
	}
}

// applyPoison poisons an image before its check and describes what.
func applyPoison(cfg Config, img *Image) (string, error) {
	var what []string
	for _, s := range img.m.regions {
		if s.spec.marks == nil {
			continue
		}
		for _, g := range s.spec.marks.ranges {
			if err := s.region.Poison(int(g.Lo), int(g.Len())); err != nil {
				return "", fmt.Errorf("crash: Run.Poison of %s %v: %w", s.spec.Name, g, err)
			}
			what = append(what, fmt.Sprintf("%s %v (Run.Poison)", s.spec.Name, g))
		}
	}
	// A recovery crashed again is not poisoned by the Config: the
	// simulator reads its memory (Image.Poison).
	if p := cfg.Poison; p != nil && !img.m.tracking {
		s, lo, hi, ok := randomPoison(cfg, p, img)
		if ok {
			if err := s.region.Poison(lo, hi-lo); err != nil {
				return "", fmt.Errorf("crash: Config.Poison of %s [%d, %d): %w", s.spec.Name, lo, hi, err)
			}
			what = append(what, fmt.Sprintf("%s [%d, %d) (Config.Poison)", s.spec.Name, lo, hi))
		}
	}
	return strings.Join(what, ", "), nil
}

// randomPoison chooses the Config's poisoned range of an image, from the
// seed, the crash point and the image's number (a replay poisons the same
// pages): a region, then a run of Pages whole pages of its memory inside
// the area. ok is false when the area holds no such run.
func randomPoison(cfg Config, p *Poison, img *Image) (s *simRegion, lo, hi int, ok bool) {
	pt := img.Point()
	depth := uint64(0)
	if img.InRecovery() {
		depth = 1
	}
	rng := rand.New(rand.NewPCG(cfg.Seed^0x9e3779b97f4a7c15, uint64(pt.Seq)<<32|uint64(img.Index())<<1|depth))
	var cands []*simRegion
	for _, r := range img.m.regions {
		if p.Region == "" || r.spec.Name == p.Region {
			cands = append(cands, r)
		}
	}
	if len(cands) == 0 {
		return nil, 0, 0, false
	}
	s = cands[rng.IntN(len(cands))]
	ps := os.Getpagesize()
	end := len(s.live)
	if p.Size > 0 {
		end = min(end, p.Off+p.Size)
	}
	// Whole pages of the image's memory only: its base need not be
	// page-aligned (small regions are Go memory).
	skip := int((uintptr(ps) - uintptr(unsafe.Pointer(unsafe.SliceData(s.live)))%uintptr(ps)) % uintptr(ps))
	a := max(p.Off, skip)
	first := a + ((skip-a)%ps+ps)%ps // the first page-aligned offset from a
	n := p.pages() * ps
	if first+n > end {
		return nil, 0, 0, false
	}
	slots := (end-first-n)/ps + 1
	lo = first + rng.IntN(slots)*ps
	return s, lo, lo + n, true
}

// poisonedError is a check's error on a poisoned image.
type poisonedError struct {
	err  error
	what string
}

func (e *poisonedError) Error() string { return fmt.Sprintf("%v (image poisoned: %s)", e.err, e.what) }
func (e *poisonedError) Unwrap() error { return e.err }
