package pmheader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"path/filepath"
	"strings"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

var (
	errNoArray   = errors.New("test: no array")
	errBadFormat = errors.New("test: not a test array")
	errCorrupt   = fmt.Errorf("test: %w", persist.ErrCorrupt)
	errInvalid   = errors.New("test: invalid")
	errTooSmall  = errors.New("test: too small")

	kind = pmheader.Kind{
		Magic: pmheader.Magic("braidTST"), Flags: 0b101, Name: "test array", Pkg: "test",
		NoArray: errNoArray, BadFormat: errBadFormat, Corrupt: errCorrupt, Invalid: errInvalid, TooSmall: errTooSmall,
	}
	fields = pmheader.Fields{Flags: 0b100, Size: 16, Stride: 64, Count: 10, Aux: 7 | 9<<32}
)

func line(f pmheader.Fields) []byte {
	b := make([]byte, pmheader.Size)
	pmheader.Encode(b, &f)
	binary.LittleEndian.PutUint64(b, kind.Magic)
	return b
}

func TestRoundTrip(t *testing.T) {
	b := line(fields)
	require.Equal(t, "braidTST", string(b[:8]))
	got, err := kind.Decode(b)
	require.NoError(t, err)
	require.Equal(t, fields, got)
	// The golden layout: offsets of the fields, the checksum over 8..55.
	require.Equal(t, uint32(pmheader.Format), binary.LittleEndian.Uint32(b[8:]))
	require.Equal(t, uint32(0b100), binary.LittleEndian.Uint32(b[12:]))
	require.Equal(t, uint32(16), binary.LittleEndian.Uint32(b[16:]))
	require.Equal(t, uint32(64), binary.LittleEndian.Uint32(b[20:]))
	require.Equal(t, uint64(10), binary.LittleEndian.Uint64(b[24:]))
	require.Equal(t, uint64(7|9<<32), binary.LittleEndian.Uint64(b[32:]))
	require.Equal(t, make([]byte, 16), b[40:56])
	require.Equal(t, make([]byte, 4), b[60:64])
}

func TestMagicPanicsOnBadName(t *testing.T) {
	require.Panics(t, func() { pmheader.Magic("short") })
}

func TestDecodeErrors(t *testing.T) {
	_, err := kind.Decode(make([]byte, pmheader.Size))
	require.ErrorIs(t, err, errNoArray)
	// A zero magic is an empty header whatever follows (an unfinished
	// Create).
	b := line(fields)
	binary.LittleEndian.PutUint64(b, 0)
	_, err = kind.Decode(b)
	require.ErrorIs(t, err, errNoArray)

	for _, c := range []struct {
		name string
		at   int
		x    byte
	}{
		{"magic", 0, 0x01}, {"magic top", 7, 0x80}, {"format", 8, 0x02}, {"flags", 12, 0x04},
		{"size", 16, 0x10}, {"stride", 21, 0x01}, {"count", 24, 0x01}, {"count top", 31, 0x80},
		{"aux", 32, 0x01}, {"aux top", 39, 0x40}, {"reserved 40", 40, 0x01}, {"reserved 48", 55, 0x80},
		{"crc", 56, 0x01}, {"crc top", 59, 0x80}, {"reserved 60", 60, 0x01},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := line(fields)
			b[c.at] ^= c.x
			_, err := kind.Decode(b)
			require.ErrorIs(t, err, errCorrupt)
			require.ErrorIs(t, err, persist.ErrCorrupt)
			t.Log(err)
		})
	}

	// Fields that pass the checksum but break a rule: what another build
	// wrote is BadFormat, what no build writes is Corrupt.
	for _, c := range []struct {
		name string
		f    pmheader.Fields
		edit func(b []byte)
		want error
	}{
		{"undefined flag", pmheader.Fields{Flags: 0b010, Count: 1}, nil, errBadFormat},
		{"format 2", fields, func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 2) }, errBadFormat},
		{"reserved 40", fields, func(b []byte) { b[41] = 1 }, errCorrupt},
		{"reserved 60", fields, func(b []byte) { b[63] = 1 }, errCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := line(c.f)
			if c.edit != nil {
				c.edit(b)
				binary.LittleEndian.PutUint32(b[56:], crc32c(b[8:56]))
			}
			_, err := kind.Decode(b)
			require.ErrorIs(t, err, c.want)
			if c.want == errBadFormat {
				require.NotErrorIs(t, err, persist.ErrCorrupt)
			}
			t.Log(err)
		})
	}

	// A sound line whose magic no kind has: this format, its magic hit.
	other := kind
	other.Magic = pmheader.Magic("braidOTH")
	other.Name = "other array"
	_, err = other.Decode(line(fields))
	require.ErrorIs(t, err, errCorrupt)
	require.ErrorContains(t, err, "the magic was damaged")
}

