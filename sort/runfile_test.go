package sort

import (
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// The run-file header's layout, byte for byte (testdata/runheader_*.hex):
// a change fails until runVersion changes with it.
func TestRunHeaderGolden(t *testing.T) {
	structtest.Golden(t, "runheader_gensort", runHeader{l: newLayout(10, 5, false), count: 3, inputSize: 300}.encode())
	structtest.Golden(t, "runheader_klv", runHeader{l: newLayout(8, 8, true), count: 7, inputSize: 12345}.encode())
}

// A run file that holds another kind's header says which kind it found
// (pmheader.Identify), and is corruption: the sort wrote the file.
func TestRunHeaderForeignMagic(t *testing.T) {
	img := runHeader{l: newLayout(10, 5, false), count: 0, inputSize: 0}.encode()
	copy(img, "braidWAL")
	_, err := decodeRunHeader(img)
	require.ErrorIs(t, err, ErrCorrupt)
	require.EqualError(t, err, "sort: corrupt run file: not a run file: its header holds a walog log (package walog)")
	clear(img[:8])
	_, err = decodeRunHeader(img)
	require.EqualError(t, err, "sort: corrupt run file: not a run file: its header holds zeroes (nothing was created here)")
}
