package fptree

import (
	"errors"
	"fmt"
	"slices"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
)

// alloc takes a free leaf (smu held): a freed one, else one never used.
func (t *Tree) alloc() (uint32, error) {
	if n := len(t.free); n > 0 {
		l := t.free[n-1]
		t.free = t.free[:n-1]
		return l, nil
	}
	if int(t.hwm) < t.cap {
		t.hwm++
		return t.hwm - 1, nil
	}
	return 0, fmt.Errorf("%w: all %d leaves of %d slots (%d bytes of the %d-byte area at offset %d) are in use, holding %d keys; a split needs one more",
		ErrFull, t.cap, t.g.m, t.cap*t.g.stride, t.size, t.off, t.Len())
}

// splitInsert splits the full leaf l (locked by the caller, which m
// guards), inserts (k, v) into the half whose range holds k, and unlocks.
//
// The split, with its micro log (FPTree's, in one word): the new leaf n
// is written whole — a copy of l whose bitmap keeps the upper half of
// the keys, its next l's next, its lo the split key, its prev l but
// not linked — and made durable (fence 1); the log {l, n} is made durable
// (fence 2); l's next becomes n, l's bitmap the lower half, n's prev l
// (linked) and the prev of l's old next n (linked), all stored and made
// durable (fence 3: the words may reach the media in any order, which the
// log covers); the log is cleared (fence 4). Recovery of a set log rolls
// the split forward: it stores l's next and lower bitmap and the two prev
// words again, all computed from n, which was durable before the log was.
func (t *Tree) splitInsert(l uint32, m *leafMeta, k, v uint64) error {
	t.smu.Lock()
	n, err := t.alloc()
	if err != nil {
		t.smu.Unlock()
		m.unlock()
		return err
	}
	mn := &t.meta[n]
	mn.lock()
	if err := t.lostLeaves(); err != nil {
		t.free = append(t.free, n)
		mn.unlock()
		t.smu.Unlock()
		m.unlock()
		return err
	}
	var sep uint64
	linked := false // l's next is n in memory, whatever reached the media
	err = guard(t.r, func() error {
		var err error
		sep, err = t.split(l, n, &linked)
		return err
	})
	if isMedia(err) && !t.splitLogged() {
		// A fault on poisoned media before the log was set (reading l,
		// writing n): the chain is as it was. n goes back to the free
		// leaves unless the fault was in n (then it stays out until
		// Open).
		var me *persist.MediaError
		lo := int64(t.off+leavesOff) + int64(n)*int64(t.g.stride)
		if errors.As(err, &me) && (me.Off < lo || me.Off >= lo+int64(t.g.stride)) {
			t.free = append(t.free, n)
		}
		mn.unlock()
		t.smu.Unlock()
		m.unlock()
		return err
	}
	if err != nil {
		err = t.fail(err)
	}
	if err == nil || linked {
		// Linked in memory even when a later fence failed (a failed
		// sync): the tree takes no more changes, and its reads follow
		// the memory, where the upper keys are in n now.
		hi := m.hi.Load()
		mn.setRange(sep, hi)
		m.setRange(m.lo.Load(), sep-1)
		t.root.Store(withLeaf(t.root.Load(), sep, n, t.fan))
	}
	t.smu.Unlock()
	if err == nil {
		p := t.leaf(l)
		if k >= sep {
			p = t.leaf(n)
		}
		err = guard(t.r, func() error { return t.insert(p, at(p, offBitmap), k, v) })
	}
	mn.unlock()
	m.unlock()
	return err
}

// splitLogged reports whether the split log word is set (or cannot be
// read): a split that failed then may have changed the chain.
func (t *Tree) splitLogged() bool {
	set := true
	_ = guard(t.r, func() error {
		set = persist.Load64(t.logWordBytes(0)) != 0
		return nil
	})
	return set
}

