package persist

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"
)

// Range is a span of a region's bytes, [Lo, Hi) in offsets of the region.
type Range struct{ Lo, Hi int64 }

// Len is the number of bytes in the range.
func (g Range) Len() int64 { return g.Hi - g.Lo }

// Overlaps reports whether g and [lo, hi) share a byte.
func (g Range) Overlaps(lo, hi int64) bool { return g.Lo < hi && lo < g.Hi }

func (g Range) String() string { return fmt.Sprintf("[%d, %d)", g.Lo, g.Hi) }

// poisonSet is what a region knows to be unreadable: the ranges poisoned
// with Poison (page-aligned, protected so that an access faults) and the
// bad blocks its device reported at Map. A region has none until it needs
// one (Region.poison is nil): regions are made per crash image.
type poisonSet struct {
	mu       sync.Mutex
	injected []Range // sorted, disjoint, page-aligned (Hi may pass the size: the tail page)
	bad      []Range // sorted, disjoint, clipped to the size
}

// Poison makes the pages holding [off, off+n) of the region unreadable, as
// an uncorrectable media error makes a range of PMem: a load or a store
// there faults, which kills the program unless it runs under Guard, where
// it is a *MediaError (errors.Is ErrMedia) whose Range is the poisoned
// range. Everything outside those pages reads and writes as before. The
// unit is the page (os.Getpagesize()): Linux reports poison, and can
// protect memory, only at that granularity.
//
// It is fault injection, for tests of what a structure does over bad
// media: persist/crash poisons crash images with it (Image.Poison,
// Config.Poison). On real PMem the hardware poisons ranges by itself and
// Map reports the ones the device lists (Info.Poisoned).
//
// The pages must belong to the region: a file or anonymous mapping owns
// the whole pages of its memory, a simulated region only the pages that
// lie inside the memory it was made over (memory not page-aligned, or a
// size that is not a multiple of the page, cannot have its first or last
// page poisoned: ErrUnsupported). A simulated region's pages are lifted
// by Unpoison or Close; its memory must not be reused before. Poison needs
// Linux (mprotect); elsewhere it is ErrUnsupported.
func (r *Region) Poison(off, n int) error {
	if r.closed.Load() {
		return ErrClosed
	}
	g, err := r.poisonPages(off, n)
	if err != nil {
		return err
	}
	p := r.poisons()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := protect(r.memBase(), g, protNone); err != nil {
		return fmt.Errorf("persist: poison bytes %d to %d: %w", g.Lo, g.Hi, err)
	}
	p.injected = mergeRange(p.injected, g)
	return nil
}

// Unpoison makes the poisoned pages holding [off, off+n) readable again;
// pages of the range that are not poisoned are left as they are. Their
// bytes are what they were before Poison (real media would have lost
// them: a test writes them again, as a program repairing bad blocks
// does). Unpoison(0, r.Size()) lifts every poisoned page.
func (r *Region) Unpoison(off, n int) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if n <= 0 || off < 0 || off > r.size || n > r.size-off {
		return fmt.Errorf("%w: unpoison %d bytes at offset %d of a %d-byte region", ErrRange, n, off, r.size)
	}
	lo, hi := pageSpan(off, n)
	p := r.poison.Load()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.unpoisonLocked(int64(lo), int64(hi))
}

func (r *Region) unpoisonLocked(lo, hi int64) error {
	p := r.poison.Load()
	var kept []Range
	for _, g := range p.injected {
		if !g.Overlaps(lo, hi) {
			kept = append(kept, g)
			continue
		}
		cut := Range{max(g.Lo, lo), min(g.Hi, hi)}
		if err := protect(r.memBase(), cut, r.protection()); err != nil {
			return fmt.Errorf("persist: unpoison bytes %d to %d: %w", cut.Lo, cut.Hi, err)
		}
		if g.Lo < cut.Lo {
			kept = append(kept, Range{g.Lo, cut.Lo})
		}
		if cut.Hi < g.Hi {
			kept = append(kept, Range{cut.Hi, g.Hi})
		}
	}
	p.injected = kept
	return nil
}

