package fptree

import "fmt"

// Check verifies the tree: every leaf of the chain as Open does (numbers
// inside the area, no loop, bitmaps within the slots, lower bounds
// ascending, every key inside its leaf's range with a matching
// fingerprint) and no key twice in a leaf; no micro log left set; and that
// the DRAM state agrees with the media: the inner nodes (sorted, of one
// height, each node's bound its parent's key) list exactly the chain's
// leaves with their bounds, every leaf is either in the chain or free and
// none both (no orphan), and Len is the number of keys. Damage is an error
// wrapping ErrCorrupt. Check must not run concurrently with Put, Delete
// or PutBatch (readers may run).
func (t *Tree) Check() error { return guard(t.r, t.check) }

func (t *Tree) check() error {
	if err := t.readable(); err != nil {
		return err
	}
	t.smu.Lock()
	defer t.smu.Unlock()
	sw, fw, err := t.logs()
	if err != nil {
		return err
	}
	if sw != 0 || fw != 0 {
		return fmt.Errorf("%w: a micro log is set (split %#x, free %#x) while no split or free runs", ErrCorrupt, sw, fw)
	}
	c, err := t.walk(false, true)
	if err != nil {
		return err
	}
	if len(c.lost) > 0 {
		return c.lost[0].err // poisoned media: what Open lost, or what went bad since
	}
	if err := t.checkNodes(c); err != nil {
		return err
	}
	if err := t.checkLeaves(c); err != nil {
		return err
	}
	if err := t.checkLinks(c); err != nil {
		return err
	}
	if n := t.count.Load(); n != int64(c.keys) {
		return fmt.Errorf("%w: Len is %d, the leaves hold %d keys", ErrCorrupt, n, c.keys)
	}
	return nil
}

// checkNodes checks the inner nodes against the chain.
func (t *Tree) checkNodes(c chain) error {
	var los []uint64
	var leaves []uint32
	root := t.root.Load()
	if root.keys[0] != 0 {
		return fmt.Errorf("%w: the inner root's lower bound is %d, want 0", ErrCorrupt, root.keys[0])
	}
	var walk func(nd *node, depth int) error
	h := root.height()
	walk = func(nd *node, depth int) error {
		if nd.n < 1 || nd.n > t.fan {
			return fmt.Errorf("%w: an inner node has %d entries, want 1 to %d", ErrCorrupt, nd.n, t.fan)
		}
		if nd.bottom != (depth == h) {
			return fmt.Errorf("%w: the inner nodes are not all of height %d", ErrCorrupt, h)
		}
		for i := 1; i < nd.n; i++ {
			if nd.keys[i] <= nd.keys[i-1] {
				return fmt.Errorf("%w: an inner node's keys %d and %d are not ascending", ErrCorrupt, nd.keys[i-1], nd.keys[i])
			}
		}
		for i := range nd.n {
			if nd.bottom {
				los = append(los, nd.keys[i])
				leaves = append(leaves, nd.leaves[i])
				continue
			}
			if k := nd.kids[i]; k.keys[0] != nd.keys[i] {
				return fmt.Errorf("%w: an inner node's key %d is not its child's lower bound %d", ErrCorrupt, nd.keys[i], k.keys[0])
			} else if err := walk(k, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 1); err != nil {
		return err
	}
	if len(leaves) != len(c.leaves) {
		return fmt.Errorf("%w: the inner nodes list %d leaves, the chain has %d", ErrCorrupt, len(leaves), len(c.leaves))
	}
	for j := range leaves {
		if leaves[j] != c.leaves[j] || los[j] != c.los[j] {
			return fmt.Errorf("%w: entry %d of the inner nodes is leaf %d from key %d, the chain's is leaf %d from key %d",
				ErrCorrupt, j, leaves[j], los[j], c.leaves[j], c.los[j])
		}
	}
	return nil
}

// checkLeaves checks the ranges and the allocator against the chain.
func (t *Tree) checkLeaves(c chain) error {
	for j, l := range c.leaves {
		hi := ^uint64(0)
		if j+1 < len(c.leaves) {
			hi = c.los[j+1] - 1
		}
		if m := &t.meta[l]; m.lo.Load() != c.los[j] || m.hi.Load() != hi {
			return fmt.Errorf("%w: leaf %d's range in DRAM is %d..%d, the chain says %d..%d", ErrCorrupt, l, m.lo.Load(), m.hi.Load(), c.los[j], hi)
		}
	}
	if t.hwm < c.hwm {
		return fmt.Errorf("%w: leaf %d is in the chain but the allocator never gave it out (it gave %d)", ErrCorrupt, c.hwm-1, t.hwm)
	}
	free := make([]bool, t.hwm)
	for _, l := range t.free {
		switch {
		case l >= t.hwm:
			return fmt.Errorf("%w: free leaf %d was never given out (the allocator gave %d)", ErrCorrupt, l, t.hwm)
		case free[l]:
			return fmt.Errorf("%w: leaf %d is free twice", ErrCorrupt, l)
		case c.inUse[l/64]&(1<<(l%64)) != 0:
			return fmt.Errorf("%w: leaf %d is free and in the chain", ErrCorrupt, l)
		}
		free[l] = true
		if m := &t.meta[l]; m.lo.Load() <= m.hi.Load() {
			return fmt.Errorf("%w: free leaf %d has the range %d..%d", ErrCorrupt, l, m.lo.Load(), m.hi.Load())
		}
	}
	if len(t.free)+len(c.leaves) != int(t.hwm) {
		return fmt.Errorf("%w: %d leaves given out, %d in the chain and %d free: %d orphans", ErrCorrupt,
			t.hwm, len(c.leaves), len(t.free), int(t.hwm)-len(c.leaves)-len(t.free))
	}
	return nil
}

// checkLinks checks the back links (layout.go): each leaf of the chain
// names its predecessor, linked (the head none). In a read-only region a
// crash may have left a link that only a writable Open repairs, so there
// the links are not checked. The leaves outside the chain are not checked:
// one never given out holds whatever the area held before Create.
func (t *Tree) checkLinks(c chain) error {
	if t.ro {
		return nil
	}
	return c.badLink
}