// split moves the upper half of the full leaf l into the free leaf n and
// returns the split key, the lowest key n holds. It sets *linked once l's
// next and bitmap are stored.
func (t *Tree) split(l, n uint32, linked *bool) (uint64, error) {
	g := &t.g
	pl := t.leaf(l)
	var ks [MaxLeafSlots]uint64
	for i := range g.m {
		ks[i] = g.key(pl, i)
	}
	sorted := ks[:g.m]
	slices.Sort(sorted)
	sep := sorted[g.m/2]
	var upper uint64
	for i := range g.m {
		if g.key(pl, i) >= sep {
			upper |= 1 << i
		}
	}
	if invariants.Enabled && (upper == 0 || upper == g.full || upper&^g.full != 0) {
		panic(fmt.Sprintf("fptree: the split of leaf %d keeps bitmap %#x of a full %d-slot leaf", l, upper, g.m))
	}
	// The new leaf: its header lines built in DRAM, then the whole leaf
	// streamed (the header lines from the copy, the slots from l).
	var head [128]byte
	copy(head[:g.head], bytesAt(pl, 0, g.head))
	putU64(head[offBitmap:], upper)
	putU64(head[offNext:], at(pl, offNext))
	putU64(head[offLo:], sep)
	putU64(head[offPrev:], uint64(l)) // not linked yet
	dst := t.leafBytes(n)
	src := t.leafBytes(l)
	if err := t.r.Copy(dst[:g.head], head[:g.head], persist.NoDrain); err != nil {
		return 0, err
	}
	if err := t.r.Copy(dst[g.head:], src[g.head:], persist.NoDrain); err != nil {
		return 0, err
	}
	if t.variant != splitLeafUndrained {
		if err := t.r.Drain(); err != nil {
			return 0, err
		}
	}
	// The mark rises with the log (one fence): a leaf the chain reaches
	// is never past it (the redo raises it too).
	if err := t.raiseMark(n); err != nil {
		return 0, err
	}
	lw := t.logWordBytes(0)
	persist.Store64(lw, logWord(l, n))
	if t.variant != splitUnlogged {
		if err := t.r.Persist(lw); err != nil {
			return 0, err
		}
	} else if err := t.r.Flush(lw); err != nil {
		return 0, err
	}
	succ := uint32(at(pl, offNext))
	persist.Store64(word(pl, offNext), uint64(n))
	persist.Store64(word(pl, offBitmap), g.full&^upper)
	*linked = true
	if err := t.link(l, n, succ); err != nil {
		return sep, err
	}
	if t.variant == splitLinkWithClear {
		if err := t.r.Flush(bytesAt(pl, 0, 16)); err != nil {
			return sep, err
		}
	} else if err := t.r.Persist(bytesAt(pl, 0, 16)); err != nil {
		return sep, err
	}
	persist.Store64(lw, 0)
	if t.variant == splitClearUnflushed {
		return sep, nil
	}
	if err := t.r.Persist(lw); err != nil {
		return sep, err
	}
	return sep, nil
}

// freeLeaf unlinks the empty leaf s from the chain and frees it, unless a
// Put refilled it first. It locks s's predecessor, then s, then smu (the
// lock order), and checks that both are still what they were.
//
// The free, with its micro log (FPTree's delete log, in one word): the
// log {s, p} is made durable (fence 1), p's next becomes s's next (one
// 8-byte store, fence 2), the log is cleared (fence 3); s joins the free
// leaves only then. Recovery of a set log finishes the unlink.
//
// It runs under persist.Guard, its locks released by defers: a
// predecessor on poisoned media is a *persist.MediaError, and the empty
// leaf stays linked (harmless; Open unlinks it).
func (t *Tree) freeLeaf(s uint32) error {
	for range 8 {
		again := false
		err := guard(t.r, func() error {
			var err error
			again, err = t.tryFree(s)
			return err
		})
		if !again || err != nil {
			return err
		}
	}
	return nil // still moving: the empty leaf stays linked, harmless; Open unlinks it
}

