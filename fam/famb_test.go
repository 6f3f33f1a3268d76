package fam

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLayout(t *testing.T) {
	for _, c := range []struct{ size, blocks, stride int }{
		{4, 2, 64}, {8, 3, 64}, {16, 5, 64}, {28, 8, 64}, {32, 9, 128},
		{64, 17, 192}, {124, 32, 256}, {128, 34, 320}, {256, 67, 576}, {1024, 265, 2176},
	} {
		require.Equal(t, c.blocks, blocks(c.size), "size %d", c.size)
		require.Equal(t, c.stride, stride(c.size), "size %d", c.size)
	}
}

// A golden 16-byte update: the FAMB bit layout (version 63..62, old
// 61..31, new 30..0; bit 31 of each word in the fifth, meta, FAMB).
func TestUpdate16Golden(t *testing.T) {
	var ws [5]uint64
	v1 := le(0x80000001, 0x7fffffff, 0, 0xffffffff)
	require.True(t, update(ws[:], v1))
	require.Equal(t, [5]uint64{
		1<<62 | 0x00000001,
		1<<62 | 0x7fffffff,
		1 << 62,
		1<<62 | 0x7fffffff,
		1<<62 | 0b1001,
	}, ws)
	v2 := le(2, 0x80000000, 5, 7)
	require.True(t, update16(&ws, 2, 0x80000000, 5, 7))
	require.Equal(t, [5]uint64{
		2<<62 | 0x00000001<<31 | 2,
		//lint:ignore SA4016 spelled out as version | old | new, with new = 0
		2<<62 | 0x7fffffff<<31 | 0,
		2<<62 | 0<<31 | 5,
		2<<62 | 0x7fffffff<<31 | 7,
		2<<62 | 0b1001<<31 | 0b0010,
	}, ws)
	got := make([]byte, 16)
	decode(ws[:], got)
	require.Equal(t, v2, got)

	// Versions wrap: 3 + 1 = 0.
	for range 2 {
		require.True(t, update(ws[:], v1))
	}
	require.Equal(t, uint64(0), ws[0]>>62)
	decode(ws[:], got)
	require.Equal(t, v1, got)
}

func le(ws ...uint32) []byte {
	b := make([]byte, 0, 4*len(ws))
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// The generic path, the 8- and 16-byte paths and decode agree for sizes
// around the group boundary (31 data FAMBs per meta FAMB).
func TestUpdateDecodeSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{4, 8, 12, 16, 20, 32, 64, 120, 124, 128, 132, 244, 248, 252, 256, 1020, 1024} {
		ws := make([]uint64, blocks(size))
		prev := make([]byte, size)
		for round := range 9 {
			val := make([]byte, size)
			for i := range val {
				val[i] = byte(rng.Uint32())
			}
			if round == 0 {
				for i := range val {
					val[i] = 0xff
				}
			}
			switch {
			case size == 16 && round%2 == 1:
				require.True(t, update16((*[5]uint64)(ws), le32(val), le32(val[4:]), le32(val[8:]), le32(val[12:])))
			case size == 8 && round%2 == 1:
				require.True(t, update8((*[3]uint64)(ws), le32(val), le32(val[4:])))
			default:
				require.True(t, update(ws, val))
			}
			got := make([]byte, size)
			decode(ws, got)
			require.Equal(t, val, got, "size %d round %d", size, round)
			require.True(t, single(versionsOf(ws)))
			require.Equal(t, uint64(round+1)&3, ws[0]>>62)
			// The old fields hold the previous value.
			old := make([]uint64, len(ws))
			for i, w := range ws {
				old[i] = w >> 31 & valMask
			}
			decode(old, got)
			require.Equal(t, prev, got, "size %d round %d: old fields", size, round)
			prev = val
		}
	}
}

func TestUpdateRefusesMixedVersions(t *testing.T) {
	ws := []uint64{1 << 62, 0, 0, 0, 0}
	before := append([]uint64(nil), ws...)
	require.False(t, update(ws, make([]byte, 16)))
	require.False(t, update16((*[5]uint64)(ws), 0, 0, 0, 0))
	require.Equal(t, before, ws, "nothing stored")
	ws3 := []uint64{0, 0, 2 << 62}
	require.False(t, update8((*[3]uint64)(ws3), 1, 1))
}

// Every way a crash can tear one update rolls back to the old value, and a
// second rollback (a crash during recovery) changes nothing more.
func TestRollbackEverySubset(t *testing.T) {
	for _, size := range []int{8, 16, 32} {
		nb := blocks(size)
		for _, start := range []int{0, 1, 2, 3} {
			oldv := make([]byte, size)
			newv := make([]byte, size)
			for i := range oldv {
				oldv[i] = byte(0x91 * (i + 1))
				newv[i] = ^byte(0x37 * (i + 3))
			}
			before := make([]uint64, nb)
			for range start + 4 - 1 { // bring versions to start-1 then start
				require.True(t, update(before, newv))
			}
			require.True(t, update(before, oldv))
			after := append([]uint64(nil), before...)
			require.True(t, update(after, newv))
			for mask := 0; mask < 1<<nb; mask++ {
				ws := make([]uint64, nb)
				for i := range ws {
					ws[i] = before[i]
					if mask&(1<<i) != 0 {
						ws[i] = after[i]
					}
				}
				rolled, ok := rollback(ws)
				require.True(t, ok)
				got := make([]byte, size)
				decode(ws, got)
				if mask == 1<<nb-1 {
					require.False(t, rolled)
					require.Equal(t, newv, got)
					continue
				}
				require.Equal(t, mask != 0, rolled, "mask %b", mask)
				require.Equal(t, oldv, got, "size %d mask %b", size, mask)
				require.True(t, single(versionsOf(ws)))
				again := append([]uint64(nil), ws...)
				rolled, ok = rollback(again)
				require.True(t, ok)
				require.False(t, rolled)
				require.Equal(t, ws, again)
				// The next update after recovery works from the old value.
				require.True(t, update(ws, newv))
				decode(ws, got)
				require.Equal(t, newv, got)
			}
		}
	}
}

func TestRollbackImpossible(t *testing.T) {
	for _, vs := range [][]uint64{{0, 2}, {1, 3}, {0, 1, 2}, {0, 1, 2, 3}, {3, 1}} {
		ws := make([]uint64, len(vs))
		for i, v := range vs {
			ws[i] = v<<62 | 12345
		}
		before := append([]uint64(nil), ws...)
		_, ok := rollback(ws)
		require.False(t, ok, "%v", vs)
		require.Equal(t, before, ws, "nothing stored")
	}
	for _, c := range []struct {
		vs    []uint64
		ahead uint64
	}{{[]uint64{0, 1}, 1}, {[]uint64{2, 1}, 2}, {[]uint64{2, 3, 3}, 3}, {[]uint64{3, 0}, 0}} {
		var m uint
		for _, v := range c.vs {
			m |= 1 << v
		}
		a, ok := aheadOf(m)
		require.True(t, ok)
		require.Equal(t, c.ahead, a)
	}
}
