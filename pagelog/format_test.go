package pagelog_test

import (
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/pagelog"
)

// crc16Ref is the sealed words' CRC computed bit by bit: the 48-bit data,
// most significant bit first, through x^16+x^13+x^12+x^11+x^10+x^8+x^6+
// x^5+x^2+1 (0x3d65), initial value 0, no final XOR.
func crc16Ref(d uint64) uint16 {
	var c uint16
	for i := 47; i >= 0; i-- {
		top := c>>15 ^ uint16(d>>uint(i))&1
		c <<= 1
		if top != 0 {
			c ^= 0x3d65
		}
	}
	return c
}

func TestCRC16(t *testing.T) {
	rng := structtest.NewRand(5<<32 | 6)
	require.Zero(t, pagelog.CRC16(0))
	for range 10000 {
		d := rng.Uint64() >> 16
		require.Equal(t, crc16Ref(d), pagelog.CRC16(d), "%#x", d)
		w := pagelog.Seal(d)
		got, ok := pagelog.Unseal(w)
		require.True(t, ok)
		require.Equal(t, d, got)
	}
}

// syndrome is what a damage pattern e does to any sealed word's check: the
// code is linear, so Unseal(w^e) fails for every valid w exactly when the
// syndrome of e is not zero.
func syndrome(e uint64) uint16 { return uint16(e) ^ pagelog.CRC16(e>>16) }

// TestSealDetects proves the claims of format.go about sealed words by
// enumeration: every damage of 1 to 5 bits, and every burst of up to 16
// bits (so every damage confined to one byte or two adjacent bytes), has a
// nonzero syndrome, and so fails the check whatever word it hits.
func TestSealDetects(t *testing.T) {
	// Linearity, which the enumeration relies on.
	rng := structtest.NewRand(7<<32 | 8)
	for range 1000 {
		w, e := pagelog.Seal(rng.Uint64()>>16), rng.Uint64()
		_, ok := pagelog.Unseal(w ^ e)
		require.Equal(t, syndrome(e) == 0, ok)
	}

	var s [64]uint16
	for i := range s {
		s[i] = syndrome(1 << i)
		require.NotZero(t, s[i], "1-bit damage at bit %d", i)
	}
	pairs := map[uint16][2]int{} // syndrome of a 2-bit damage -> its bits
	for i := range 64 {
		for j := i + 1; j < 64; j++ {
			x := s[i] ^ s[j]
			require.NotZero(t, x, "2-bit damage at bits %d, %d", i, j)
			if p, ok := pairs[x]; ok {
				// Two disjoint pairs with equal syndromes would be a 4-bit
				// codeword; sharing a bit, a 2-bit one (excluded above).
				require.False(t, p[0] != i && p[0] != j && p[1] != i && p[1] != j, "4-bit damage %v, %d, %d", p, i, j)
			}
			pairs[x] = [2]int{i, j}
		}
	}
	for k := range 64 {
		if p, ok := pairs[s[k]]; ok {
			require.True(t, p[0] == k || p[1] == k, "3-bit damage %v, %d", p, k)
		}
	}
	// 5 bits: a triple whose syndrome equals a disjoint pair's.
	for i := range 64 {
		for j := i + 1; j < 64; j++ {
			for k := j + 1; k < 64; k++ {
				if p, ok := pairs[s[i]^s[j]^s[k]]; ok {
					for _, b := range p {
						require.True(t, b == i || b == j || b == k, "5-bit damage %d, %d, %d, %v", i, j, k, p)
					}
				}
			}
		}
	}
	// Bursts: damage whose first and last changed bits are at most 15
	// apart.
	for start := range 64 {
		for n := 1; n <= 16 && start+n <= 64; n++ {
			ends := uint64(1)<<start | uint64(1)<<(start+n-1)
			inner := n - 2
			if inner < 0 {
				inner = 0
			}
			for mid := uint64(0); mid < 1<<inner; mid++ {
				e := ends | mid<<(start+1)
				if syndrome(e) == 0 {
					t.Fatalf("burst %#016x passes the check", e)
				}
			}
		}
	}
}
