package fptree

import (
	"math/bits"
	"slices"
)

// Iterator walks the keys of a range in ascending order:
//
//	it := t.Iter(from, to)
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Err(); err != nil { ... }
//
// It reads one leaf at a time, each as it was at one instant (a
// consistent copy under the leaf's version), so with concurrent writers
// it sees every key that was present throughout the walk and none that
// was absent throughout, in ascending order, but not one snapshot of the
// whole range. An Iterator is not safe for concurrent use.
type Iterator struct {
	t     *Tree
	cur   uint64 // the lowest key not yet looked for
	to    uint64
	done  bool
	buf   []pair
	pos   int
	k, v  uint64
	err   error
	from  uint64 // where the range starts
	empty bool   // the range is empty (from > to)
}

type pair struct{ k, v uint64 }

// Iter returns an iterator over the keys from from to to, both included
// (Iter(0, math.MaxUint64) is the whole tree). from > to is an empty
// range.
func (t *Tree) Iter(from, to uint64) *Iterator {
	return &Iterator{t: t, cur: from, to: to, from: from, done: from > to, empty: from > to, buf: make([]pair, 0, MaxLeafSlots)}
}

// Next advances to the next key and reports whether there is one; false
// at the end of the range or on an error (Err).
//
// A leaf on poisoned media ends the walk with its *persist.MediaError
// (the keys before it were returned); so do keys Open lost (Lost): the
// walk ends where they start, or at the end of a range that reaches the
// keys a cut chain lost.
func (it *Iterator) Next() bool {
	for it.pos >= len(it.buf) {
		if it.err != nil {
			return false
		}
		if it.done {
			if !it.empty {
				it.err = it.t.lostIn(it.from, it.to)
			}
			return false
		}
		if it.err = it.t.lostKey(it.cur); it.err != nil {
			return false
		}
		if it.err = it.t.readable(); it.err != nil {
			return false
		}
		if it.err = guard(it.t.r, func() error { it.fill(); return nil }); it.err != nil {
			return false
		}
	}
	e := it.buf[it.pos]
	it.pos++
	it.k, it.v = e.k, e.v
	return true
}

// Key returns the key Next moved to.
func (it *Iterator) Key() uint64 { return it.k }

// Value returns the value of Key.
func (it *Iterator) Value() uint64 { return it.v }

// Err returns the error that ended the walk: nil at the end of the range,
// ErrClosed when the tree was closed.
func (it *Iterator) Err() error { return it.err }

// fill copies the keys from it.cur up to it.to of the leaf whose range
// holds it.cur, sorted, and moves it.cur past that leaf.
func (it *Iterator) fill() {
	t := it.t
	for {
		l := t.root.Load().leafOf(it.cur)
		m := &t.meta[l]
		ver := m.stable()
		lo, hi := m.lo.Load(), m.hi.Load()
		if it.cur < lo || it.cur > hi {
			continue
		}
		it.buf = it.buf[:0]
		p := t.leaf(l)
		for b := at(p, offBitmap) & t.g.full; b != 0; b &= b - 1 {
			i := bits.TrailingZeros64(b)
			if k := t.g.key(p, i); k >= it.cur && k <= it.to {
				it.buf = append(it.buf, pair{k, t.g.val(p, i)})
			}
		}
		if m.ver.Load() != ver {
			continue
		}
		slices.SortFunc(it.buf, func(a, b pair) int {
			switch {
			case a.k < b.k:
				return -1
			case a.k > b.k:
				return 1
			}
			return 0
		})
		it.pos = 0
		if hi >= it.to {
			it.done = true
		} else {
			it.cur = hi + 1
		}
		return
	}
}

// Scan calls fn with each key from from to to (both included) and its
// value, in ascending order, until fn returns false. It reads like an
// Iterator; the error is ErrClosed when the tree is closed.
func (t *Tree) Scan(from, to uint64, fn func(k, v uint64) bool) error {
	it := t.Iter(from, to)
	for it.Next() {
		if !fn(it.Key(), it.Value()) {
			return nil
		}
	}
	return it.Err()
}
