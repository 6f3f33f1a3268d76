package fptree

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist"
)

// chain is what a walk of the leaf chain found.
type chain struct {
	los    []uint64 // each leaf's lower bound, in chain order
	leaves []uint32
	keys   int
	inUse  []uint64    // bitmap of the leaves in the chain
	hwm    uint32      // one more than the highest leaf in the chain
	lost   []lostRange // key ranges on poisoned media (media.go), ascending
	cut    bool        // a poisoned leaf cut the chain: lost's last range runs to the end
	// badLink is the first leaf whose prev word the chain contradicts,
	// found by a walk that does not repair (Check's).
	badLink error
}

// walk follows the chain from leaf 0 and checks every leaf: its number
// inside the area and not seen before (no loop), its bitmap within the
// slots, its lo above the previous leaf's (leaf 0's is 0) and above every
// key the previous leaf holds, its keys at or above its lo with matching
// fingerprints, and with dups, no key twice in a leaf. With unlink it
// unlinks the empty leaves after the head (a free a crash interrupted
// before its log) and makes that durable; else it keeps them.
//
// It runs in three passes: the chain followed through the leaves' first
// words (pointer chasing: one miss a leaf), the keys of every leaf
// checked — by several goroutines when the chain is long (walkParallel
// leaves each) — and the leaves' bounds checked against their neighbours'
// keys in chain order, which is where the empty leaves are unlinked. An
// error is the first in chain order of the last two passes.
//
// Poisoned media does not end it (media.go): a leaf whose keys fault
// stays in the chain with its key range in c.lost; a leaf whose first
// line faults cuts the chain there (c.cut). A poisoned head leaf is the
// media error.
func (t *Tree) walk(unlink, dups bool) (chain, error) {
	w := &walker{
		t: t, unlink: unlink,
		c:     chain{inUse: make([]uint64, (t.cap+63)/64)},
		seen:  make([]uint64, (t.cap+63)/64),
		blind: map[int]error{},
	}
	if err := w.discover(); err != nil {
		return w.c, err
	}
	facts := make([]leafFacts, len(w.order))
	t.checkKeys(w.order, facts, dups) // a blind leaf faults again: media
	if err := w.bounds(facts); err != nil {
		return w.c, err
	}
	return w.c, w.finish()
}

// walker is the state of a walk between its passes.
type walker struct {
	t      *Tree
	unlink bool
	c      chain
	seen   []uint64      // the leaves follow reached
	order  []uint32      // the chain as followed
	blind  map[int]error // chain positions of leaves whose first line faulted, the chain found again after them
	cutErr error         // the fault that cut the chain, nil when none did
	// The bounds pass: the largest key of the leaves so far, the last leaf
	// kept in the chain and its facts, the chain positions of c.lost's
	// leaves, and whether a prev word was stored.
	maxPrev  uint64
	prev     uint32
	last     leafFacts
	lostAt   []int
	repaired bool
}

// discover is the first pass: the chain followed from the head, and on
// past a leaf whose first line faults at the leaf whose back link names
// it (media.go), until the end or a cut.
func (w *walker) discover() error {
	t := w.t
	start := uint32(0)
	for {
		w.cutErr = guard(t.r, func() error { return t.follow(&w.order, w.seen, start) })
		if w.cutErr != nil && (!isMedia(w.cutErr) || len(w.order) == 0) {
			return w.cutErr
		}
		if w.cutErr == nil || t.variant == poisonAsEnd {
			break
		}
		p := uint32(at(t.leaf(w.order[len(w.order)-1]), offNext)) // the leaf that faulted
		x, ok := t.resume(p, w.seen)
		if !ok {
			break
		}
		w.seen[p/64] |= 1 << (p % 64)
		w.blind[len(w.order)] = w.cutErr
		w.order = append(w.order, p)
		start = x
	}
	if t.variant == poisonAsEnd {
		w.cutErr = nil
	}
	return nil
}

