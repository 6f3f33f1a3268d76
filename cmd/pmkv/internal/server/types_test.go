package server

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCodecStrings(t *testing.T) {
	for _, s := range []string{"", "a", "plain text", "\xff", "\xff\x00", "\xff\x01\x01\x00", "\x00\xff"} {
		raw := EncodeString([]byte(s))
		got, ok := DecodeString(raw)
		require.True(t, ok, "%q", s)
		require.Equal(t, s, string(got), "%q", s)
		require.Equal(t, "string", TypeName(raw), "%q", s)
	}
	require.Equal(t, "plain", string(EncodeString([]byte("plain"))), "a string without the tag is stored as it is")
}

func TestCodecRoundTrip(t *testing.T) {
	l := list{[]byte("a"), nil, []byte("\xff\x00"), make([]byte, 300)}
	got, err := decodeList(l.encode())
	require.NoError(t, err)
	require.Equal(t, len(l), len(got))
	for i := range l {
		require.Equal(t, string(l[i]), string(got[i]))
	}
	h := newDict(0)
	h.set("f", []byte("v"))
	h.set("", nil)
	h.set("g", []byte("w"))
	require.Equal(t, 1, h.del("f", "none"))
	for _, kind := range []int{kindHash, kindSet} {
		raw := h.encode(kind)
		require.Equal(t, kindNames[kind], TypeName(raw))
		d, err := decodeDict(raw, kind)
		require.NoError(t, err)
		require.Equal(t, h.keys, d.keys)
		_, str := DecodeString(raw)
		require.False(t, str, "a typed value never reads as a string")
	}
	z := newZSet(0)
	for i, m := range []string{"c", "a", "b", "d"} {
		z.add(m, float64(i%2))
	}
	z.add("e", math.Inf(-1))
	require.True(t, z.rem("d"))
	zr, err := decodeZSet(z.encode())
	require.NoError(t, err)
	require.Equal(t, z.els, zr.els)
	require.Equal(t, []zel{{math.Inf(-1), "e"}, {0, "b"}, {0, "c"}, {1, "a"}}, zr.els)
	_, err = decodeList(z.encode())
	require.ErrorIs(t, err, errBadValue, "a zset is not a list")
}

func TestCodecCorrupt(t *testing.T) {
	l := list{[]byte("abc"), []byte("de")}
	raw := l.encode()
	for i := 3; i < len(raw); i++ { // every truncation is refused
		_, err := decodeList(raw[:i])
		require.ErrorIs(t, err, errBadValue, "cut at %d", i)
	}
	_, err := decodeList(append(raw, 0))
	require.ErrorIs(t, err, errBadValue, "trailing bytes")
	bad := append([]byte(nil), raw...)
	bad[2] = 9 // unknown version
	require.Equal(t, "unknown", TypeName(bad))
	h := newDict(0)
	h.set("x", nil)
	h.set("y", nil)
	dup := h.encode(kindSet)
	dup[len(dup)-1] = 'x'
	_, err = decodeDict(dup, kindSet)
	require.ErrorIs(t, err, errBadValue, "a duplicate member")
	z := newZSet(0)
	z.add("a", 1)
	z.add("b", 2)
	zr := z.encode()
	s1, s2 := [8]byte(zr[4:12]), [8]byte(zr[14:22])
	copy(zr[4:], s2[:]) // scores out of order
	copy(zr[14:], s1[:])
	_, err = decodeZSet(zr)
	require.ErrorIs(t, err, errBadValue, "out of order")
}

func TestEncodingName(t *testing.T) {
	ints, words := newDict(0), newDict(0)
	for i := range 600 {
		ints.set(string(rune('0'+i%10))+string(rune('1'+i/10%9))+string(rune('1'+i/90)), nil)
	}
	words.set("ele:1", nil)
	require.Equal(t, "hashtable", EncodingName(ints.encode(kindSet)), "more than 512 integers")
	require.Equal(t, "hashtable", EncodingName(words.encode(kindSet)))
	small := newDict(0)
	small.set("1", nil)
	require.Equal(t, "intset", EncodingName(small.encode(kindSet)))
	require.Equal(t, "listpack", EncodingName(small.encode(kindHash)))
	require.Equal(t, "quicklist", EncodingName(list{[]byte("x")}.encode()))
	require.Equal(t, "int", EncodingName([]byte("123")))
	require.Equal(t, "embstr", EncodingName([]byte("abc")))
	require.Equal(t, "raw", EncodingName(make([]byte, 45)))
}

// FuzzDecode: no input panics a decoder, and what decodes re-encodes to
// a value that decodes to the same thing.
func FuzzDecode(f *testing.F) {
	f.Add(list{[]byte("a")}.encode())
	z := newZSet(0)
	z.add("m", 1)
	f.Add(z.encode())
	h := newDict(0)
	h.set("f", []byte("v"))
	f.Add(h.encode(kindHash))
	f.Add(h.encode(kindSet))
	f.Fuzz(func(t *testing.T, raw []byte) {
		TypeName(raw)
		EncodingName(raw)
		if l, err := decodeList(raw); err == nil {
			l2, err := decodeList(l.encode())
			require.NoError(t, err)
			require.Equal(t, len(l), len(l2))
		}
		for _, kind := range []int{kindHash, kindSet} {
			if d, err := decodeDict(raw, kind); err == nil {
				d2, err := decodeDict(d.encode(kind), kind)
				require.NoError(t, err)
				require.Equal(t, d.keys, d2.keys)
			}
		}
		if z, err := decodeZSet(raw); err == nil {
			z2, err := decodeZSet(z.encode())
			require.NoError(t, err)
			require.Equal(t, z.els, z2.els)
		}
	})
}
