package fam

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// FuzzRollback runs recovery over arbitrary FAMBs of one object: it never
// panics, stores nothing for an impossible version mix, otherwise leaves
// one version whose value is, block by block, the new field of the blocks
// that were behind and the old field of those that ran ahead, and a second
// run changes nothing.
func FuzzRollback(f *testing.F) {
	f.Add([]byte{3})
	f.Add(append([]byte{3}, make([]byte, 40)...))
	torn := []byte{3}
	for i := range 5 {
		w := uint64(1)<<62 | uint64(i+1)<<31 | uint64(i+7)
		if i%2 == 0 {
			w = uint64(2)<<62 | uint64(i+7)<<31 | uint64(i+9)
		}
		torn = binary.LittleEndian.AppendUint64(torn, w)
	}
	f.Add(torn)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		size := 4 * (1 + int(data[0])%40)
		ws := make([]uint64, blocks(size))
		for i := range ws {
			var b [8]byte
			if 1+8*i < len(data) {
				copy(b[:], data[1+8*i:])
			}
			ws[i] = binary.LittleEndian.Uint64(b[:])
		}
		orig := append([]uint64(nil), ws...)
		m := versionsOf(ws)
		rolled, ok := rollback(ws)
		if !ok {
			require.Equal(t, orig, ws)
			_, adj := aheadOf(m)
			require.False(t, single(m) || adj)
			return
		}
		require.True(t, single(versionsOf(ws)))
		require.Equal(t, !single(m), rolled)
		ahead, _ := aheadOf(m)
		want := make([]uint64, len(ws))
		for i, w := range orig {
			want[i] = w & valMask
			if !single(m) && w>>verShift == ahead {
				want[i] = w >> valBits & valMask
			}
		}
		wantVal := make([]byte, size)
		decode(want, wantVal)
		got := make([]byte, size)
		decode(ws, got)
		require.Equal(t, wantVal, got)

		again := append([]uint64(nil), ws...)
		rolled, ok = rollback(again)
		require.True(t, ok)
		require.False(t, rolled)
		require.Equal(t, ws, again)

		require.True(t, update(ws, wantVal[:]))
		decode(ws, got)
		require.Equal(t, wantVal, got)
	})
}

const fuzzRegion = 16 << 10

func fuzzSeeds(f *testing.F, create func(r *persist.Region) error, mutate func(mem []byte)) {
	r, err := persist.Anonymous(fuzzRegion, nil)
	require.NoError(f, err)
	defer r.Close()
	require.NoError(f, create(r))
	f.Add(append([]byte(nil), r.Bytes()[:4096]...))
	mutate(r.Bytes())
	f.Add(append([]byte(nil), r.Bytes()[:4096]...))
	f.Add([]byte{})
	f.Add(append([]byte(nil), r.Bytes()[:64]...))
}

func loadImage(t *testing.T, r *persist.Region, data []byte) {
	mem := r.Bytes()
	clear(mem)
	copy(mem, data)
}

func expectedOpenError(t *testing.T, err error) {
	if !errors.Is(err, ErrNoArray) && !errors.Is(err, ErrBadFormat) && !errors.Is(err, persist.ErrCorrupt) && !errors.Is(err, ErrTooSmall) {
		t.Fatalf("unexpected error kind: %v", err)
	}
}