// bounds is the third pass: each leaf's bound against its neighbours'
// keys in chain order, the empty leaves unlinked, the back links checked.
func (w *walker) bounds(facts []leafFacts) error {
	t, c := w.t, &w.c
	c.los = make([]uint64, 0, len(w.order))
	c.leaves = make([]uint32, 0, len(w.order))
	for j, l := range w.order {
		if err, ok := w.blind[j]; ok {
			if !w.keepBlind(j, l, err) {
				// Nothing fits between its neighbours (or nothing is
				// after it): the chain is cut here after all.
				w.order, w.cutErr = w.order[:j], err
				break
			}
			continue
		}
		p := t.leaf(l)
		lo := at(p, offLo)
		if j > 0 && (lo <= c.los[len(c.los)-1] || lo <= w.maxPrev) {
			return fmt.Errorf("%w: leaf %d's lower bound %d is not above the previous leaf's (%d) and its keys (up to %d)",
				ErrCorrupt, l, lo, c.los[len(c.los)-1], w.maxPrev)
		}
		f := &facts[j]
		if f.media {
			// Its keys are unknown: kept in the chain, never unlinked,
			// its range lost (its end is the next leaf's bound).
			w.lostAt = append(w.lostAt, len(c.leaves))
			c.lost = append(c.lost, lostRange{from: lo, err: f.err})
		} else if f.err != nil {
			return f.err
		}
		if f.n == 0 && !f.media && l != 0 && w.unlink {
			if err := w.unlinkEmpty(l); err != nil {
				return err
			}
			continue
		}
		c.inUse[l/64] |= 1 << (l % 64)
		if f.n > 0 {
			w.maxPrev = max(w.maxPrev, f.max)
		}
		c.keys += f.n
		c.los = append(c.los, lo)
		c.leaves = append(c.leaves, l)
		c.hwm = max(c.hwm, l+1)
		if err := w.checkLink(l); err != nil {
			return err
		}
		w.prev, w.last = l, *f
	}
	if w.repaired {
		if err := t.r.Drain(); err != nil {
			return regionErr(err, "recovery")
		}
	}
	return nil
}

// keepBlind keeps the leaf l at chain position j, whose first line is
// unreadable, in the chain: its bound is taken just above what the leaves
// before it hold, and its range is lost. False when nothing fits between
// its neighbours or nothing is after it.
func (w *walker) keepBlind(j int, l uint32, err error) bool {
	c := &w.c
	top := max(c.los[len(c.los)-1], w.maxPrev)
	lo := top + 1
	if top == math.MaxUint64 || j+1 == len(w.order) || at(w.t.leaf(w.order[j+1]), offLo) <= lo {
		return false
	}
	w.lostAt = append(w.lostAt, len(c.leaves))
	c.lost = append(c.lost, lostRange{from: lo, err: err})
	c.inUse[l/64] |= 1 << (l % 64)
	c.los = append(c.los, lo)
	c.leaves = append(c.leaves, l)
	c.hwm = max(c.hwm, l+1)
	w.prev, w.last = l, leafFacts{}
	return true
}

// unlinkEmpty unlinks the empty leaf l after the head, as the free would
// have; the chain stays sorted either way. Its prev is cleared first,
// with a fence of its own, so that a free leaf is never linked (a crash
// in between leaves it in the chain unlinked, and the next Open unlinks
// it); its successor's is repaired by checkLink.
func (w *walker) unlinkEmpty(l uint32) error {
	t := w.t
	p := t.leaf(l)
	if at(p, offPrev) != 0 {
		if err := t.setPrev(l, 0); err != nil {
			return regionErr(err, "recovery")
		}
		if err := t.r.Drain(); err != nil {
			return regionErr(err, "recovery")
		}
	}
	nw := word(t.leaf(w.prev), offNext)
	persist.Store64(nw, at(p, offNext))
	if t.variant != walkUnlinkUnflushed {
		if err := t.r.Persist(nw); err != nil {
			return regionErr(err, "recovery")
		}
	}
	return nil
}

// checkLink checks the back link of l, the last leaf kept in the chain:
// it names w.prev, linked (the head's is 0). Any other is damage unless
// an interrupted unlink of an empty leaf left it (unlinkLeft), which
// Open repairs and Check reports (c.badLink).
func (w *walker) checkLink(l uint32) error {
	t := w.t
	want := prevWord(len(w.c.leaves)-1, w.prev)
	got := at(t.leaf(l), offPrev)
	if got == want {
		return nil
	}
	bad := fmt.Errorf("%w: leaf %d's back link is %#x, the chain has it after leaf %d", ErrCorrupt, l, got, w.prev)
	switch {
	case !t.unlinkLeft(l, got):
		// Damage (a next that skips leaves, a flipped link): no crash
		// leaves it.
		return t.unreachable(w.seen, bad)
	case w.unlink:
		if err := t.setPrev(l, want); err != nil {
			return regionErr(err, "recovery")
		}
		w.repaired = true
	case w.c.badLink == nil:
		w.c.badLink = bad
	}
	return nil
}

