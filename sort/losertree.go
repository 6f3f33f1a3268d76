package sort

// loserTree selects the run with the smallest head ([Knuth 5.4.1]): one
// comparison per level to replace the winner. Heads are compared by a
// 16-byte prefix held in keys (an exhausted run has all ones there and
// done set); deep, if set, breaks ties between live runs.
type loserTree struct {
	tree []int32
	keys []w2
	done []bool
	k    int
	deep func(a, b int) bool
	// fast: keys are whole (no deep), equal keys may come out in any
	// order, and no live key is all ones — so the exhausted runs' keys
	// sort last by themselves and a comparison is two integer compares.
	fast bool
}

// replayFast is replay for fast trees.
func (t *loserTree) replayFast() {
	s := t.tree[0]
	ks := t.keys[s]
	for p := (int(s) + t.k) / 2; p > 0; p /= 2 {
		o := t.tree[p]
		ko := t.keys[o]
		if ko.hi < ks.hi || (ko.hi == ks.hi && ko.lo < ks.lo) {
			t.tree[p], s, ks = s, o, ko
		}
	}
	t.tree[0] = s
}

func newLoserTree(k int) *loserTree {
	return &loserTree{tree: make([]int32, max(k, 1)), keys: make([]w2, k), done: make([]bool, k), k: k}
}

func (t *loserTree) less(a, b int32) bool {
	x, y := t.keys[a], t.keys[b]
	if x.hi != y.hi {
		return x.hi < y.hi
	}
	if x.lo != y.lo {
		return x.lo < y.lo
	}
	if da, db := t.done[a], t.done[b]; da || db {
		return !da && db
	}
	return t.deep != nil && t.deep(int(a), int(b))
}

// init builds the tree once every run's head is set.
func (t *loserTree) init() {
	if t.k == 1 {
		t.tree[0] = 0
		return
	}
	t.tree[0] = t.build(1)
}

func (t *loserTree) build(node int) int32 {
	if node >= t.k {
		return int32(node - t.k)
	}
	a, b := t.build(2*node), t.build(2*node+1)
	if t.less(b, a) {
		t.tree[node] = a
		return b
	}
	t.tree[node] = b
	return a
}

func (t *loserTree) winner() int { return int(t.tree[0]) }

// finish marks run i exhausted.
func (t *loserTree) finish(i int) {
	t.done[i] = true
	t.keys[i] = w2{^uint64(0), ^uint64(0)}
}

// replay restores the tree after the winner's head changed.
func (t *loserTree) replay() {
	if t.fast {
		t.replayFast()
		return
	}
	s := t.tree[0]
	for p := (int(s) + t.k) / 2; p > 0; p /= 2 {
		if t.less(t.tree[p], s) {
			t.tree[p], s = s, t.tree[p]
		}
	}
	t.tree[0] = s
}