// FuzzOpen opens an Array over arbitrary bytes: it never panics, fails only
// with ErrNoArray, ErrBadFormat, ErrCorrupt or ErrTooSmall (never ErrBusy:
// a failed Open claims nothing), and when it succeeds every object reads
// without error and a second Open has nothing to recover.
func FuzzOpen(f *testing.F) {
	fuzzSeeds(f, func(r *persist.Region) error {
		a, err := Create(r, &Options{ObjectSize: 16, Count: 20})
		if err != nil {
			return err
		}
		for i := range 20 {
			if err := a.Update(i, []byte("abcdefghijklmnop")); err != nil {
				return err
			}
		}
		return nil
	}, func(mem []byte) {
		mem[64+5*64+7] ^= 0xc0  // object 5, block 0: version 1 -> 2
		mem[64+6*64+15] ^= 0xc0 // object 6, block 1
	})
	r, err := persist.Anonymous(fuzzRegion, nil)
	require.NoError(f, err)
	defer r.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		loadImage(t, r, data)
		a, err := Open(r, nil)
		if err != nil {
			expectedOpenError(t, err)
			return
		}
		require.NoError(t, a.Check())
		vals := make([][]byte, a.Len())
		for i := range a.Len() {
			vals[i] = make([]byte, a.Size())
			require.NoError(t, a.Read(i, vals[i]))
		}
		require.NoError(t, a.Close())
		b, err := Open(r, nil)
		require.NoError(t, err)
		defer b.Close()
		require.Zero(t, b.Recovered())
		got := make([]byte, a.Size())
		for i := range a.Len() {
			require.NoError(t, b.Read(i, got))
			require.Equal(t, vals[i], got)
		}
	})
}

// FuzzOpenLog is FuzzOpen for LogArray: after a successful OpenLog every
// object reads, and a second OpenLog replays nothing and changes nothing.
func FuzzOpenLog(f *testing.F) {
	fuzzSeeds(f, func(r *persist.Region) error {
		a, err := CreateLog(r, &LogOptions{ObjectSize: 16, Count: 20, Lanes: 2, LaneBytes: 512})
		if err != nil {
			return err
		}
		for i := range 20 {
			if err := a.Update(i, []byte("abcdefghijklmnop")); err != nil {
				return err
			}
		}
		return nil
	}, func(mem []byte) {
		mem[64+512+64+16] ^= 0x01 // lane 1, first record: a data bit
	})
	r, err := persist.Anonymous(fuzzRegion, nil)
	require.NoError(f, err)
	defer r.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		loadImage(t, r, data)
		a, err := OpenLog(r, nil)
		if err != nil {
			expectedOpenError(t, err)
			return
		}
		vals := make([][]byte, a.Len())
		for i := range a.Len() {
			vals[i] = make([]byte, a.Size())
			require.NoError(t, a.Read(i, vals[i]))
		}
		require.NoError(t, a.Close())
		b, err := OpenLog(r, nil)
		require.NoError(t, err)
		defer b.Close()
		require.Zero(t, b.Replayed())
		got := make([]byte, a.Size())
		for i := range a.Len() {
			require.NoError(t, b.Read(i, got))
			require.Equal(t, vals[i], got)
		}
	})
}

// FuzzHeader decodes arbitrary header bytes as a FAM array's and a log
// array's: no panic, and a header that decodes re-encodes to the same
// bytes.
func FuzzHeader(f *testing.F) {
	var hb [headerSize]byte
	pmheader.Encode(hb[:], &pmheader.Fields{Size: 16, Stride: 64, Count: 10})
	binary.LittleEndian.PutUint64(hb[:], arrayKind.Magic)
	f.Add(hb[:])
	pmheader.Encode(hb[:], &pmheader.Fields{Size: 16, Stride: 16, Count: 10, Aux: 4 | 4096<<32})
	binary.LittleEndian.PutUint64(hb[:], logKind.Magic)
	f.Add(hb[:])
	f.Add(make([]byte, headerSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [headerSize]byte
		copy(b[:], data)
		for _, k := range []*pmheader.Kind{&arrayKind, &logKind} {
			h, err := k.Decode(b[:])
			if err != nil {
				expectedOpenError(t, err)
				continue
			}
			var again [headerSize]byte
			pmheader.Encode(again[:], &h)
			binary.LittleEndian.PutUint64(again[:], k.Magic)
			require.Equal(t, b, again)
		}
	})
}

// Both kinds are in pmheader.Kinds, so that the other kinds' Open reports
// their headers as ErrBadFormat rather than a damaged magic.
func TestKindsKnown(t *testing.T) {
	for _, k := range []*pmheader.Kind{&arrayKind, &logKind} {
		name, ok := pmheader.Known(k.Magic)
		require.True(t, ok, k.Name)
		require.Contains(t, name, k.Name)
	}
}
