package fptree

import (
	"fmt"
	"slices"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// Open opens the tree at opts.Offset of r and recovers it: a split or a
// leaf free that a crash interrupted is finished from its micro log, an
// empty leaf a crash left in the chain is unlinked, and the inner nodes
// are rebuilt in DRAM from the leaf chain. Recovery is idempotent: a crash
// during Open is recovered by the next Open. Open reads every leaf of the
// chain and checks it (see Check: the chain's order, bitmaps, the key
// ranges and fingerprints); damage is an error wrapping ErrCorrupt (and
// persist.ErrCorrupt) and nothing is returned. ErrNoTree is an empty
// header, ErrBadFormat another kind of structure or no header at all.
// Open claims the area like Create before it writes anything.
//
// In a read-only region Open writes nothing: it opens a tree whose logs
// are clear (Put and Delete then return an error wrapping
// persist.ErrReadOnly) and returns an error wrapping persist.ErrReadOnly
// for one a crash left in the middle of a split or a free.
func Open(r *persist.Region, opts *Options) (t *Tree, err error) {
	err = guard(r, func() error {
		t, err = open(r, opts, correct)
		return err
	})
	return t, err
}

// open is Open with a protocol variant for recovery (the crash tests').
func open(r *persist.Region, opts *Options, v variant) (_ *Tree, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	if err := r.Readable(); err != nil {
		return nil, regionErr(err, "Open")
	}
	hb, err := treeKind.Place(r, o.Offset)
	if err != nil {
		return nil, err
	}
	f, err := treeKind.Decode(hb)
	if err != nil {
		return nil, err
	}
	if f.Flags != flagBackLinks|flagMark {
		return nil, fmt.Errorf("%w: an FP-tree of layout %d (header flags %#x; written by braid before December 2026): this build reads layout 3 (flags %#x), recreate the tree",
			ErrBadFormat, 1+f.Flags&flagBackLinks, f.Flags, flagBackLinks|flagMark)
	}
	m := int(f.Size)
	if m < MinLeafSlots || m > MaxLeafSlots {
		return nil, fmt.Errorf("%w: header says leaves of %d slots, want %d to %d", ErrCorrupt, m, MinLeafSlots, MaxLeafSlots)
	}
	g := geometry(m)
	switch {
	case int(f.Stride) != g.stride:
		return nil, fmt.Errorf("%w: header says leaves of %d bytes, leaves of %d slots take %d", ErrCorrupt, f.Stride, m, g.stride)
	case f.Aux != 0:
		return nil, fmt.Errorf("%w: header has a non-zero aux field %#x", ErrCorrupt, f.Aux)
	case f.Count < 2 || f.Count > MaxLeaves:
		return nil, fmt.Errorf("%w: header says %d leaves, want 2 to %d", ErrCorrupt, f.Count, uint64(MaxLeaves))
	}
	leaves, err := treeKind.Extent(r, o.Offset, leavesOff-pmheader.Size, f)
	if err != nil {
		return nil, err
	}
	size := leavesOff + leaves*g.stride
	switch {
	case o.LeafSlots != 0 && o.LeafSlots != m:
		return nil, fmt.Errorf("%w: Options.LeafSlots %d, the tree has leaves of %d slots", ErrInvalid, o.LeafSlots, m)
	case o.Leaves != 0 && o.Leaves != leaves:
		return nil, fmt.Errorf("%w: Options.Leaves %d, the tree has %d", ErrInvalid, o.Leaves, leaves)
	case o.Size != 0 && o.Size != size:
		return nil, fmt.Errorf("%w: Options.Size %d, the tree's area is %d bytes", ErrInvalid, o.Size, size)
	}
	rel, err := treeKind.Claim(r, o.Offset, size)
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	t := newTree(r, &o, size, g, leaves, rel)
	t.variant = v
	if err := t.recover(); err != nil {
		return nil, err
	}
	t.variant = correct
	return t, nil
}

func (t *Tree) recover() error {
	sw, fw, err := t.logs()
	if err != nil {
		return err
	}
	if t.mark, err = t.readMark(); err != nil {
		return err
	}
	if (sw != 0 || fw != 0) && t.ro {
		return fmt.Errorf("%w: the tree needs recovery (a crash interrupted a split or a leaf free): open it in a writable region", ErrReadOnly)
	}
	if sw != 0 {
		if err := t.redoSplit(sw); err != nil {
			return err
		}
	}
	if fw != 0 {
		if err := t.redoFree(fw); err != nil {
			return err
		}
	}
	c, err := t.walk(!t.ro, false)
	if err != nil {
		return err
	}
	t.adopt(c)
	return nil
}

// logs reads the log line: the split and the free log words; every word
// after the mark must be zero, and at most one log set (they are written
// under one lock, each cleared before it is released).
func (t *Tree) logs() (split, free uint64, err error) {
	b := t.r.Bytes()[t.off+logOff : t.off+leavesOff]
	for w := markWord + 1; w < 8; w++ {
		if v := persist.Load64(b[8*w:]); v != 0 {
			return 0, 0, fmt.Errorf("%w: log line word %d is %#x, want 0", ErrCorrupt, w, v)
		}
	}
	split, free = persist.Load64(b), persist.Load64(b[8:])
	if split != 0 && free != 0 {
		return 0, 0, fmt.Errorf("%w: both micro logs are set (split %#x, free %#x); one runs at a time", ErrCorrupt, split, free)
	}
	return split, free, nil
}

// redoSplit finishes the split the log word w records (see splitInsert):
// the old leaf's next is the new leaf and its bitmap the slots the new
// leaf did not take; the new leaf's prev is the old one and its next's
// prev the new one.
func (t *Tree) redoSplit(w uint64) error {
	l, n, _ := unpackLog(w)
	if int64(l) >= int64(t.cap) || int64(n) >= int64(t.cap) || n == 0 || l == n {
		return fmt.Errorf("%w: the split log names leaves %d and %d of %d", ErrCorrupt, l, n, t.cap)
	}
	pl, pn := t.leaf(l), t.leaf(n)
	upper := at(pn, offBitmap)
	if upper&^t.g.full != 0 || upper == 0 || upper == t.g.full {
		return fmt.Errorf("%w: the split log's new leaf %d has bitmap %#x, not one half of a full leaf of %d slots", ErrCorrupt, n, upper, t.g.m)
	}
	succ := at(pn, offNext)
	if succ >= uint64(t.cap) || succ == uint64(n) {
		return fmt.Errorf("%w: the split log's new leaf %d has next %d (the area has %d leaves)", ErrCorrupt, n, succ, t.cap)
	}
	if t.variant != redoNoMark {
		if err := t.raiseMark(n); err != nil {
			return regionErr(err, "recovery")
		}
	}
	persist.Store64(word(pl, offNext), uint64(n))
	persist.Store64(word(pl, offBitmap), t.g.full&^upper)
	if err := t.link(l, n, uint32(succ)); err != nil {
		return regionErr(err, "recovery")
	}
	if t.variant == redoClearFirst {
		if err := t.r.Flush(bytesAt(pl, 0, 16)); err != nil {
			return regionErr(err, "recovery")
		}
	} else if err := t.r.Persist(bytesAt(pl, 0, 16)); err != nil {
		return regionErr(err, "recovery")
	}
	return t.clearLog(0)
}

// redoFree finishes the free the log word w records (see freeLeaf): the
// predecessor's next skips the freed leaf, its successor's prev is the
// predecessor and its own prev is cleared.
func (t *Tree) redoFree(w uint64) error {
	s, p, _ := unpackLog(w)
	if int64(s) >= int64(t.cap) || int64(p) >= int64(t.cap) || s == 0 || s == p {
		return fmt.Errorf("%w: the free log names leaves %d and %d of %d", ErrCorrupt, s, p, t.cap)
	}
	ps := t.leaf(s)
	if bm := at(ps, offBitmap); bm != 0 {
		return fmt.Errorf("%w: the free log's leaf %d holds keys (bitmap %#x)", ErrCorrupt, s, bm)
	}
	succ := at(ps, offNext)
	if succ >= uint64(t.cap) || succ == uint64(s) {
		return fmt.Errorf("%w: the free log's leaf %d has next %d (the area has %d leaves)", ErrCorrupt, s, succ, t.cap)
	}
	nw := word(t.leaf(p), offNext)
	if at(t.leaf(p), offNext) == uint64(s) {
		persist.Store64(nw, succ)
	}
	if err := t.unlinkPrev(p, s, uint32(succ)); err != nil {
		return regionErr(err, "recovery")
	}
	if err := t.r.Persist(nw); err != nil {
		return regionErr(err, "recovery")
	}
	return t.clearLog(1)
}

// readMark reads the mark (layout.go): a leaf number of the area.
func (t *Tree) readMark() (uint32, error) {
	w := persist.Load64(t.logWordBytes(markWord))
	m, ok := markOf(w)
	switch {
	case !ok:
		return 0, fmt.Errorf("%w: the log line's mark word is %#x, not a leaf number and its complement", ErrCorrupt, w)
	case int64(m) >= int64(t.cap):
		return 0, fmt.Errorf("%w: the log line's mark says leaf %d was given out, the area has %d", ErrCorrupt, m, t.cap)
	}
	return m, nil
}

// raiseMark stores the mark n when it is above the mark, and flushes it
// (the caller's next fence makes it durable): leaf n is given out.
func (t *Tree) raiseMark(n uint32) error {
	if n <= t.mark {
		return nil
	}
	t.mark = n
	w := t.logWordBytes(markWord)
	persist.Store64(w, markWordOf(n))
	return t.r.Flush(w)
}

func (t *Tree) clearLog(w int) error {
	b := t.logWordBytes(w)
	persist.Store64(b, 0)
	if err := t.r.Persist(b); err != nil {
		return regionErr(err, "recovery")
	}
	return nil
}

// adopt sets the DRAM state from a walk: ranges, inner nodes, the free
// leaves, the key count.
func (t *Tree) adopt(c chain) {
	for j, l := range c.leaves {
		hi := ^uint64(0)
		if j+1 < len(c.leaves) {
			hi = c.los[j+1] - 1
		}
		t.meta[l].setRange(c.los[j], hi)
	}
	t.hwm = max(c.hwm, t.mark+1)
	t.free = t.free[:0]
	for l := uint32(0); l < t.hwm; l++ {
		if c.inUse[l/64]&(1<<(l%64)) == 0 {
			t.free = append(t.free, l)
		}
	}
	slices.Reverse(t.free) // the lowest first
	if invariants.Enabled {
		for j := 1; j < len(c.los); j++ {
			if c.los[j] <= c.los[j-1] {
				panic(fmt.Sprintf("fptree: the walk kept leaf bounds %d then %d", c.los[j-1], c.los[j]))
			}
		}
		if len(t.free)+len(c.leaves) != int(t.hwm) {
			panic(fmt.Sprintf("fptree: %d free and %d chained leaves of %d given out", len(t.free), len(c.leaves), t.hwm))
		}
	}
	t.count.Store(int64(c.keys))
	t.lost, t.cut = c.lost, c.cut
	t.root.Store(build(c.los, c.leaves, t.fan))
}
