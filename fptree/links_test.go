package fptree

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// linkTree builds a closed tree of 4-slot leaves holding keys 0..n-1 in a
// region of its own and returns the region, the chain's leaves in order,
// and the keys.
func linkTree(t *testing.T, n int) (*persist.Region, []uint32) {
	t.Helper()
	r := structtest.Region(t, 1<<20)
	tr, err := Create(r, &Options{LeafSlots: 4})
	require.NoError(t, err)
	rnd := structtest.NewRand(7)
	perm := make([]int, n)
	for i := range perm {
		j := rnd.Intn(i + 1)
		perm[i], perm[j] = perm[j], i
	}
	for _, i := range perm {
		require.NoError(t, tr.Put(uint64(i), uint64(i)*3))
	}
	var chain []uint32
	for l := uint32(0); ; {
		chain = append(chain, l)
		if l = uint32(at(tr.leaf(l), offNext)); l == 0 {
			break
		}
	}
	require.NoError(t, tr.Close())
	return r, chain
}

// openAll opens r and reads every key of 0..n-1: nil when Open succeeded
// and every key reads its value, else what went wrong. A failed Open
// must wrap ErrCorrupt.
func openAll(r *persist.Region, n int) (opened bool, err error) {
	tr, err := Open(r, nil)
	if err != nil {
		return false, err
	}
	defer tr.Close()
	for i := range n {
		v, ok, err := tr.Get(uint64(i))
		if err != nil {
			return true, err
		}
		if !ok || v != uint64(i)*3 {
			return true, fmt.Errorf("key %d: %d, %v: lost silently", i, v, ok)
		}
	}
	if tr.Len() != n {
		return true, fmt.Errorf("Len %d, want %d", tr.Len(), n)
	}
	return true, tr.Check()
}

// TestDamagedNextIsCorrupt (issue 24 item 7): a leaf's next pointed past
// its successor, set to 0, or with a bit flipped makes the skipped leaves
// unreachable. Open cross-checks the back links and the leaves given out
// (the mark in the log line) and refuses the tree with ErrCorrupt naming
// every unreachable leaf; it never opens it without their keys.
func TestDamagedNextIsCorrupt(t *testing.T) {
	const n = 400
	r, chain := linkTree(t, n)
	mem := r.Bytes()
	clean := bytes.Clone(mem)
	leafOff := func(l uint32) int { return leavesOff + int(l)*geometry(4).stride }
	setNext := func(l uint32, v uint64) { putU64(mem[leafOff(l)+offNext:], v) }
	require.Greater(t, len(chain), 50)

	t.Run("skip-one", func(t *testing.T) {
		for _, j := range []int{0, 1, len(chain) / 2, len(chain) - 3} {
			copy(mem, clean)
			setNext(chain[j], uint64(chain[j+2]))
			_, err := openAll(r, n)
			require.ErrorIs(t, err, ErrCorrupt, "leaf %d's next skips leaf %d", chain[j], chain[j+1])
			require.ErrorIs(t, err, persist.ErrCorrupt)
			require.Contains(t, err.Error(), fmt.Sprintf("leaf %d", chain[j+1]), "the error names the skipped leaf")
		}
	})
	t.Run("zero", func(t *testing.T) {
		for _, j := range []int{0, 3, len(chain) / 2, len(chain) - 2} {
			copy(mem, clean)
			setNext(chain[j], 0)
			_, err := openAll(r, n)
			require.ErrorIs(t, err, ErrCorrupt, "leaf %d's next set to 0", chain[j])
			require.Contains(t, err.Error(), fmt.Sprintf("%d unreachable", len(chain)-j-1), "every leaf after it is reported")
		}
	})
	t.Run("flips", func(t *testing.T) {
		rnd := structtest.NewRand(3)
		refused := 0
		for i := range 300 {
			copy(mem, clean)
			l := chain[rnd.Intn(len(chain))]
			mem[leafOff(l)+offNext+rnd.Intn(8)] ^= 1 << rnd.Intn(8)
			opened, err := openAll(r, n)
			if opened {
				require.NoError(t, err, "flip %d in leaf %d's next: opened with damage", i, l)
				continue
			}
			require.ErrorIs(t, err, ErrCorrupt, "flip %d in leaf %d's next", i, l)
			refused++
		}
		require.Equal(t, 300, refused, "every flip of a next word is found")
	})
	copy(mem, clean)
	_, err := openAll(r, n)
	require.NoError(t, err)
}

// TestDamagedBackLinkIsCorrupt: a back link that contradicts the chain,
// which no crash leaves behind, is ErrCorrupt (before the cross-check,
// Open rewrote it from the chain).
func TestDamagedBackLinkIsCorrupt(t *testing.T) {
	const n = 200
	r, chain := linkTree(t, n)
	mem := r.Bytes()
	off := leavesOff + int(chain[5])*geometry(4).stride + offPrev
	putU64(mem[off:], linkedTo(chain[7]))
	_, err := openAll(r, n)
	require.ErrorIs(t, err, ErrCorrupt)
	putU64(mem[off:], linkedTo(chain[4]))
	_, err = openAll(r, n)
	require.NoError(t, err)
}
