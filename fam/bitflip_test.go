package fam

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// TestBitFlips flips every bit of one object's FAM blocks, one at a time,
// and records what Read and then Open make of it: the contract in doc.go,
// bit by bit. FAM blocks carry no checksum, only the version:
//
//   - bit 63 (the high version bit): two versions apart, which no crash
//     leaves: ErrCorrupt from Read, Update, Check and Open.
//   - bit 62 (the low version bit): two adjacent versions. Read, Update
//     and Check report ErrCorrupt, but Open cannot tell it from a torn
//     update and rolls it back: the object then reads as a mix of its
//     blocks' old and new fields, silently.
//   - bits 30..0 (new) of a data block, or of a meta block's bits in use:
//     the value read is wrong, silently.
//   - unused bits of a meta block's new field, and bits 61..31 (old):
//     Read does not look at them (an old field matters only if a rollback
//     makes it the value again; the next Update overwrites it).
func TestBitFlips(t *testing.T) {
	for _, size := range []int{8, 16, 132} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testBitFlips(t, size) })
	}
}

func testBitFlips(t *testing.T, size int) {
	r, err := persist.Anonymous(1<<16, nil)
	require.NoError(t, err)
	defer r.Close()
	a, err := Create(r, &Options{ObjectSize: size, Count: 2})
	require.NoError(t, err)
	// Two updates with values that differ in every 31-bit field and top
	// bit, so that old and new differ in every block.
	v1, v2 := make([]byte, size), make([]byte, size)
	for i := range v1 {
		v1[i], v2[i] = byte(0x11*i+1), ^byte(0x11*i+1)
	}
	require.NoError(t, a.Update(1, v1))
	require.NoError(t, a.Update(1, v2))
	mem := r.Bytes()
	o := a.first + a.stride
	orig := bytes.Clone(mem[:a.end])
	got := make([]byte, size)
	counts := map[string]int{}
	// reopen restores the image and opens it again, after a case closed
	// the array to open it (one open array per area).
	reopen := func() *Array {
		copy(mem, orig)
		a, err := Open(r, nil)
		require.NoError(t, err)
		return a
	}
	k := size / 4
	for b := range a.nb {
		meta := (b+1)%(groupSize+1) == 0 || b == a.nb-1
		used := groupSize // data bits in use in this block's new field
		if meta {
			used = min(groupSize, k-(b/(groupSize+1))*groupSize)
		}
		for bit := range 64 {
			copy(mem, orig)
			mem[o+8*b+bit/8] ^= 1 << (bit % 8)
			readErr := a.Read(1, got)
			var what string
			switch {
			case bit == 63:
				what = "detected"
				require.ErrorIs(t, readErr, ErrCorrupt)
				require.NoError(t, a.Close())
				_, err := Open(r, nil)
				require.ErrorIs(t, err, ErrCorrupt)
				a = reopen() // the failed Open claimed nothing
			case bit == 62:
				what = "rolled back into a mix"
				require.ErrorIs(t, readErr, ErrCorrupt)
				require.ErrorIs(t, a.Check(), ErrCorrupt)
				require.NoError(t, a.Close())
				b, err := Open(r, nil)
				require.NoError(t, err)
				require.Equal(t, 1, b.Recovered())
				require.NoError(t, b.Read(1, got))
				require.NotEqual(t, v2, got)
				require.NotEqual(t, v1, got)
				require.NoError(t, b.Close())
				a = reopen()
			case bit < valBits && (!meta || bit < used):
				what = "wrong value"
				require.NoError(t, readErr)
				require.NotEqual(t, v2, got)
			default:
				what = "harmless"
				require.NoError(t, readErr)
				require.Equal(t, v2, got)
			}
			counts[what]++
		}
	}
	copy(mem, orig)
	require.NoError(t, a.Check())
	t.Logf("%d-byte object (%d FAM blocks), %d single-bit flips: %v", size, a.nb, 64*a.nb, counts)
}
