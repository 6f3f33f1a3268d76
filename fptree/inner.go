package fptree

// The inner nodes live in DRAM and are rebuilt from the leaf chain by Open.
// They are copy-on-write: a node, once published, is never changed. A
// split or a leaf free builds new copies of the nodes on the path from
// the root and publishes the new root with one atomic store, so a lookup
// runs on whichever root it loaded, without locks, and the garbage
// collector frees the old path when no lookup holds it. The nodes are
// sorted arrays searched by binary search, of defaultFanout entries
// (chosen by BenchmarkSweep: see the README).

// nodeCap is the entries a node can hold: one more than the largest
// fan-out, so that an insert can overflow a full node before it splits.
const nodeCap = maxFanout + 1

const (
	maxFanout = 64
	minFanout = 4
	// defaultFanout is the fan-out of inner nodes (BenchmarkSweep: 64
	// beat 8, 16 and 32 on Get, GetBatch and Scan at 64-slot leaves).
	defaultFanout = 64
)

// node is an inner node. Child i covers the keys from keys[i] up to
// keys[i+1] (exclusive; the node's upper bound for the last child);
// keys[0] is the node's own lower bound. A bottom node's children are
// leaves, an upper node's are nodes.
type node struct {
	n      int
	bottom bool
	keys   [nodeCap]uint64
	kids   [nodeCap]*node
	leaves [nodeCap]uint32
}

// child returns the entry whose range holds k: the last i with
// keys[i] <= k (keys[0] <= k for every k the node covers).
func (nd *node) child(k uint64) int {
	lo, hi := 0, nd.n
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if nd.keys[mid] <= k {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// leafOf returns the leaf whose range holds k.
func (nd *node) leafOf(k uint64) uint32 {
	for !nd.bottom {
		nd = nd.kids[nd.child(k)]
	}
	return nd.leaves[nd.child(k)]
}

// build returns the root of nodes over the leaves in key order, each
// with its lower bound (los[0] is 0), packed fan entries to a node.
func build(los []uint64, leaves []uint32, fan int) *node {
	var level []*node
	for i := 0; i < len(leaves); i += fan {
		nd := &node{bottom: true, n: min(fan, len(leaves)-i)}
		copy(nd.keys[:], los[i:i+nd.n])
		copy(nd.leaves[:], leaves[i:i+nd.n])
		level = append(level, nd)
	}
	for len(level) > 1 {
		var up []*node
		for i := 0; i < len(level); i += fan {
			nd := &node{n: min(fan, len(level)-i)}
			for j := range nd.n {
				nd.kids[j] = level[i+j]
				nd.keys[j] = level[i+j].keys[0]
			}
			up = append(up, nd)
		}
		level = up
	}
	return level[0]
}

// withLeaf returns a new root with leaf added at lower bound sep, just
// after the leaf whose range held sep (the leaf that split).
func withLeaf(root *node, sep uint64, leaf uint32, fan int) *node {
	l, r := insertAt(root, sep, leaf, fan)
	if r == nil {
		return l
	}
	nr := &node{n: 2}
	nr.keys[0], nr.kids[0] = l.keys[0], l
	nr.keys[1], nr.kids[1] = r.keys[0], r
	return nr
}

// insertAt returns the copy of nd with (sep, leaf) inserted, and the
// right half when the copy had to split.
func insertAt(nd *node, sep uint64, leaf uint32, fan int) (*node, *node) {
	i := nd.child(sep)
	c := new(node)
	*c = *nd
	if nd.bottom {
		c.open(i + 1)
		c.keys[i+1], c.leaves[i+1] = sep, leaf
	} else {
		l, r := insertAt(nd.kids[i], sep, leaf, fan)
		c.kids[i] = l
		if r != nil {
			c.open(i + 1)
			c.keys[i+1], c.kids[i+1] = r.keys[0], r
		}
	}
	if c.n <= fan {
		return c, nil
	}
	r := &node{bottom: c.bottom, n: c.n / 2}
	h := c.n - r.n
	copy(r.keys[:], c.keys[h:c.n])
	copy(r.kids[:], c.kids[h:c.n])
	copy(r.leaves[:], c.leaves[h:c.n])
	clear(c.kids[h:c.n])
	c.n = h
	return c, r
}

// open shifts the entries from i one place right.
func (nd *node) open(i int) {
	copy(nd.keys[i+1:nd.n+1], nd.keys[i:nd.n])
	copy(nd.kids[i+1:nd.n+1], nd.kids[i:nd.n])
	copy(nd.leaves[i+1:nd.n+1], nd.leaves[i:nd.n])
	nd.n++
}

// shut removes entry i.
func (nd *node) shut(i int) {
	copy(nd.keys[i:], nd.keys[i+1:nd.n])
	copy(nd.kids[i:], nd.kids[i+1:nd.n])
	copy(nd.leaves[i:], nd.leaves[i+1:nd.n])
	nd.n--
	nd.kids[nd.n] = nil
}

// withoutLeaf returns a new root without leaf, whose lower bound is lo
// (never leaf 0, which holds key 0 for good), and false when the nodes
// do not have leaf at lo (an inconsistency the caller reports).
func withoutLeaf(root *node, lo uint64, leaf uint32) (*node, bool) {
	c, ok := removeAt(root, lo, leaf)
	if !ok {
		return root, false
	}
	for !c.bottom && c.n == 1 {
		c = c.kids[0]
	}
	return c, true
}

func removeAt(nd *node, lo uint64, leaf uint32) (*node, bool) {
	i := nd.child(lo)
	c := new(node)
	*c = *nd
	if nd.bottom {
		if nd.leaves[i] != leaf || nd.keys[i] != lo {
			return nil, false
		}
		c.shut(i)
		return c, true
	}
	k, ok := removeAt(nd.kids[i], lo, leaf)
	if !ok {
		return nil, false
	}
	if k.n == 0 {
		c.shut(i)
	} else {
		c.kids[i], c.keys[i] = k, k.keys[0]
	}
	return c, true
}

// height returns the levels of nodes under and including nd.
func (nd *node) height() int {
	h := 1
	for !nd.bottom {
		nd = nd.kids[0]
		h++
	}
	return h
}
