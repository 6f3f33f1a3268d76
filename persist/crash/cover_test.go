package crash

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoverArrays checks the covering arrays by brute force: for every two
// columns (strength 2) or three (strength 3) every combination of values
// is in some row, in the number of rows coverRows says.
func TestCoverArrays(t *testing.T) {
	// cols[j] has bit r set when row r has a 1 in column j (rows < 64).
	cols := func(a *coverArray, n int) []uint64 {
		require.LessOrEqual(t, len(a.rows), 64)
		c := make([]uint64, n)
		for r := range a.rows {
			for j := 0; j < n; j++ {
				if a.bit(r, j) {
					c[j] |= 1 << r
				}
			}
		}
		return c
	}
	for n := 1; n <= 400; n++ {
		a := cover2(n)
		require.Len(t, a.rows, coverRows(2, n), "n=%d", n)
		c, all := cols(a, n), uint64(1)<<len(a.rows)-1
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				x, y := c[i], c[j]
				if x&y == 0 || x&^y == 0 || y&^x == 0 || all&^(x|y) == 0 {
					t.Fatalf("strength 2, n=%d: columns %d and %d miss a combination", n, i, j)
				}
			}
		}
	}
	for n := 1; n <= 90; n++ {
		a := cover3(n)
		require.Len(t, a.rows, coverRows(3, n), "n=%d", n)
		c, all := cols(a, n), uint64(1)<<len(a.rows)-1
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				for k := j + 1; k < n; k++ {
					for v := 0; v < 8; v++ {
						m := all
						for b, col := range [3]uint64{c[i], c[j], c[k]} {
							if v>>b&1 == 1 {
								m &= col
							} else {
								m &^= col
							}
						}
						if m == 0 {
							t.Fatalf("strength 3, n=%d: columns %d, %d, %d miss combination %03b", n, i, j, k, v)
						}
					}
				}
			}
		}
	}
	// The sizes the docs quote.
	for _, c := range []struct{ t, n, rows int }{{2, 10, 6}, {2, 56, 9}, {2, 462, 12}, {2, 1716, 14}, {3, 4, 8}, {3, 1024, 81}} {
		require.Equal(t, c.rows, coverRows(c.t, c.n), "strength %d, %d columns", c.t, c.n)
		require.Len(t, newCover(c.t, c.n).rows, c.rows)
	}
}

// TestTearMixes: the torn values between a and b, in memory byte order.
func TestTearMixes(t *testing.T) {
	le := func(bs ...byte) uint64 {
		var b [8]byte
		copy(b[:], bs)
		return binary.NativeEndian.Uint64(b[:])
	}
	a := le(0, 0, 0, 0, 0, 0, 0, 0)
	b := le(1, 2, 3, 4, 5, 6, 7, 8)
	require.Equal(t, []uint64{le(1, 2, 3, 4, 0, 0, 0, 0), le(0, 0, 0, 0, 5, 6, 7, 8)}, tearMixes(a, b, Tear4))
	// Only the low half changes: no torn value.
	require.Empty(t, tearMixes(a, le(9, 0, 0, 0, 0, 0, 0, 0), Tear4))
	require.Empty(t, tearMixes(a, le(9, 0, 0, 0, 0, 0, 0, 0), Tear1))
	// Bytes: every state of a loop up (first k new) and down (last k new).
	got := tearMixes(a, le(1, 0, 3, 0, 0, 0, 0, 8), Tear1)
	require.Equal(t, []uint64{
		le(1, 0, 0, 0, 0, 0, 0, 0), le(1, 0, 3, 0, 0, 0, 0, 0), // up
		le(0, 0, 0, 0, 0, 0, 0, 8), le(0, 0, 3, 0, 0, 0, 0, 8), // down
	}, got, "the halves are among the loop's states here")
	require.Len(t, tearMixes(a, b, Tear1), 14, "7 states up, 7 down, the halves among them")
}

// TestSampleFences: the rarest paths first, then seeded random fences;
// the same seed samples the same fences.
func TestSampleFences(t *testing.T) {
	common, rare := pathKey{1, 1}, pathKey{1, 2}
	keys := make([]pathKey, 1000)
	for i := range keys {
		keys[i] = common
	}
	keys[700] = rare // fence 701
	for seed := uint64(0); seed < 20; seed++ {
		s := sampleFences(keys, 10, seed)
		require.Len(t, s, 10)
		require.True(t, s[701], "seed %d: the path taken once", seed)
		require.Equal(t, s, sampleFences(keys, 10, seed))
	}
	require.NotEqual(t, sampleFences(keys, 10, 1), sampleFences(keys, 10, 2))
	require.Len(t, sampleFences(keys[:5], 10, 1), 5, "every fence when there are fewer")
}
