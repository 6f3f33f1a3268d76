package cow

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// A zeroed slot is not a valid checksummed object: Create writes the check
// of zeros under count 0, which is never 0 itself.
func TestZeroChecks(t *testing.T) {
	var zeros [MaxSize]byte
	for n := 1; n <= MaxSize; n++ {
		require.NotZero(t, check(0, zeros[:n]), "size %d", n)
	}
}

// TestBitFlips flips every bit of every slot, one at a time, and records
// what Read returns: the contract in doc.go, bit by bit. Without checksums
// a flip in the active copy is returned as data, and one of the selector's
// lowest bit returns the other copy; with them every flip that changes
// what Read would return is ErrCorrupt.
func TestBitFlips(t *testing.T) {
	for _, sum := range []bool{false, true} {
		for _, size := range []int{5, 16, 40, 64, 200} {
			t.Run(fmt.Sprintf("%d/checksum=%v", size, sum), func(t *testing.T) {
				testBitFlips(t, size, sum)
			})
		}
	}
}

func testBitFlips(t *testing.T, size int, sum bool) {
	r, err := persist.Anonymous(1<<16, nil)
	require.NoError(t, err)
	defer r.Close()
	const n = 3
	a, err := Create(r, &Options{ObjectSize: size, Count: n, Checksum: sum})
	require.NoError(t, err)
	val := func(i, k int) []byte { return bytes.Repeat([]byte{byte(16*i + k)}, size) }
	// Objects 0 and 1 updated twice (selector 2, even), object 2 three
	// times (selector 3, odd).
	updates := []int{2, 2, 3}
	for i, u := range updates {
		for k := 1; k <= u; k++ {
			require.NoError(t, a.Update(i, val(i, k)))
		}
	}
	mem := r.Bytes()
	orig := bytes.Clone(mem[:a.end])
	got := make([]byte, size)
	var silent, detected, harmless int
	for i := range n {
		o := a.first + i*a.stride
		seq := uint64(updates[i])
		active := o + a.copyAt(seq)
		for at := o; at < o+a.stride; at++ {
			for bit := range 8 {
				mem[at] ^= 1 << bit
				err := a.Read(i, got)
				want := "harmless"
				switch {
				case at < o+8 && sum:
					want = "corrupt" // the count or the check
				case at == o && bit == 0:
					want = "previous" // the other copy
				case at >= active && at < active+size:
					want = "silent"
					if sum {
						want = "corrupt"
					}
				}
				switch want {
				case "harmless":
					require.NoError(t, err, "byte %d bit %d", at-o, bit)
					require.Equal(t, val(i, updates[i]), got, "byte %d bit %d", at-o, bit)
					harmless++
				case "previous":
					require.NoError(t, err, "byte %d bit %d", at-o, bit)
					require.Equal(t, val(i, updates[i]-1), got, "byte %d bit %d", at-o, bit)
					silent++
				case "silent":
					require.NoError(t, err, "byte %d bit %d", at-o, bit)
					require.NotEqual(t, val(i, updates[i]), got, "byte %d bit %d", at-o, bit)
					silent++
				case "corrupt":
					require.ErrorIs(t, err, ErrCorrupt, "byte %d bit %d", at-o, bit)
					require.ErrorIs(t, err, persist.ErrCorrupt)
					require.Equal(t, make([]byte, size), got, "nothing returned as data")
					require.ErrorIs(t, a.Check(), ErrCorrupt)
					detected++
				}
				mem[at] ^= 1 << bit
			}
		}
	}
	require.Equal(t, orig, mem[:a.end])
	require.NoError(t, a.Check())
	t.Logf("%d-byte objects, checksum %v: of %d single-bit flips in slots, %d detected, %d returned a wrong value, %d harmless",
		size, sum, silent+detected+harmless, detected, silent, harmless)

	// A slot wiped to zeros, and a fresh object whose count flips.
	if sum {
		o := a.first
		clear(mem[o : o+a.stride])
		require.ErrorIs(t, a.Read(0, got), ErrCorrupt)
		b, err := Create(r, &Options{Offset: 8192, ObjectSize: size, Count: 1, Checksum: true})
		require.NoError(t, err)
		require.NoError(t, b.Read(0, got))
		require.Equal(t, make([]byte, size), got)
		mem[b.first] ^= 1
		require.ErrorIs(t, b.Read(0, got), ErrCorrupt)
		require.True(t, errors.Is(b.Check(), ErrCorrupt))
	}
}