// Another kind's line, sound or not, and bytes that are no line of this
// format are BadFormat, never Corrupt.
func TestDecodeForeign(t *testing.T) {
	for _, k := range pmheader.Kinds {
		b := line(fields)
		copy(b, k.Magic)
		binary.LittleEndian.PutUint32(b[56:], crc32c(b[8:56]))
		_, err := kind.Decode(b)
		require.ErrorIs(t, err, errBadFormat, k.Magic)
		require.NotErrorIs(t, err, persist.ErrCorrupt)
		require.ErrorContains(t, err, k.Name)
		b[20] ^= 1 // a damaged line of that kind is still not ours
		_, err = kind.Decode(b)
		require.ErrorIs(t, err, errBadFormat, k.Magic)
		t.Log(err)
	}
	for name, b := range map[string][]byte{
		// What walog and pagelog headers begin with; their checksums sit
		// elsewhere and cover other bytes.
		"walog":   append([]byte("braidWAL\x02\x00\x01\x03"), make([]byte, 52)...),
		"pagelog": append([]byte("braidPGL\x01\x00\x00\x00"), make([]byte, 52)...),
		"text":    []byte("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do"),
		"ones":    bytes.Repeat([]byte{0xff}, pmheader.Size),
	} {
		var line [pmheader.Size]byte
		copy(line[:], b)
		require.NotEqual(t, crc32c(line[8:56]), binary.LittleEndian.Uint32(line[56:]), name)
		_, err := kind.Decode(line[:])
		require.ErrorIs(t, err, errBadFormat, name)
		require.NotErrorIs(t, err, persist.ErrCorrupt, name)
		t.Log(err)
	}
}

// The guarantee the foreign rule rests on: no change of one byte of a
// sound line's magic makes it another kind's line or an empty one, so
// every such hit stays Corrupt.
func TestMagicHitIsCorrupt(t *testing.T) {
	for _, k := range pmheader.Kinds {
		own := kind
		own.Magic, own.Name = pmheader.Magic(k.Magic), k.Name
		_, ok := pmheader.Known(own.Magic)
		require.True(t, ok)
		b := line(fields)
		copy(b, k.Magic)
		_, err := own.Decode(b)
		require.NoError(t, err)
		for at := range 8 {
			for x := 1; x < 256; x++ {
				b[at] ^= byte(x)
				_, err := own.Decode(b)
				b[at] ^= byte(x)
				if !errors.Is(err, errCorrupt) {
					t.Fatalf("%s: byte %d ^ %#02x: %v, want corrupt", k.Magic, at, x, err)
				}
			}
		}
	}
}

func TestPlace(t *testing.T) {
	r := structtest.Region(t, 4096)
	hb, err := kind.Place(r, 128)
	require.NoError(t, err)
	require.Len(t, hb, pmheader.Size)
	off, err := r.Offset(hb)
	require.NoError(t, err)
	require.Equal(t, 128, off)
	_, err = kind.Place(r, 4096-64)
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		r    *persist.Region
		off  int
		want error
	}{
		{"nil region", nil, 0, errInvalid},
		{"negative", r, -64, errInvalid},
		{"unaligned", r, 8, errInvalid},
		{"past end", r, 4096, errTooSmall},
		{"far past end", r, math.MaxInt &^ 63, errTooSmall},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := kind.Place(c.r, c.off)
			require.ErrorIs(t, err, c.want)
			t.Log(err)
		})
	}

	closed, err := persist.Anonymous(4096, nil)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	for _, off := range []int{0, 8, 1 << 20} {
		_, err = kind.Place(closed, off)
		require.ErrorIs(t, err, persist.ErrClosed, "offset %d", off)
		require.Equal(t, persist.ErrClosed.Error(), err.Error(), "returned as it is, not prefixed")
	}
}

func TestExtent(t *testing.T) {
	r := structtest.Region(t, 4096)
	f := pmheader.Fields{Stride: 64, Count: 63}
	n, err := kind.Extent(r, 0, 0, f)
	require.NoError(t, err)
	require.Equal(t, 63, n)
	f.Count = 64
	_, err = kind.Extent(r, 0, 0, f)
	require.ErrorIs(t, err, errTooSmall)
	f.Count = 31
	_, err = kind.Extent(r, 0, 2048, f)
	require.NoError(t, err)
	f.Count = 32
	_, err = kind.Extent(r, 0, 2048, f)
	require.ErrorIs(t, err, errTooSmall)
	_, err = kind.Extent(r, 1024, 1<<20, pmheader.Fields{Stride: 64, Count: 1})
	require.ErrorIs(t, err, errTooSmall)
	_, err = kind.Extent(r, 0, 0, pmheader.Fields{Stride: 64, Count: 1 << 62})
	require.ErrorIs(t, err, errTooSmall)
	_, err = kind.Extent(r, 0, 0, pmheader.Fields{Stride: 64})
	require.ErrorIs(t, err, errCorrupt)
	_, err = kind.Extent(r, 0, 0, pmheader.Fields{Count: 1})
	require.ErrorIs(t, err, errCorrupt)
}

