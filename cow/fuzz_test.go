package cow

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// FuzzOpen opens an Array over arbitrary bytes: no panic, only ErrNoArray,
// ErrBadFormat, ErrCorrupt or ErrTooSmall (never ErrBusy: a failed Open
// claims nothing); when it opens, every object reads, and in a
// checksummed array a Read fails (ErrCorrupt) exactly for the objects
// Check reports.
func FuzzOpen(f *testing.F) {
	r, err := persist.Anonymous(16<<10, nil)
	require.NoError(f, err)
	defer r.Close()
	for _, sum := range []bool{false, true} {
		clear(r.Bytes())
		a, err := Create(r, &Options{ObjectSize: 24, Count: 20, Checksum: sum})
		require.NoError(f, err)
		for i := range 20 {
			require.NoError(f, a.Update(i, []byte("abcdefghijklmnopqrstuvwx")))
		}
		require.NoError(f, a.Close())
		f.Add(append([]byte(nil), r.Bytes()[:4096]...))
		f.Add(append([]byte(nil), r.Bytes()[:64]...))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := r.Bytes()
		clear(mem)
		copy(mem, data)
		a, err := Open(r, nil)
		if err != nil {
			if !errors.Is(err, ErrNoArray) && !errors.Is(err, ErrBadFormat) && !errors.Is(err, persist.ErrCorrupt) && !errors.Is(err, ErrTooSmall) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		defer a.Close() // the next input opens the same bytes
		buf := make([]byte, a.Size())
		bad := false
		for i := range a.Len() {
			err := a.Read(i, buf)
			if err != nil {
				require.True(t, a.Checksum(), "only checksummed arrays find bad objects")
				require.ErrorIs(t, err, persist.ErrCorrupt)
				require.Equal(t, make([]byte, a.Size()), buf, "nothing returned as data")
				bad = true
			}
		}
		if err := a.Check(); bad {
			require.ErrorIs(t, err, ErrCorrupt)
		} else {
			require.NoError(t, err)
		}
	})
}

// FuzzHeader decodes arbitrary header bytes as a CoW array's: no panic,
// and a header that decodes re-encodes to the same bytes.
func FuzzHeader(f *testing.F) {
	var hb [headerSize]byte
	for _, flags := range []uint32{0, flagChecksum} {
		pmheader.Encode(hb[:], &pmheader.Fields{Flags: flags, Size: 16, Stride: 64, Count: 10})
		binary.LittleEndian.PutUint64(hb[:], arrayKind.Magic)
		f.Add(hb[:])
	}
	f.Add(make([]byte, headerSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [headerSize]byte
		copy(b[:], data)
		h, err := arrayKind.Decode(b[:])
		if err != nil {
			if !errors.Is(err, ErrNoArray) && !errors.Is(err, ErrBadFormat) && !errors.Is(err, persist.ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		var again [headerSize]byte
		pmheader.Encode(again[:], &h)
		binary.LittleEndian.PutUint64(again[:], arrayKind.Magic)
		require.Equal(t, b, again)
	})
}

// The kind is in pmheader.Kinds, so that the other kinds' Open reports its
// header as ErrBadFormat rather than a damaged magic.
func TestKindKnown(t *testing.T) {
	name, ok := pmheader.Known(arrayKind.Magic)
	require.True(t, ok)
	require.Contains(t, name, arrayKind.Name)
}
