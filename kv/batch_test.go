package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// TestBatchCopies: a Batch keeps copies (the caller's slices change after
// Put), a reused Batch (Reset) overwrites its chunk without touching what
// an earlier Apply stored, values larger than a chunk and nil values.
func TestBatchCopies(t *testing.T) {
	o := testOptions(t, 1)
	o.SegmentSize, o.DeviceSize = 1<<20, 16<<20
	s := mustOpen(t, o)
	defer s.Close()
	rnd := structtest.NewRand(5)
	val := func(round, i int) []byte {
		n := rnd.Intn(300)
		if i%97 == 0 {
			n = batchChunk + rnd.Intn(batchChunk) // more than a chunk
		}
		return bytes.Repeat([]byte{byte('a' + (round+i)%26)}, n)
	}
	want := map[string][]byte{}
	var b Batch
	for round := range 3 {
		b.Reset()
		for i := range 500 {
			k := fmt.Appendf(nil, "k%03d", i)
			v := val(round, i)
			if i%50 == 7 {
				v = nil
			}
			b.Put(k, v)
			want[string(k)] = bytes.Clone(v)
			k[0] = 'x' // the batch holds copies
			copy(v, "changed after Put")
		}
		b.Delete([]byte("k001"))
		delete(want, "k001")
		require.Equal(t, 501, b.Len())
		require.NoError(t, s.Apply(&b))
	}
	for i := range 500 {
		k := fmt.Sprintf("k%03d", i)
		v, err := s.Get([]byte(k))
		w, ok := want[k]
		if !ok {
			require.ErrorIs(t, err, ErrNotFound, k)
			continue
		}
		require.NoError(t, err, k)
		require.Equal(t, len(w), len(v), k)
		require.True(t, bytes.Equal(w, v), k)
	}
}
