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
	c := chain{inUse: make([]uint64, (t.cap+63)/64)}
	var order []uint32
	seen := make([]uint64, (t.cap+63)/64)
	blind := map[int]error{} // chain positions of leaves whose first line faulted, the chain found again after them
	start := uint32(0)
	var cutErr error
	for {
		cutErr = guard(t.r, func() error { return t.follow(&order, seen, start) })
		if cutErr != nil && (!isMedia(cutErr) || len(order) == 0) {
			return c, cutErr
		}
		if cutErr == nil || t.variant == poisonAsEnd {
			break
		}
		p := uint32(at(t.leaf(order[len(order)-1]), offNext)) // the leaf that faulted
		x, ok := t.resume(p, seen)
		if !ok {
			break
		}
		seen[p/64] |= 1 << (p % 64)
		blind[len(order)] = cutErr
		order = append(order, p)
		start = x
	}
	if t.variant == poisonAsEnd {
		cutErr = nil
	}
	facts := make([]leafFacts, len(order))
	t.checkKeys(order, facts, dups) // a blind leaf faults again: media
	c.los = make([]uint64, 0, len(order))
	c.leaves = make([]uint32, 0, len(order))
	var maxPrev uint64 // the largest key of the leaves so far
	prev := uint32(0)  // the last leaf kept in the chain
	var last leafFacts // prev's
	lostAt := []int{}  // the chain positions of c.lost's leaves
	repaired := false  // a prev word was stored
	for j, l := range order {
		p := t.leaf(l)
		if _, ok := blind[j]; ok {
			// Its first line is unreadable: its bound is taken just above
			// what the leaves before it hold, and its range is lost.
			top := max(c.los[len(c.los)-1], maxPrev)
			lo := top + 1
			if top == math.MaxUint64 || j+1 == len(order) || at(t.leaf(order[j+1]), offLo) <= lo {
				// Nothing fits between its neighbours (or nothing is after
				// it): the chain is cut here after all.
				order = order[:j]
				cutErr = blind[j]
				break
			}
			lostAt = append(lostAt, len(c.leaves))
			c.lost = append(c.lost, lostRange{from: lo, err: blind[j]})
			c.inUse[l/64] |= 1 << (l % 64)
			c.los = append(c.los, lo)
			c.leaves = append(c.leaves, l)
			c.hwm = max(c.hwm, l+1)
			prev, last = l, leafFacts{}
			continue
		}
		lo := at(p, offLo)
		if j > 0 && (lo <= c.los[len(c.los)-1] || lo <= maxPrev) {
			return c, fmt.Errorf("%w: leaf %d's lower bound %d is not above the previous leaf's (%d) and its keys (up to %d)",
				ErrCorrupt, l, lo, c.los[len(c.los)-1], maxPrev)
		}
		f := &facts[j]
		if f.media {
			// Its keys are unknown: kept in the chain, never unlinked,
			// its range lost (its end is the next leaf's bound).
			lostAt = append(lostAt, len(c.leaves))
			c.lost = append(c.lost, lostRange{from: lo, err: f.err})
		} else if f.err != nil {
			return c, f.err
		}
		if f.n == 0 && !f.media && l != 0 && unlink {
			// An empty leaf after the head: unlink it, as the free would
			// have; the chain stays sorted either way. Its prev is cleared
			// first, with a fence of its own, so that a free leaf is never
			// linked (a crash in between leaves it in the chain unlinked,
			// and the next Open unlinks it); its successor's is repaired
			// below.
			if at(p, offPrev) != 0 {
				if err := t.setPrev(l, 0); err != nil {
					return c, regionErr(err, "recovery")
				}
				if err := t.r.Drain(); err != nil {
					return c, regionErr(err, "recovery")
				}
			}
			nw := word(t.leaf(prev), offNext)
			persist.Store64(nw, at(p, offNext))
			if t.variant != walkUnlinkUnflushed {
				if err := t.r.Persist(nw); err != nil {
					return c, regionErr(err, "recovery")
				}
			}
			continue
		}
		c.inUse[l/64] |= 1 << (l % 64)
		if f.n > 0 {
			maxPrev = max(maxPrev, f.max)
		}
		c.keys += f.n
		c.los = append(c.los, lo)
		c.leaves = append(c.leaves, l)
		c.hwm = max(c.hwm, l+1)
		if want := prevWord(len(c.leaves)-1, prev); at(p, offPrev) != want {
			switch {
			case unlink:
				// A back link a crash left behind (an interrupted unlink
				// of an empty leaf, above): the chain is right, the link
				// follows it.
				if err := t.setPrev(l, want); err != nil {
					return c, regionErr(err, "recovery")
				}
				repaired = true
			case c.badLink == nil:
				c.badLink = fmt.Errorf("%w: leaf %d's back link is %#x, the chain has it after leaf %d", ErrCorrupt, l, at(p, offPrev), prev)
			}
		}
		prev, last = l, *f
	}
	if repaired {
		if err := t.r.Drain(); err != nil {
			return c, regionErr(err, "recovery")
		}
	}
	for i, pos := range lostAt {
		g := &c.lost[i]
		g.to = ^uint64(0)
		if pos+1 < len(c.los) {
			g.to = c.los[pos+1] - 1
		}
		*g = lostLeaf(c.leaves[pos], g.from, g.to, g.err)
	}
	if cutErr != nil {
		c.cut = true
		if n := len(c.lost); n == 0 || c.lost[n-1].to != ^uint64(0) {
			if g, ok := cutAt(prev, c.los[len(c.los)-1], last.n, last.max, cutErr); ok {
				c.lost = append(c.lost, g)
			}
		}
	}
	return c, nil
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

// prevWord is the prev word of the leaf at chain position j after leaf
// prev: 0 for the head.
func prevWord(j int, prev uint32) uint64 {
	if j == 0 {
		return 0
	}
	return linkedTo(prev)
}