// finish closes the walk: the lost ranges' ends, the leaves the chain
// should have reached, the cut.
func (w *walker) finish() error {
	c := &w.c
	for i, pos := range w.lostAt {
		g := &c.lost[i]
		g.to = ^uint64(0)
		if pos+1 < len(c.los) {
			g.to = c.los[pos+1] - 1
		}
		*g = lostLeaf(c.leaves[pos], g.from, g.to, g.err)
	}
	if w.cutErr == nil {
		return w.t.unreachable(w.seen, nil)
	}
	c.cut = true
	if n := len(c.lost); n == 0 || c.lost[n-1].to != ^uint64(0) {
		if g, ok := cutAt(w.prev, c.los[len(c.los)-1], w.last.n, w.last.max, w.cutErr); ok {
			c.lost = append(c.lost, g)
		}
	}
	return nil
}

// follow appends the leaves of the chain to *order in chain order,
// checking what a leaf's first words say: its number inside the area and
// not seen before, its bitmap within the slots, the head's lower bound 0.
// A fault (poisoned media) leaves in *order the leaves before the one
// whose first words it could not read.
//
// It starts at leaf start (0, the head, or where the chain was found
// again after a leaf that faulted) and marks the leaves in seen.
func (t *Tree) follow(order *[]uint32, seen []uint64, start uint32) error {
	full := t.g.full
	for l := start; ; {
		if seen[l/64]&(1<<(l%64)) != 0 {
			return fmt.Errorf("%w: the leaf chain loops back to leaf %d after %d leaves", ErrCorrupt, l, len(*order))
		}
		seen[l/64] |= 1 << (l % 64)
		p := t.leaf(l)
		bm, next := at(p, offBitmap), at(p, offNext)
		switch {
		case bm&^full != 0:
			return fmt.Errorf("%w: leaf %d has bitmap %#x, beyond its %d slots", ErrCorrupt, l, bm, t.g.m)
		case next >= uint64(t.cap):
			return fmt.Errorf("%w: leaf %d's next is leaf %d, the area has %d", ErrCorrupt, l, next, t.cap)
		case next > uint64(t.mark):
			return fmt.Errorf("%w: leaf %d's next is leaf %d, never given out (the mark is %d)", ErrCorrupt, l, next, t.mark)
		case l == 0 && at(p, offLo) != 0:
			return fmt.Errorf("%w: the head leaf's lower bound is %d, want 0", ErrCorrupt, at(p, offLo))
		}
		*order = append(*order, l)
		if next == 0 {
			return nil
		}
		l = uint32(next)
	}
}

// leafFacts is what checkKeys found in one leaf.
type leafFacts struct {
	n     int    // keys
	max   uint64 // the largest (when n > 0)
	err   error  // the first problem
	media bool   // err is a fault: the leaf's keys are on poisoned media
}

// walkParallel is the chain length from which checkKeys runs on several
// goroutines, each over walkParallel leaves or more.
const walkParallel = 4096

// checkKeys fills facts[j] for leaf order[j]: its keys counted, their
// largest, and each key at or above the leaf's lo with its fingerprint
// (and, with dups, none twice).
func (t *Tree) checkKeys(order []uint32, facts []leafFacts, dups bool) {
	workers := min(runtime.GOMAXPROCS(0), len(order)/walkParallel)
	if workers <= 1 {
		t.checkRange(order, facts, dups)
		return
	}
	var wg sync.WaitGroup
	per := (len(order) + workers - 1) / workers
	for i := 0; i < len(order); i += per {
		j := min(i+per, len(order))
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.checkRange(order[i:j], facts[i:j], dups)
		}()
	}
	wg.Wait()
}