// tryFree is one attempt of freeLeaf; again when the chain moved under it.
func (t *Tree) tryFree(s uint32) (again bool, err error) {
	ms := &t.meta[s]
	lo := ms.lo.Load()
	if lo == 0 || lo > ms.hi.Load() {
		return false, nil // the head leaf, or freed already
	}
	p := t.root.Load().leafOf(lo - 1)
	mp := &t.meta[p]
	mp.lock()
	defer mp.unlock()
	if t.closed.Load() {
		return false, nil // the empty leaf stays linked: Open unlinks it
	}
	if !mp.covers(lo-1) || mp.hi.Load() != lo-1 || at(t.leaf(p), offNext) != uint64(s) {
		return true, nil // the chain moved under us: look again
	}
	ms.lock()
	defer ms.unlock()
	if ms.lo.Load() != lo || at(t.leaf(s), offBitmap) != 0 {
		return false, nil // refilled
	}
	t.smu.Lock()
	defer t.smu.Unlock()
	if err := t.unlink(p, s); err != nil {
		return false, t.fail(err)
	}
	root, ok := withoutLeaf(t.root.Load(), lo, s)
	if !ok {
		return false, t.fail(fmt.Errorf("%w: the inner nodes do not hold leaf %d at key %d", ErrCorrupt, s, lo))
	}
	t.root.Store(root)
	mp.hi.Store(ms.hi.Load())
	ms.setFree()
	t.free = append(t.free, s)
	return false, nil
}

// unlink takes s out of the chain after p: p's next becomes s's next,
// whose prev becomes p, and s's prev is cleared, with one fence (under
// the free log, whose redo does the same).
func (t *Tree) unlink(p, s uint32) error {
	nw := word(t.leaf(p), offNext)
	succ := uint32(at(t.leaf(s), offNext))
	if t.variant == freeUnlogged {
		persist.Store64(nw, uint64(succ))
		if err := t.unlinkPrev(p, s, succ); err != nil {
			return err
		}
		return t.r.Persist(nw)
	}
	lw := t.logWordBytes(1)
	persist.Store64(lw, logWord(s, p))
	if err := t.r.Persist(lw); err != nil {
		return err
	}
	persist.Store64(nw, uint64(succ))
	if err := t.unlinkPrev(p, s, succ); err != nil {
		return err
	}
	if t.variant != unlinkUnflushed {
		if err := t.r.Persist(nw); err != nil {
			return err
		}
	}
	persist.Store64(lw, 0)
	return t.r.Persist(lw)
}

// link sets the back links of a split of l into n whose successor is succ
// (0: none): n's prev is l, succ's is n. Flushed, not fenced: the caller's
// next fence makes them durable with the link.
func (t *Tree) link(l, n, succ uint32) error {
	if err := t.setPrev(n, linkedTo(l)); err != nil {
		return err
	}
	if succ != 0 {
		return t.setPrev(succ, linkedTo(n))
	}
	return nil
}

// unlinkPrev sets the back links of an unlink of s after p whose
// successor is succ: succ's prev is p, s's is cleared (not linked: a free
// leaf Open never takes for where the chain goes on). Flushed, not fenced.
func (t *Tree) unlinkPrev(p, s, succ uint32) error {
	if succ != 0 {
		if err := t.setPrev(succ, linkedTo(p)); err != nil {
			return err
		}
	}
	return t.setPrev(s, 0)
}

// setPrev stores leaf x's prev word and flushes it, without a fence. A
// fault is ignored: the prev words are a hint for Open, which repairs
// them, and a leaf on poisoned media the operation does not own (the
// successor of a split leaf) must not fail it.
func (t *Tree) setPrev(x uint32, v uint64) error {
	err := guard(t.r, func() error {
		w := word(t.leaf(x), offPrev)
		persist.Store64(w, v)
		return t.r.Flush(w)
	})
	if isMedia(err) {
		return nil
	}
	return err
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}
