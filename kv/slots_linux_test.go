package kv

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
)

// TestSlotPool gives out and takes back blocks of every order in a random
// order: each block comes zeroed (a dirty one is cleared, a zeroed one is
// not written), no two live blocks overlap, buddies merge, and once all
// are back every chunk is unmapped.
func TestSlotPool(t *testing.T) {
	p := &slotPool{node: -1, chunks: map[uintptr]chunk{}}
	for i := range p.free {
		p.free[i] = map[uintptr]bool{}
	}
	rnd := structtest.NewRand(7)
	var live []*slotMem
	owner := map[uintptr]int{} // the live blocks' 1 KiB units -> index+1 in live
	check := func(m *slotMem, id int) {
		a := blockOf(m.mem)
		for u := uintptr(0); u < uintptr(len(m.mem)); u += 1 << 10 {
			if o := owner[a+u]; o != 0 && o != id {
				t.Fatalf("block %d overlaps block %d", id, o)
			}
			owner[a+u] = id
		}
	}
	for i := range 400 {
		if len(live) > 0 && rnd.Intn(3) == 0 {
			j := rnd.Intn(len(live))
			m := live[j]
			if rnd.Intn(2) == 0 {
				m.free() // dirty: the pool clears it when it gives it out again
			} else {
				clear(m.mem)
				m.freeZeroed()
			}
			live = append(live[:j], live[j+1:]...)
			continue
		}
		size := poolMin << rnd.Intn(poolOrders)
		if size == poolChunk {
			size = poolMin
		}
		m := p.get(size)
		require.NotNil(t, m)
		require.Len(t, m.mem, size)
		for _, b := range m.mem {
			if b != 0 {
				t.Fatalf("op %d: a block of %d bytes is not zeroed", i, size)
			}
		}
		for k := range m.mem {
			m.mem[k] = byte(i) | 1
		}
		live = append(live, m)
		clear(owner)
		for j, lm := range live {
			check(lm, j+1)
		}
	}
	require.NotEmpty(t, p.chunks)
	for _, m := range live {
		m.free()
	}
	require.Empty(t, p.chunks, "every chunk unmapped once all its blocks are back")
	for k := range p.free {
		require.Empty(t, p.free[k], "order %d", k)
	}
}
