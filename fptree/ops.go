package fptree

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
)

// Get returns the value of key k and whether the tree holds k. The error
// is ErrClosed after Close (or an error wrapping persist.ErrClosed when
// the region was closed).
func (t *Tree) Get(k uint64) (v uint64, ok bool, err error) {
	if err := t.readable(); err != nil {
		return 0, false, err
	}
	if err := t.lostKey(k); err != nil {
		return 0, false, err
	}
	err = guard(t.r, func() error {
		v, ok = t.get(k)
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return v, ok, nil
}

func (t *Tree) get(k uint64) (v uint64, ok bool) {
	for {
		l := t.root.Load().leafOf(k)
		m := &t.meta[l]
		ver := m.stable()
		if !m.covers(k) {
			continue // a root from before a split or free: load it again
		}
		p := t.leaf(l)
		i, _ := t.g.find(p, at(p, offBitmap), k)
		if i >= 0 {
			v = t.g.val(p, i)
		}
		if m.ver.Load() == ver {
			return v, i >= 0
		}
	}
}

// lockLeaf locks and returns the leaf whose range holds k, or ErrClosed
// when the tree was closed before the lock was taken (Close waits for
// every leaf lock held, so a change that holds one runs to its end).
func (t *Tree) lockLeaf(k uint64) (uint32, *leafMeta, error) {
	for {
		l := t.root.Load().leafOf(k)
		m := &t.meta[l]
		m.lock()
		if t.closed.Load() {
			m.unlock()
			return 0, nil, ErrClosed
		}
		if m.covers(k) {
			return l, m, nil
		}
		m.unlock()
	}
}

// Put sets the value of key k to v, inserting k if the tree does not hold
// it. When Put returns nil the new value is durable. An insert costs two
// fences (the slot, then the bitmap bit that commits it) when the leaf has
// a free slot, and a split of the leaf first when it has none; an update
// costs one (the value is one 8-byte word, stored in place by one
// failure-atomic store). After a crash during Put, k holds its old value
// (or is absent, if it was) or v, never anything else, and no other key
// changed. A split that finds every leaf in use is ErrFull, and the tree
// is unchanged.
func (t *Tree) Put(k, v uint64) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := t.lostKey(k); err != nil {
		return err
	}
	l, m, err := t.lockLeaf(k)
	if err != nil {
		return err
	}
	full := false
	err = guard(t.r, func() error {
		p := t.leaf(l)
		bm := at(p, offBitmap)
		if i, _ := t.g.find(p, bm, k); i >= 0 {
			return t.update(p, i, v)
		}
		if bm != t.g.full {
			return t.insert(p, bm, k, v)
		}
		full = true
		return nil
	})
	if !full || err != nil {
		m.unlock()
		return err
	}
	return t.splitInsert(l, m, k, v)
}

// update stores v as slot i's value in place and makes it durable.
func (t *Tree) update(p unsafe.Pointer, i int, v uint64) error {
	w := word(p, t.g.kv+16*i+8)
	persist.Store64(w, v)
	if err := t.r.Persist(w); err != nil {
		return regionErr(err, "a change")
	}
	return nil
}

// insert puts (k, v) into the first free slot of the leaf at p, whose
// bitmap is bm (not full): the slot and its fingerprint are made durable
// (one fence), then the bitmap with the slot's bit set (the commit, one
// fence).
func (t *Tree) insert(p unsafe.Pointer, bm, k, v uint64) error {
	i := bits.TrailingZeros64(^bm)
	if invariants.Enabled && (i >= t.g.m || bm&t.g.full != bm) {
		panic(fmt.Sprintf("fptree: insert into a leaf with bitmap %#x (%d slots)", bm, t.g.m))
	}
	t.announce()
	if err := t.stage(p, i, k, v); err != nil {
		return err
	}
	if t.variant != bitmapFirst {
		if err := t.stageFence(); err != nil {
			return regionErr(err, "a change")
		}
	}
	if err := t.commit(p, bm|1<<i); err != nil {
		return err
	}
	t.count.Add(1)
	return nil
}

// stage writes (k, v) and k's fingerprint into slot i of the leaf at p and
// starts their write-back (durable at the next fence): one line, or two
// when the fingerprint is on another line and changed.
func (t *Tree) stage(p unsafe.Pointer, i int, k, v uint64) error {
	fp := (*byte)(unsafe.Add(p, offFps+i))
	f := fingerprint(k)
	changed := *fp != f
	*fp = f
	t.g.putKV(p, i, k, v)
	if kv := t.g.kv + 16*i; changed && (offFps+i)/64 != kv/64 {
		if err := t.flush(bytesAt(p, offFps+i, 1)); err != nil {
			return err
		}
	}
	return t.flush(bytesAt(p, t.g.kv+16*i, 16))
}

// commit stores the leaf's new bitmap with one 8-byte store and makes it
// durable.
func (t *Tree) commit(p unsafe.Pointer, bm uint64) error {
	w := word(p, offBitmap)
	persist.Store64(w, bm)
	if err := t.r.Persist(w); err != nil {
		return regionErr(err, "a change")
	}
	return nil
}

// Delete removes key k and reports whether the tree held it. When it
// returns the removal is durable (one fence: the bitmap without the
// slot's bit). A leaf it leaves empty is unlinked from the chain and
// freed (the head leaf stays). After a crash during Delete, k is present
// with its value or absent.
func (t *Tree) Delete(k uint64) (bool, error) {
	if err := t.writable(); err != nil {
		return false, err
	}
	if err := t.lostKey(k); err != nil {
		return false, err
	}
	l, m, err := t.lockLeaf(k)
	if err != nil {
		return false, err
	}
	var bm uint64
	i := -1
	err = guard(t.r, func() error {
		p := t.leaf(l)
		bm = at(p, offBitmap)
		if i, _ = t.g.find(p, bm, k); i < 0 {
			return nil
		}
		bm &^= 1 << i
		return t.commit(p, bm)
	})
	if i < 0 || err != nil {
		m.unlock()
		return false, err
	}
	t.count.Add(-1)
	m.unlock()
	if bm == 0 && l != 0 && !t.keepEmpty {
		if err := t.freeLeaf(l); err != nil {
			return true, err
		}
	}
	return true, nil
}