func TestCreateSequence(t *testing.T) {
	r := structtest.Region(t, 4096)
	hb, err := kind.Place(r, 64)
	require.NoError(t, err)
	require.NoError(t, kind.Invalidate(r, hb)) // zero magic: nothing to do
	f := fields
	require.NoError(t, kind.Commit(r, hb, &f))
	got, err := kind.Decode(hb)
	require.NoError(t, err)
	require.Equal(t, fields, got)
	require.NoError(t, kind.Invalidate(r, hb))
	_, err = kind.Decode(hb)
	require.ErrorIs(t, err, errNoArray)
	require.Equal(t, line(fields)[8:], hb[8:], "Invalidate clears the magic only")
}

// A read-only or closed region: Invalidate refuses before any store (a
// store to a read-only mapping would be a fatal fault, not an error).
func TestInvalidateNotWritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.pm")
	rw, err := persist.Map(path, &persist.Options{Size: 4096, Create: true})
	require.NoError(t, err)
	hb, err := kind.Place(rw, 0)
	require.NoError(t, err)
	f := fields
	require.NoError(t, kind.Commit(rw, hb, &f))
	require.NoError(t, rw.Close())
	require.ErrorIs(t, kind.Invalidate(rw, hb), persist.ErrClosed)

	ro, err := persist.Map(path, &persist.Options{ReadOnly: true})
	require.NoError(t, err)
	defer ro.Close()
	hb, err = kind.Place(ro, 0)
	require.NoError(t, err)
	got, err := kind.Decode(hb)
	require.NoError(t, err)
	require.Equal(t, fields, got)
	err = kind.Invalidate(ro, hb)
	require.ErrorIs(t, err, persist.ErrReadOnly)
	require.Equal(t, persist.ErrReadOnly.Error(), err.Error(), "no ReadOnly sentinel: persist's, as it is")
	withRO := kind
	withRO.ReadOnly = persist.NewError("test: region is read-only", persist.ErrReadOnly)
	err = withRO.Invalidate(ro, hb)
	require.ErrorIs(t, err, withRO.ReadOnly)
	require.ErrorIs(t, err, persist.ErrReadOnly)
	_, err = kind.Decode(hb)
	require.NoError(t, err)
}

// FuzzDecode decodes arbitrary lines: no panic, only NoArray, BadFormat or
// Corrupt, and a line that decodes re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(line(fields))
	f.Add(line(pmheader.Fields{}))
	f.Add(make([]byte, pmheader.Size))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [pmheader.Size]byte
		copy(b[:], data)
		got, err := kind.Decode(b[:])
		if err != nil {
			if !errors.Is(err, errNoArray) && !errors.Is(err, errCorrupt) && !errors.Is(err, errBadFormat) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		require.Equal(t, b[:], line(got))
	})
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// The registry's magics are eight bytes, distinct, and differ from each
// other in at least two bytes, so no single damaged byte turns one kind's
// magic into another's.
func TestRegistry(t *testing.T) {
	for i, a := range pmheader.Kinds {
		require.Len(t, a.Magic, 8, a.Magic)
		require.NotEmpty(t, a.Name)
		require.NotEmpty(t, a.Pkg)
		for _, b := range pmheader.Kinds[i+1:] {
			d := 0
			for j := range 8 {
				if a.Magic[j] != b.Magic[j] {
					d++
				}
			}
			require.GreaterOrEqual(t, d, 2, "%s and %s differ in %d bytes", a.Magic, b.Magic, d)
			// A "Create did not finish" magic is reported as no structure
			// (ErrNoLog, ErrNoStore): no damage of a few bits may turn a
			// live structure's magic into one.
			if strings.Contains(a.Name, "did not finish") || strings.Contains(b.Name, "did not finish") {
				diff := bits.OnesCount64(pmheader.Magic(a.Magic) ^ pmheader.Magic(b.Magic))
				require.GreaterOrEqual(t, diff, 16, "%s and %s differ in %d bits", a.Magic, b.Magic, diff)
			}
		}
	}
	require.Equal(t, "a walog log (package walog)", pmheader.Identify([]byte("braidWAL....")))
	require.Equal(t, "zeroes (nothing was created here)", pmheader.Identify(make([]byte, 64)))
	require.Equal(t, `no braid structure (magic "garbage!")`, pmheader.Identify([]byte("garbage!")))
	require.Equal(t, "3 bytes, too few for a header", pmheader.Identify([]byte("abc")))
}
