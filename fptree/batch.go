package fptree

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/coro"
	"github.com/braid-pm/braid/persist"
)

// Stages of a batched lookup or insert, advanced by a coro.Ring: each one
// ends by prefetching what the next one reads, and the ring runs the
// other operations of the group meanwhile.
const (
	stBegin uint8 = iota // load the root
	stNode               // search a node prefetched by the stage before
	stLeaf               // the leaf's header lines are prefetched: fingerprints
	stKey                // a candidate slot's line is prefetched: compare the key
	stWrite              // insert: the free slot's line is prefetched: write it
)

// getOp is one lookup of GetBatch.
type getOp struct {
	nd    *node
	k     uint64
	ver   uint64
	cand  uint64 // slots whose fingerprint matches, not yet compared
	i     int
	leaf  uint32
	stage uint8
}

// GetBatch looks up keys[i] for every i, setting vals[i] and found[i] as
// Get would (vals and found must be at least as long as keys). The
// lookups run interleaved, Options.Group at a time: each prefetches the
// inner node, leaf line or key line it needs next and lets the others
// run while the line arrives (coro.Ring), which hides the cache misses
// that a plain Get waits for one after another. Each lookup is
// linearizable on its own, as a Get; the batch is not one snapshot.
func (t *Tree) GetBatch(keys, vals []uint64, found []bool) error {
	if len(vals) < len(keys) || len(found) < len(keys) {
		return fmt.Errorf("%w: GetBatch of %d keys into %d values and %d found flags", ErrInvalid, len(keys), len(vals), len(found))
	}
	if err := t.readable(); err != nil {
		return err
	}
	err := guard(t.r, func() error {
		if len(t.lost) > 0 {
			return t.lost[0].err // key by key, below
		}
		var r coro.Ring[getOp]
		r.Reset(t.group, len(keys))
		for r.Round() {
			for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
				if op >= 0 {
					*s = getOp{k: keys[op], i: op}
				}
				if t.getStep(s, vals, found) {
					r.Done()
				}
			}
		}
		return nil
	})
	if isMedia(err) {
		// A key on poisoned media: look every key up alone, so that the
		// others are found, and return the first media error.
		err = nil
		for i, k := range keys {
			v, ok, e := t.Get(k)
			vals[i], found[i] = v, ok
			if e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}

// getStep runs the next stage of s and reports whether the lookup is done.
func (t *Tree) getStep(s *getOp, vals []uint64, found []bool) bool {
	switch s.stage {
	case stBegin:
		s.nd = t.root.Load()
		s.stage = stNode
		fallthrough
	case stNode:
		nd := s.nd
		c := nd.child(s.k)
		if !nd.bottom {
			s.nd = nd.kids[c]
			t.prefetchNode(s.nd)
			return false
		}
		s.leaf = nd.leaves[c]
		asm.Prefetch(unsafe.Pointer(&t.meta[s.leaf]))
		asm.PrefetchLines(t.leaf(s.leaf), t.g.head)
		s.stage = stLeaf
		return false
	case stLeaf:
		m := &t.meta[s.leaf]
		v := m.ver.Load()
		if v&1 != 0 {
			return false // a writer holds the leaf: come back next round
		}
		if !m.covers(s.k) {
			s.stage = stBegin // a root from before a split or free
			return false
		}
		p := t.leaf(s.leaf)
		s.ver = v
		s.cand = t.g.candidates(p, fingerprint(s.k)) & at(p, offBitmap)
		if s.cand == 0 {
			return t.getDone(s, m, 0, false, vals, found)
		}
		asm.Prefetch(unsafe.Add(p, t.g.kv+16*bits.TrailingZeros64(s.cand)))
		s.stage = stKey
		return false
	default: // stKey
		m := &t.meta[s.leaf]
		p := t.leaf(s.leaf)
		i := bits.TrailingZeros64(s.cand)
		if t.g.key(p, i) == s.k {
			return t.getDone(s, m, t.g.val(p, i), true, vals, found)
		}
		s.cand &= s.cand - 1
		if s.cand == 0 {
			return t.getDone(s, m, 0, false, vals, found)
		}
		asm.Prefetch(unsafe.Add(p, t.g.kv+16*bits.TrailingZeros64(s.cand)))
		return false
	}
}

// getDone ends a lookup if the leaf did not change while it was read,
// else starts it over.
func (t *Tree) getDone(s *getOp, m *leafMeta, v uint64, ok bool, vals []uint64, found []bool) bool {
	if m.ver.Load() != s.ver {
		s.stage = stBegin
		return false
	}
	vals[s.i], found[s.i] = v, ok
	return true
}

// prefetchNode prefetches the count and the keys of an inner node, the
// lines its binary search reads (as many keys as the fan-out: the count
// itself is on a line being prefetched).
func (t *Tree) prefetchNode(nd *node) {
	asm.PrefetchLines(unsafe.Pointer(nd), int(unsafe.Offsetof(nd.keys))+8*t.fan)
}

// putOp is one insert of PutBatch.
type putOp struct {
	nd    *node
	k, v  uint64
	cand  uint64
	i     int
	gl    int // the group's entry for the leaf
	slot  int
	leaf  uint32
	stage uint8
}

// group is what one group of PutBatch holds: the leaves it locked and the
// updates it will store in place at its commit (an update is written only
// then, so that a group abandoned on an error changes nothing).
type group struct {
	leaves []groupLeaf
	ups    [coro.MaxGroup]update
	nup    int
}

// update is a new value for a slot a group found its key in.
type update struct {
	p unsafe.Pointer // the slot's value word
	v uint64
}

// groupLeaf is a leaf a group of PutBatch holds locked.
type groupLeaf struct {
	leaf     uint32
	m        *leafMeta
	p        unsafe.Pointer
	bm       uint64 // the bitmap when locked
	reserved uint64 // slots the group writes, committed by the second fence
}

// PutBatch puts keys[i] with vals[i] for every i (vals at least as long as
// keys), as a sequence of Puts would (a key given twice gets its last
// value), and returns when every one is durable. The inserts run
// Options.Group at a time, interleaved like GetBatch's lookups, and share
// their fences: a group writes every new slot and its fingerprint (and
// every updated value), makes them durable with one fence, then stores the
// bitmap of each leaf it touched once and makes them durable with a
// second fence — two fences per group instead of two per key. A key whose
// leaf is full (it must split), whose leaf another goroutine holds, or
// that the group already has, is put after the group by Put.
//
// After a crash during PutBatch each of its keys holds its old value (or
// is absent) or its new one; the batch is not atomic. When PutBatch fails
// (ErrFull: a leaf had to split and no leaf was free; persist.ErrMedia: a
// leaf on poisoned media) the keys it could put are durable and the
// others unchanged; Get tells which.
func (t *Tree) PutBatch(keys, vals []uint64) error {
	if len(vals) < len(keys) {
		return fmt.Errorf("%w: PutBatch of %d keys with %d values", ErrInvalid, len(keys), len(vals))
	}
	if err := t.writable(); err != nil {
		return err
	}
	if len(t.lost) > 0 {
		// Open lost keys to poisoned media: Put refuses each of them.
		for i, k := range keys {
			if err := t.Put(k, vals[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		r     coro.Ring[putOp]
		gls   [coro.MaxGroup]groupLeaf
		later []int
		gr    group
	)
	g := t.group
	for start := 0; start < len(keys); start += g {
		end := min(start+g, len(keys))
		var err error
		gr.leaves, gr.nup = gls[:0], 0
		err = guard(t.r, func() error {
			var err error
			later, err = t.putGroup(&r, &gr, keys, vals, start, end, later[:0])
			return err
		})
		if err != nil {
			return err
		}
		for _, i := range later {
			if err := t.Put(keys[i], vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// putGroup puts keys[start:end] with two fences and returns the ones left
// for Put (appended to later), in order.
func (t *Tree) putGroup(r *coro.Ring[putOp], gr *group, keys, vals []uint64, start, end int, later []int) ([]int, error) {
	n := end - start
	// A key the group has twice is put once by the group, then again by
	// Put, so that the last value wins.
	var dup [coro.MaxGroup]bool
	for i := 1; i < n; i++ {
		for j := range i {
			if keys[start+i] == keys[start+j] {
				dup[i] = true
				break
			}
		}
	}
	var err error
	staged := false // something of the group awaits the first fence
	committing := false
	defer func() {
		if !committing {
			t.unlockGroup(gr.leaves) // an error, or a fault (poisoned media) on the way
		}
	}()
	r.Reset(t.group, n)
	for r.Round() {
		for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
			if op >= 0 {
				if dup[op] {
					later = append(later, start+op)
					r.Done()
					continue
				}
				*s = putOp{k: keys[start+op], v: vals[start+op], i: start + op}
			}
			done, defer_, e := t.putStep(s, gr)
			if e != nil && err == nil {
				err = e
			}
			if defer_ {
				later = append(later, s.i)
			} else if done {
				staged = true
			}
			if done {
				r.Done()
			}
		}
	}
	if err == nil {
		committing = true // commitGroup unlocks
		err = t.commitGroup(gr, staged)
	}
	sortInts(later)
	return later, err
}

// putStep runs the next stage of s. It reports whether the insert is done
// (written, or left for later: deferred) and an error of persist.
func (t *Tree) putStep(s *putOp, gr *group) (done, deferred bool, err error) {
	switch s.stage {
	case stBegin:
		s.nd = t.root.Load()
		s.stage = stNode
		fallthrough
	case stNode:
		nd := s.nd
		c := nd.child(s.k)
		if !nd.bottom {
			s.nd = nd.kids[c]
			t.prefetchNode(s.nd)
			return false, false, nil
		}
		s.leaf = nd.leaves[c]
		asm.Prefetch(unsafe.Pointer(&t.meta[s.leaf]))
		asm.PrefetchLines(t.leaf(s.leaf), t.g.head)
		s.stage = stLeaf
		return false, false, nil
	case stLeaf:
		gl, ok, restart, err := t.holdLeaf(s, gr)
		if err != nil {
			return true, false, err
		}
		if restart {
			s.stage = stBegin
			return false, false, nil
		}
		if !ok {
			return true, true, nil // another goroutine holds the leaf
		}
		s.gl = gl
		l := &gr.leaves[gl]
		s.cand = t.g.candidates(l.p, fingerprint(s.k)) & l.bm
		if s.cand != 0 {
			asm.Prefetch(unsafe.Add(l.p, t.g.kv+16*bits.TrailingZeros64(s.cand)))
			s.stage = stKey
			return false, false, nil
		}
		return t.reserve(s, l)
	case stKey:
		l := &gr.leaves[s.gl]
		i := bits.TrailingZeros64(s.cand)
		if t.g.key(l.p, i) == s.k {
			// An update: the value stored in place by commitGroup,
			// durable at the group's first fence.
			gr.ups[gr.nup] = update{unsafe.Add(l.p, t.g.kv+16*i+8), s.v}
			gr.nup++
			return true, false, nil
		}
		s.cand &= s.cand - 1
		if s.cand != 0 {
			asm.Prefetch(unsafe.Add(l.p, t.g.kv+16*bits.TrailingZeros64(s.cand)))
			return false, false, nil
		}
		return t.reserve(s, l)
	default: // stWrite
		l := &gr.leaves[s.gl]
		return true, false, t.stage(l.p, s.slot, s.k, s.v)
	}
}

// reserve gives s a free slot of its leaf, not yet taken by the group, and
// prefetches the slot's line; a full leaf leaves s for Put (which splits).
func (t *Tree) reserve(s *putOp, l *groupLeaf) (done, deferred bool, err error) {
	free := ^(l.bm | l.reserved) & t.g.full
	if free == 0 {
		return true, true, nil
	}
	s.slot = bits.TrailingZeros64(free)
	l.reserved |= 1 << s.slot
	asm.Prefetch(unsafe.Add(l.p, t.g.kv+16*s.slot))
	s.stage = stWrite
	return false, false, nil
}

// holdLeaf returns the group's entry of s's leaf, locking the leaf when
// the group does not hold it yet: ok false when another goroutine holds
// it, restart when the leaf's range no longer holds the key (a root from
// before a split or free), ErrClosed when the tree was closed before the
// lock was taken.
func (t *Tree) holdLeaf(s *putOp, gr *group) (gl int, ok, restart bool, err error) {
	for j := range gr.leaves {
		if gr.leaves[j].leaf == s.leaf {
			if !gr.leaves[j].m.covers(s.k) {
				return 0, false, true, nil
			}
			return j, true, false, nil
		}
	}
	if t.holdHook != nil {
		t.holdHook()
	}
	m := &t.meta[s.leaf]
	if !m.tryLock() {
		return 0, false, false, nil
	}
	if t.closed.Load() {
		m.unlock()
		return 0, false, false, ErrClosed
	}
	if !m.covers(s.k) {
		m.unlock()
		return 0, false, true, nil
	}
	p := t.leaf(s.leaf)
	gr.leaves = append(gr.leaves, groupLeaf{leaf: s.leaf, m: m, p: p, bm: at(p, offBitmap)})
	return len(gr.leaves) - 1, true, false, nil
}

// commitGroup makes what the group staged (new slots, updated values)
// durable (fence 1), then commits the new slots: each leaf's bitmap stored
// once with its new bits, made durable together (fence 2). It unlocks the
// leaves.
func (t *Tree) commitGroup(gr *group, staged bool) error {
	gls := gr.leaves
	defer t.unlockGroup(gls)
	if !staged {
		return nil
	}
	for _, u := range gr.ups[:gr.nup] {
		w := unsafe.Slice((*byte)(u.p), 8)
		persist.Store64(w, u.v)
		if err := t.flush(w); err != nil {
			return err
		}
	}
	if t.variant != bitmapFirst {
		if err := t.r.Drain(); err != nil {
			return regionErr(err, "PutBatch")
		}
	}
	added := 0
	for i := range gls {
		l := &gls[i]
		if l.reserved == 0 {
			continue
		}
		w := word(l.p, offBitmap)
		persist.Store64(w, l.bm|l.reserved)
		if err := t.flush(w); err != nil {
			return err
		}
		added += bits.OnesCount64(l.reserved)
	}
	if added > 0 || t.variant == bitmapFirst {
		if err := t.r.Drain(); err != nil {
			return regionErr(err, "PutBatch")
		}
		t.count.Add(int64(added))
	}
	return nil
}

func (t *Tree) unlockGroup(gls []groupLeaf) {
	for i := range gls {
		gls[i].m.unlock()
	}
}

func (t *Tree) flush(b []byte) error {
	if err := t.r.Flush(b); err != nil {
		return regionErr(err, "PutBatch")
	}
	return nil
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