// checkRange is checkKeys over order on this goroutine, under
// persist.Guard (a fault is caught on the goroutine that took it): a leaf
// that faults gets the media error, and the check goes on after it.
func (t *Tree) checkRange(order []uint32, facts []leafFacts, dups bool) {
	for j := 0; j < len(order); j++ {
		err := guard(t.r, func() error {
			for ; j < len(order); j++ {
				if j+1 < len(order) {
					// The next leaf's lines arrive while this one is checked.
					asm.PrefetchLines(t.leaf(order[j+1]), t.g.stride)
				}
				facts[j] = t.checkLeaf(order[j], dups)
			}
			return nil
		})
		if err == nil {
			return
		}
		facts[j] = leafFacts{err: err, media: true}
	}
}

func (t *Tree) checkLeaf(l uint32, dups bool) leafFacts {
	g := &t.g
	p := t.leaf(l)
	bm, lo := at(p, offBitmap), at(p, offLo)
	var f leafFacts
	var keys [MaxLeafSlots]uint64
	for b := bm; b != 0; b &= b - 1 {
		i := bits.TrailingZeros64(b)
		k := g.key(p, i)
		if k < lo {
			f.err = fmt.Errorf("%w: leaf %d slot %d holds key %d, below the leaf's lower bound %d", ErrCorrupt, l, i, k, lo)
			return f
		}
		if fp := *(*byte)(unsafe.Add(p, offFps+i)); fp != fingerprint(k) {
			f.err = fmt.Errorf("%w: leaf %d slot %d has fingerprint %#02x, key %d hashes to %#02x", ErrCorrupt, l, i, fp, k, fingerprint(k))
			return f
		}
		f.max = max(f.max, k)
		keys[f.n] = k
		f.n++
	}
	if dups && f.n > 1 {
		s := keys[:f.n]
		slices.Sort(s)
		for j := 1; j < f.n; j++ {
			if s[j] == s[j-1] {
				f.err = fmt.Errorf("%w: leaf %d holds key %d twice", ErrCorrupt, l, s[j])
				return f
			}
		}
	}
	return f
}

// unlinkLeft reports whether w, the prev word of leaf l of the chain that
// is not its predecessor's, is what an interrupted unlink of an empty
// leaf by Open leaves (the empty leaf's prev is cleared with a fence of
// its own before it is unlinked, its successor's repaired after): l
// itself empty and unlinked, or l's prev naming such a leaf, out of the
// chain, whose next is l.
func (t *Tree) unlinkLeft(l uint32, w uint64) bool {
	if w == 0 {
		return at(t.leaf(l), offBitmap) == 0
	}
	y := w &^ linkedBit
	if w&linkedBit == 0 || y > uint64(t.mark) || y == uint64(l) {
		return false
	}
	left := false
	_ = guard(t.r, func() error { // y on poisoned media: not known to be one
		py := t.leaf(uint32(y))
		left = at(py, offPrev) == 0 && at(py, offBitmap) == 0 && at(py, offNext) == uint64(l)
		return nil
	})
	return left
}

// unreachable returns an error wrapping ErrCorrupt that names every leaf
// up to the mark that the chain did not reach (not in seen) but linked (its prev has the
// linked bit: a leaf the chain should reach), with why (nil: nil when
// there is none). A leaf on poisoned media is skipped: Poisoned reports
// it.
func (t *Tree) unreachable(seen []uint64, why error) error {
	var lost []uint32
	for l := uint32(1); l <= t.mark; l++ {
		if seen[l/64]&(1<<(l%64)) != 0 {
			continue
		}
		_ = guard(t.r, func() error {
			if at(t.leaf(l), offPrev)&linkedBit != 0 {
				lost = append(lost, l)
			}
			return nil
		})
	}
	if len(lost) == 0 {
		return why
	}
	show := lost[:min(len(lost), 8)]
	more := ""
	if len(lost) > len(show) {
		more = ", ..."
	}
	msg := fmt.Sprintf("%d unreachable leaves (linked, the chain does not reach them: a damaged next): %v%s", len(lost), show, more)
	if len(lost) == 1 {
		msg = fmt.Sprintf("1 unreachable leaf (linked, the chain does not reach it: a damaged next): leaf %d", lost[0])
	}
	if why != nil {
		return fmt.Errorf("%w; %s", why, msg)
	}
	return fmt.Errorf("%w: %s", ErrCorrupt, msg)
}

// prevWord is the prev word of the leaf at chain position j after leaf
// prev: 0 for the head.
func prevWord(j int, prev uint32) uint64 {
	if j == 0 {
		return 0
	}
	return linkedTo(prev)
}
