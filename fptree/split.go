package fptree

import (
	"fmt"
	"slices"

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
// the keys, its next l's next, its lo the split key — and made durable
// (fence 1); the log {l, n} is made durable (fence 2); l's next becomes n
// and l's bitmap the lower half, both stored and made durable (fence 3:
// the two words may reach the media in either order, which the log
// covers); the log is cleared (fence 4). Recovery of a set log rolls the
// split forward: it stores l's next and lower bitmap again, both
// computed from n, which was durable before the log was.
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
	sep, err := t.split(l, n)
	if err != nil {
		err = t.fail(err)
	} else {
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
		err = t.insert(p, at(p, offBitmap), k, v)
	}
	mn.unlock()
	m.unlock()
	return err
}

// split moves the upper half of the full leaf l into the free leaf n and
// returns the split key, the lowest key n holds.
func (t *Tree) split(l, n uint32) (uint64, error) {
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
	// The new leaf: its header lines built in DRAM, then the whole leaf
	// streamed (the header lines from the copy, the slots from l).
	var head [128]byte
	copy(head[:g.head], bytesAt(pl, 0, g.head))
	putU64(head[offBitmap:], upper)
	putU64(head[offNext:], at(pl, offNext))
	putU64(head[offLo:], sep)
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
	lw := t.logWordBytes(0)
	persist.Store64(lw, logWord(l, n))
	if t.variant != splitUnlogged {
		if err := t.r.Persist(lw); err != nil {
			return 0, err
		}
	} else if err := t.r.Flush(lw); err != nil {
		return 0, err
	}
	persist.Store64(word(pl, offNext), uint64(n))
	persist.Store64(word(pl, offBitmap), g.full&^upper)
	if t.variant == splitLinkWithClear {
		if err := t.r.Flush(bytesAt(pl, 0, 16)); err != nil {
			return 0, err
		}
	} else if err := t.r.Persist(bytesAt(pl, 0, 16)); err != nil {
		return 0, err
	}
	persist.Store64(lw, 0)
	if t.variant == splitClearUnflushed {
		return sep, nil
	}
	if err := t.r.Persist(lw); err != nil {
		return 0, err
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
func (t *Tree) freeLeaf(s uint32) error {
	ms := &t.meta[s]
	for range 8 {
		lo := ms.lo.Load()
		if lo == 0 || lo > ms.hi.Load() {
			return nil // the head leaf, or freed already
		}
		p := t.root.Load().leafOf(lo - 1)
		mp := &t.meta[p]
		mp.lock()
		if t.closed.Load() {
			mp.unlock()
			return nil // the empty leaf stays linked: Open unlinks it
		}
		if !mp.covers(lo-1) || mp.hi.Load() != lo-1 || at(t.leaf(p), offNext) != uint64(s) {
			mp.unlock()
			continue // the chain moved under us: look again
		}
		ms.lock()
		if ms.lo.Load() != lo || at(t.leaf(s), offBitmap) != 0 {
			ms.unlock()
			mp.unlock()
			return nil // refilled
		}
		t.smu.Lock()
		err := t.unlink(p, s)
		if err != nil {
			err = t.fail(err)
		} else if root, ok := withoutLeaf(t.root.Load(), lo, s); !ok {
			err = t.fail(fmt.Errorf("%w: the inner nodes do not hold leaf %d at key %d", ErrCorrupt, s, lo))
		} else {
			t.root.Store(root)
			mp.hi.Store(ms.hi.Load())
			ms.setFree()
			t.free = append(t.free, s)
		}
		t.smu.Unlock()
		ms.unlock()
		mp.unlock()
		return err
	}
	return nil // still moving: the empty leaf stays linked, harmless; Open unlinks it
}

func (t *Tree) unlink(p, s uint32) error {
	nw := word(t.leaf(p), offNext)
	if t.variant == freeUnlogged {
		persist.Store64(nw, at(t.leaf(s), offNext))
		return t.r.Persist(nw)
	}
	lw := t.logWordBytes(1)
	persist.Store64(lw, logWord(s, p))
	if err := t.r.Persist(lw); err != nil {
		return err
	}
	persist.Store64(nw, at(t.leaf(s), offNext))
	if t.variant != unlinkUnflushed {
		if err := t.r.Persist(nw); err != nil {
			return err
		}
	}
	persist.Store64(lw, 0)
	return t.r.Persist(lw)
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}
