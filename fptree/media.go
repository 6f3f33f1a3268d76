package fptree

import (
	"errors"
	"fmt"
	"math"

	"github.com/braid-pm/braid/persist"
)

// Poisoned media (issue 18). Every read and write of the leaves runs under
// persist.Guard: a leaf on poisoned media (or in a file truncated under
// its mapping) is a *persist.MediaError for the operation that touched
// it, not a dead process, and the other leaves go on serving (the inner
// nodes, in DRAM, know where they are).
//
// Open meets poison in two ways. A leaf whose first line (bitmap, next,
// lo) reads but whose keys do not stays in the chain: its key range —
// from its lo to the next leaf's — is lost (Get, Put, Delete of a key
// there and a scan reaching it are ErrMedia), every other key is served.
// A leaf whose first line does not read is blind: its next is unknown,
// so Open looks for the leaf whose back link (layout.go) names it as its
// linked predecessor — exactly one leaf of the chain has it, and a free
// leaf never has, not even the stale copy of keys an interrupted split
// leaves — and goes on from there (resume); the blind leaf stays in the
// chain with the keys from just above the last readable key to that
// leaf's lower bound lost. When no such leaf is found (the blind leaf was
// the last, or its successor is unreadable too), the chain is cut: the
// keys from just above the last readable key on are lost, and no leaf is
// given out for a split (ErrMedia), lest a lost leaf be overwritten.

// resume finds where the chain goes on after leaf p, whose first line
// could not be read: the one leaf not seen yet whose prev names p as its
// linked predecessor (layout.go: a leaf in the chain has it, a free leaf
// never has; the copy an interrupted split left names its leaf unlinked). None — p was
// the last leaf, or the one after it is unreadable too — or more than one
// — a crash between two of Open's repairs — and the chain stays cut. It
// reads the prev word of every leaf of the area once.
func (t *Tree) resume(p uint32, seen []uint64) (uint32, bool) {
	want := linkedTo(p)
	var found uint32
	n := 0
	for l := 1; l <= int(t.mark); l++ {
		err := guard(t.r, func() error {
			for ; l <= int(t.mark); l++ {
				if l == int(p) || seen[l/64]&(1<<(l%64)) != 0 {
					continue
				}
				w := at(t.leaf(uint32(l)), offPrev)
				if w == want || (t.variant == resumeUnlinked && w&^linkedBit == uint64(p)) {
					found = uint32(l)
					n++
				}
			}
			return nil
		})
		if err != nil && !isMedia(err) {
			return 0, false
		}
	}
	return found, n == 1
}

// guard runs fn under persist.Guard.
func guard(r *persist.Region, fn func() error) error { return persist.Guard(fn, r) }

// isMedia reports whether err is a media error.
func isMedia(err error) bool { return errors.Is(err, persist.ErrMedia) }

// lostRange is a range of keys Open could not read: [from, to].
type lostRange struct {
	from, to uint64
	err      error // the media error, naming the leaf and the keys
}

// lostKey returns the media error of a key Open lost, nil for the others.
func (t *Tree) lostKey(k uint64) error {
	for _, g := range t.lost {
		if k >= g.from && k <= g.to {
			return g.err
		}
	}
	return nil
}

// lostIn returns the media error of the first lost range that overlaps
// [from, to], nil when none does.
func (t *Tree) lostIn(from, to uint64) error {
	for _, g := range t.lost {
		if g.from <= to && from <= g.to {
			return g.err
		}
	}
	return nil
}

// lostLeaves is the error of an allocation in a tree whose chain Open
// cut: the leaves after the cut are not known to be free.
func (t *Tree) lostLeaves() error {
	if t.cut {
		return t.lost[len(t.lost)-1].err
	}
	return nil
}

// lostLeaf is the lost range of a leaf of the chain whose keys could not
// be read: from its lower bound lo to hi.
func lostLeaf(l uint32, lo, hi uint64, err error) lostRange {
	return lostRange{lo, hi, fmt.Errorf("fptree: leaf %d is on poisoned media: keys %d to %d are lost: %w", l, lo, hi, err)}
}

// cutAt is the lost range of a chain cut after leaf last (lower bound
// lo, largest key max when it has keys) by a leaf whose first line could
// not be read. A key up to the largest one found is present or absent for
// sure (the next leaf's bound is above it); the keys above may have been
// in the lost part.
func cutAt(last uint32, lo uint64, keys int, maxKey uint64, err error) (lostRange, bool) {
	from := lo
	if keys > 0 {
		if maxKey == math.MaxUint64 {
			return lostRange{}, false // no key lies above: nothing lost but the leaf that faulted
		}
		from = maxKey + 1
	}
	return lostRange{from, math.MaxUint64, fmt.Errorf("fptree: the leaf chain is cut by poisoned media after leaf %d: keys from %d on are lost: %w",
		last, from, err)}, true
}

// Poisoned returns the ranges of the tree's area that its region knows to
// be unreadable (the device's bad blocks at Map, persist.Info.Poisoned;
// injected poison), clipped to the area: what Open may have lost.
func (t *Tree) Poisoned() []persist.Range { return t.r.PoisonedIn(t.off, t.size) }

// Lost returns the key ranges Open could not read (inclusive bounds, in
// ascending order); nil when it read every leaf.
func (t *Tree) Lost() [][2]uint64 {
	var out [][2]uint64
	for _, g := range t.lost {
		out = append(out, [2]uint64{g.from, g.to})
	}
	return out
}
