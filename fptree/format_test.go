package fptree_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/fptree"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// TestGoldenLayout: the header line, the log line and the first leaves of
// a small tree, byte for byte (testdata/*.hex): a layout change fails
// here until the format version changes with it.
func TestGoldenLayout(t *testing.T) {
	r := structtest.Region(t, 1<<16)
	tr, err := fptree.Create(r, &fptree.Options{Leaves: 4, LeafSlots: 4})
	require.NoError(t, err)
	for _, k := range []uint64{30, 10, 20, 0x0123456789abcdef, 40} { // the fifth splits leaf 0
		require.NoError(t, tr.Put(k, k^0xffff))
	}
	require.NoError(t, tr.Close())
	mem := r.Bytes()
	structtest.Golden(t, "header", mem[0:64])
	structtest.Golden(t, "logs", mem[64:128])
	structtest.Golden(t, "leaves-4-slots", mem[128:128+2*128])
	tr, err = fptree.Create(r, &fptree.Options{Offset: 4096, Leaves: 2, LeafSlots: 64})
	require.NoError(t, err)
	require.NoError(t, tr.Put(7, 8))
	require.NoError(t, tr.Close())
	structtest.Golden(t, "leaf-64-slots", mem[4096+128:4096+128+1152])
}

// TestHeaderDamageIsCorrupt: any byte of the header line changed is
// ErrCorrupt, never ErrBadFormat or ErrNoTree.
func TestHeaderDamageIsCorrupt(t *testing.T) {
	r := structtest.Region(t, 1<<20)
	tr, err := fptree.Create(r, &fptree.Options{LeafSlots: 4})
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	mem := r.Bytes()
	for at := range 64 {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			mem[at] ^= x
			_, err := fptree.Open(r, nil)
			mem[at] ^= x
			require.ErrorIs(t, err, fptree.ErrCorrupt, "byte %d ^ %#02x", at, x)
			require.ErrorIs(t, err, persist.ErrCorrupt)
		}
	}
	tr, err = fptree.Open(r, nil)
	require.NoError(t, err)
	require.NoError(t, tr.Close())
}