// Poisoned returns the ranges of the region known to be unreadable, in
// ascending order: the bad blocks its device reported when it was mapped
// (Info.Poisoned) and the pages poisoned with Poison and not lifted. A
// structure opened over a region checks it to report, up front, the
// parts of its area it cannot read.
func (r *Region) Poisoned() []Range {
	p := r.poison.Load()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.bad)
	for _, g := range p.injected {
		out = mergeRange(out, Range{g.Lo, min(g.Hi, int64(r.size))})
	}
	return out
}

// PoisonedIn returns the known-unreadable ranges (Poisoned) that overlap
// [off, off+n), clipped to it: the part of a structure's area it cannot
// read.
func (r *Region) PoisonedIn(off, n int) []Range {
	var out []Range
	lo, hi := int64(off), int64(off)+int64(n)
	for _, g := range r.Poisoned() {
		if g.Overlaps(lo, hi) {
			out = append(out, Range{max(g.Lo, lo), min(g.Hi, hi)})
		}
	}
	return out
}

// poisons returns the region's poison set, made on first use.
func (r *Region) poisons() *poisonSet {
	if p := r.poison.Load(); p != nil {
		return p
	}
	r.poison.CompareAndSwap(nil, &poisonSet{})
	return r.poison.Load()
}

// poisonedAt returns the known-unreadable range holding off.
func (r *Region) poisonedAt(off int64) (Range, bool) {
	for _, g := range r.Poisoned() {
		if off >= g.Lo && off < g.Hi {
			return g, true
		}
	}
	return Range{}, false
}

// poisonPages checks [off, off+n) and returns its pages, as offsets of
// the region.
func (r *Region) poisonPages(off, n int) (Range, error) {
	if n <= 0 || off < 0 || off > r.size || n > r.size-off {
		return Range{}, fmt.Errorf("%w: poison of %d bytes at offset %d of a %d-byte region", ErrRange, n, off, r.size)
	}
	ps := uintptr(pageSize)
	a := r.base + uintptr(off)
	alo := a &^ (ps - 1)
	ahi := (a + uintptr(n) + ps - 1) &^ (ps - 1)
	if alo < r.base || ahi > r.base+uintptr(r.size) && !r.os.ownsPages() {
		return Range{}, fmt.Errorf("%w: poison of %d bytes at offset %d: its pages pass the edge of the region's memory "+
			"(%d bytes at %#x; a simulated region can poison only whole pages of its memory)", ErrUnsupported, n, off, r.size, r.base)
	}
	return Range{int64(alo - r.base), int64(ahi - r.base)}, nil
}

// protection is the access a region's pages have when not poisoned.
func (r *Region) protection() int {
	if r.readOnly {
		return protRead
	}
	return protRead | protWrite
}

// liftPoison makes every poisoned page accessible again and returns what
// puts the protection back: Grow (mremap needs one mapping, not pieces
// of different protections) and Close (a simulated region's memory goes
// back to its owner whole) run between the two.
func (r *Region) liftPoison() (restore func(base unsafe.Pointer) error, err error) {
	p := r.poison.Load()
	if p == nil {
		return func(unsafe.Pointer) error { return nil }, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pages := slices.Clone(p.injected)
	for _, g := range pages {
		if err := protect(r.memBase(), g, r.protection()); err != nil {
			return nil, fmt.Errorf("persist: unpoison bytes %d to %d: %w", g.Lo, g.Hi, err)
		}
	}
	p.injected = nil
	return func(base unsafe.Pointer) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, g := range pages {
			if err := protect(base, g, protNone); err != nil {
				return fmt.Errorf("persist: poison bytes %d to %d again: %w", g.Lo, g.Hi, err)
			}
			p.injected = mergeRange(p.injected, g)
		}
		return nil
	}, nil
}

// mergeRange adds g to the sorted, disjoint rs, merging what it touches.
func mergeRange(rs []Range, g Range) []Range {
	out := make([]Range, 0, len(rs)+1)
	for _, x := range rs {
		switch {
		case x.Hi < g.Lo:
			out = append(out, x)
		case g.Hi < x.Lo:
			out = append(out, g)
			g = x
		default:
			g = Range{min(x.Lo, g.Lo), max(x.Hi, g.Hi)}
		}
	}
	return append(out, g)
}

// memBase is the start of the region's memory.
func (r *Region) memBase() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(r.mem)) }
