package persist_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

func TestNewError(t *testing.T) {
	errX := persist.NewError("x: corrupt thing", persist.ErrCorrupt)
	require.Equal(t, "x: corrupt thing", errX.Error())
	require.ErrorIs(t, errX, persist.ErrCorrupt)
	require.NotErrorIs(t, errX, persist.ErrTooSmall)
	w := fmt.Errorf("%w: entry 7 fails its checksum", errX)
	require.Equal(t, "x: corrupt thing: entry 7 fails its checksum", w.Error())
	require.ErrorIs(t, w, errX)
	require.ErrorIs(t, w, persist.ErrCorrupt)
	require.True(t, persist.IsCorrupt(w))

	two := persist.NewError("x: short and read-only", persist.ErrTooSmall, persist.ErrReadOnly)
	require.ErrorIs(t, two, persist.ErrTooSmall)
	require.ErrorIs(t, two, persist.ErrReadOnly)
	require.False(t, persist.IsCorrupt(two))
}

func TestCorruptMarks(t *testing.T) {
	err := persist.Corruptf("y: block %d: %w", 3, fs.ErrNotExist)
	require.Equal(t, "y: block 3: file does not exist", err.Error())
	require.ErrorIs(t, err, persist.ErrCorrupt)
	require.ErrorIs(t, err, fs.ErrNotExist)

	base := errors.New("z: bad length")
	m := persist.MarkCorrupt(base)
	require.Equal(t, "z: bad length", m.Error())
	require.ErrorIs(t, m, persist.ErrCorrupt)
	require.ErrorIs(t, m, base)
	require.NoError(t, persist.MarkCorrupt(nil))
	require.Same(t, m, persist.MarkCorrupt(m), "marking twice changes nothing")
	require.False(t, persist.IsCorrupt(base))
}

func TestCRC32C(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	for _, n := range []int{0, 1, 7, 8, 63, 64, 65, 95, 96, 97, 255, 256, 257, 4095, 4096, 4097} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*131 + n)
		}
		require.Equal(t, crc32.Checksum(b, tab), persist.CRC32C(b), n)
		h := n / 3
		require.Equal(t, crc32.Checksum(b, tab), persist.UpdateCRC32C(persist.CRC32C(b[:h]), b[h:]), n)
	}
}
