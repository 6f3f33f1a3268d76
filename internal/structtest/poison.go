package structtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/braid-pm/braid/persist"
)

// PoisonSite is a page of a structure's area that a poison test makes
// unreadable: Off is its offset in the region (page-aligned).
type PoisonSite struct {
	Name string // "header", "middle" or "tail"
	Off  int
}

// PoisonSites returns the three pages every structure's poison test hits
// in its area [off, off+n) of a region: the first (its header), one in the
// middle and the last. Pages are os.Getpagesize() bytes; an area of fewer
// than three pages gets fewer sites.
func PoisonSites(off, n int) []PoisonSite {
	ps := os.Getpagesize()
	first, last := off&^(ps-1), (off+n-1)&^(ps-1)
	sites := []PoisonSite{{"header", first}}
	if mid := (first + (last-first)/2) &^ (ps - 1); mid > first && mid < last {
		sites = append(sites, PoisonSite{"middle", mid})
	}
	if last > first {
		sites = append(sites, PoisonSite{"tail", last})
	}
	return sites
}

// MediaIn returns nil when err is a *persist.MediaError whose range lies
// inside one of bad (the ranges a test poisoned), else an error saying
// what err was instead: the check of "a poisoned range is reported as
// ErrMedia naming it".
func MediaIn(err error, bad []persist.Range) error {
	var me *persist.MediaError
	if !errors.As(err, &me) {
		return fmt.Errorf("want a media error inside %v, got %v", bad, err)
	}
	lo, hi := me.Range()
	for _, g := range bad {
		if lo >= g.Lo && hi <= g.Hi {
			return nil
		}
	}
	return fmt.Errorf("media error for [%d, %d), outside the poisoned %v: %v", lo, hi, bad, err)
}

// Overlaps reports whether [off, off+n) shares a byte with one of bad.
func Overlaps(bad []persist.Range, off, n int) bool {
	for _, g := range bad {
		if g.Overlaps(int64(off), int64(off+n)) {
			return true
		}
	}
	return false
}

// PoisonedAgrees returns nil when got (what a structure's Poisoned
// reports) is bad (the ranges a test poisoned) clipped to the
// structure's bytes [off, off+n), else an error saying both.
func PoisonedAgrees(got, bad []persist.Range, off, n int) error {
	var want []persist.Range
	for _, g := range bad {
		if g.Overlaps(int64(off), int64(off+n)) {
			want = append(want, persist.Range{Lo: max(g.Lo, int64(off)), Hi: min(g.Hi, int64(off+n))})
		}
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("the structure's Poisoned reports %v, want %v (the poisoned %v inside [%d, %d))", got, want, bad, off, off+n)
	}
	return nil
}

// PoisonedOpen judges the error of an Open over a poisoned image: with
// the header's bytes [0, header) poisoned it must be a media error inside
// bad; an image taken before the structure existed may fail to open;
// else it must open. done says the check ends here, with the verdict err.
func PoisonedOpen(openErr error, bad []persist.Range, header int, created bool) (done bool, err error) {
	switch {
	case openErr != nil && Overlaps(bad, 0, header):
		return true, MediaIn(openErr, bad) // the header is unreadable
	case openErr != nil && !created:
		return true, nil
	case openErr != nil:
		return true, fmt.Errorf("open: %w", openErr)
	}
	return false, nil
}

// PoisonedObject checks object i of an array on poisoned media, whose Read
// into got returned readErr: a media error inside bad, got zeroed, and an
// Update of it refused with a media error too.
func PoisonedObject(a interface{ Update(int, []byte) error }, i int, readErr error, got []byte, bad []persist.Range) error {
	if err := MediaIn(readErr, bad); err != nil {
		return fmt.Errorf("object %d: %w", i, err)
	}
	if !bytes.Equal(got, make([]byte, len(got))) {
		return fmt.Errorf("object %d: ErrMedia, and the buffer holds %x", i, got)
	}
	if err := MediaIn(a.Update(i, got), bad); err != nil {
		return fmt.Errorf("update of poisoned object %d: %w", i, err)
	}
	return nil
}
