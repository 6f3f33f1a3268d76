package cow

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// FuzzOpen opens an Array over arbitrary bytes: no panic, only ErrNoArray,
// ErrCorrupt or ErrTooSmall, and when it opens, every object reads.
func FuzzOpen(f *testing.F) {
	r, err := persist.Anonymous(16<<10, nil)
	require.NoError(f, err)
	defer r.Close()
	a, err := Create(r, 0, 24, 20)
	require.NoError(f, err)
	for i := range 20 {
		require.NoError(f, a.Update(i, []byte("abcdefghijklmnopqrstuvwx")))
	}
	f.Add(append([]byte(nil), r.Bytes()[:2048]...))
	f.Add(append([]byte(nil), r.Bytes()[:64]...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := r.Bytes()
		clear(mem)
		copy(mem, data)
		a, err := Open(r, 0)
		if err != nil {
			if !errors.Is(err, ErrNoArray) && !errors.Is(err, persist.ErrCorrupt) && !errors.Is(err, ErrTooSmall) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		buf := make([]byte, a.Size())
		for i := range a.Len() {
			require.NoError(t, a.Read(i, buf))
		}
	})
}

// FuzzHeader decodes arbitrary header bytes: no panic, and a header that
// decodes re-encodes to the same bytes.
func FuzzHeader(f *testing.F) {
	var hb [headerSize]byte
	h := header{size: 16, stride: 64, count: 10}
	h.encode(hb[:])
	binary.LittleEndian.PutUint64(hb[:], magicArray)
	f.Add(hb[:])
	f.Add(make([]byte, headerSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [headerSize]byte
		copy(b[:], data)
		h, err := decodeHeader(b[:], magicArray, "CoW array")
		if err != nil {
			if !errors.Is(err, ErrNoArray) && !errors.Is(err, persist.ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		var again [headerSize]byte
		h.encode(again[:])
		binary.LittleEndian.PutUint64(again[:], magicArray)
		require.Equal(t, b, again)
	})
}
