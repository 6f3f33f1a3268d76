package sortbench

import (
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/sort/record"
	"github.com/stretchr/testify/require"
)

func TestLCGSkipAhead(t *testing.T) {
	x := Uint128{}
	for i := uint64(0); i < 2000; i++ {
		require.Equal(t, x, lcgSkip(U128(i)), "step %d", i)
		x = lcgNext(x)
	}
	// f^(2^k)(0) for k = 1..3 are the published c_k of rand16.c.
	require.Equal(t, Uint128{0x95e0e48262b3edfe, 0x04479485c755b646}, lcgSkip(U128(2)))
	require.Equal(t, Uint128{0x882a02c315362b60, 0x765f100068b33a1c}, lcgSkip(U128(4)))
	require.Equal(t, Uint128{0x5efc4abfaca23e8c, 0xa8edb1f2dfbf6478}, lcgSkip(U128(8)))
	// Skipping composes: skip(a+b) = f^b(skip(a)).
	a := lcgSkip(Uint128{Hi: 3, Lo: 1 << 63})
	for i := 0; i < 5; i++ {
		a = lcgNext(a)
	}
	require.Equal(t, a, lcgSkip(Uint128{Hi: 3, Lo: 1<<63 + 5}))
}

func TestUint128Format(t *testing.T) {
	require.Equal(t, "1ea6370b955", Uint128{Lo: 0x1ea6370b955}.Hex())
	require.Equal(t, "10000000000000001", Uint128{Hi: 1, Lo: 1}.Hex())
	require.Equal(t, "18446744073709551616", Uint128{Hi: 1}.String())
	require.Equal(t, "340282366920938463463374607431768211455", Uint128{^uint64(0), ^uint64(0)}.String())
	for _, s := range []string{"0", "1", "1000000", "18446744073709551615", "18446744073709551616",
		"340282366920938463463374607431768211455"} {
		v, ok := ParseUint128(s)
		require.True(t, ok, s)
		require.Equal(t, s, v.String())
	}
	for _, s := range []string{"", "-1", "12a", "340282366920938463463374607431768211456"} {
		_, ok := ParseUint128(s)
		require.False(t, ok, s)
	}
}

func gen(t testing.TB, o GenOptions) []byte {
	t.Helper()
	b, _, err := GenerateBytes(o)
	require.NoError(t, err)
	return b
}

func TestGensortVectors(t *testing.T) {
	b := gen(t, GenOptions{Count: 1000, Checksum: true})
	require.Equal(t, "JimGrayRIP", string(b[:10]))
	want0 := "4a696d4772617952495065080060836b392cd58b8f5e55961855e79b87f02283a466b6aab1f9e0cacf1e26b3292afd1064bb18b56ac07d6f656b1d2f430d57bde7e47d81f36a6dd267948bbc2397bfe28c334e4ad82b8e70166293cfaa0116bfda3bb1ab"
	require.Equal(t, want0, hex.EncodeToString(b[:100]))
	require.Equal(t, uint32(0x9ea593a0), crc32.ChecksumIEEE(b[:100]))
	for i, k := range []string{"95e0e48262b3edfe0447", "45979353dbed5329365c", "882a02c315362b60765f", "5c90ab38ae52896215d7"} {
		require.Equal(t, k, hex.EncodeToString(b[100*(i+1):100*(i+1)+10]))
	}
	_, res, err := GenerateBytes(GenOptions{Count: 1000, Checksum: true, Threads: 3})
	require.NoError(t, err)
	require.Equal(t, "1ea6370b955", res.Checksum.Hex())
}

func TestSkewTablesMatchGensort(t *testing.T) {
	// Entries of gensort 1.5's Skew_binary / Skew_ascii tables.
	bin := map[int]string{0: "4a696d477261", 1: "95e0e48262b3", 2: "45979353dbed", 7: "5efc4abfaca2",
		15: "f25bd15439d1", 31: "89ca67c29c93", 63: "8b6ae036713b", 127: "98a2542fd23d", 128: "e1dc46b645c4"}
	for i, s := range bin {
		require.Equal(t, s, hex.EncodeToString(skewBinary[i][:]), "binary %d", i)
	}
	asc := map[int]string{0: "AsfAGH", 1: "~sHd0j", 2: "uI^EYm", 3: "Q)JN)R", 112: "j17a3a", 128: "12NSK|"}
	for i, s := range asc {
		require.Equal(t, s, string(skewASCII[i][:]), "ascii %d", i)
	}
}

func TestSkewIndex(t *testing.T) {
	cases := []struct {
		r    Uint128
		want int
	}{
		{Uint128{}, 0}, {U128(1), 1}, {U128(2), 2}, {U128(3), 2}, {U128(4), 3}, {U128(15), 4}, {U128(16), 5},
		{U128(1 << 59), 60}, {U128(1 << 60), 64}, {U128(1 << 63), 64}, {U128(^uint64(0)), 64},
		{Uint128{Hi: 1}, 65}, {Uint128{Hi: 1, Lo: 1}, 65}, {Uint128{Hi: 1 << 63}, 128}, {Uint128{Hi: 1 << 60}, 128},
	}
	for _, c := range cases {
		require.Equal(t, c.want, skewIndex(c.r), "%v", c.r)
	}
}

// TestGenGolden compares generated records with golden files in testdata
// (see testdata/README.md for how each was established).
func TestGenGolden(t *testing.T) {
	cases := []struct {
		file string
		o    GenOptions
	}{
		{"gensort_b1000000_n4.hex", GenOptions{Start: U128(1000000), Count: 4}},
		{"gensort_a_n4.hex", GenOptions{ASCII: true, Count: 4}},
		{"gensort_a_b1000000_n4.hex", GenOptions{ASCII: true, Start: U128(1000000), Count: 4}},
		{"gensort_s_b1000_n4.hex", GenOptions{Skew: true, Start: U128(1000), Count: 4}},
		{"gensort_a_s_b1000_n4.hex", GenOptions{ASCII: true, Skew: true, Start: U128(1000), Count: 4}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b := gen(t, c.o)
			want := readHexGolden(t, c.file)
			if os.Getenv("BRAID_UPDATE_GOLDEN") == "1" {
				writeHexGolden(t, c.file, b)
				return
			}
			require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(b))
		})
	}
}

func readHexGolden(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if os.IsNotExist(err) && os.Getenv("BRAID_UPDATE_GOLDEN") == "1" {
		return nil
	}
	require.NoError(t, err)
	var clean []byte
	for _, line := range splitLines(raw) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		clean = append(clean, line...)
	}
	b, err := hex.DecodeString(string(clean))
	require.NoError(t, err)
	return b
}

func writeHexGolden(t *testing.T, name string, b []byte) {
	var out []byte
	for i := 0; i < len(b); i += 100 {
		out = append(out, hex.EncodeToString(b[i:min(i+100, len(b))])...)
		out = append(out, '\n')
	}
	require.NoError(t, os.WriteFile(filepath.Join("testdata", name), out, 0o644))
}

func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		line := b[:i]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		lines = append(lines, line)
		if i < len(b) {
			i++
		}
		b = b[i:]
	}
	return lines
}

func TestGenParallelEqualsSerial(t *testing.T) {
	for _, o := range []GenOptions{
		{Count: 100000},
		{Count: 70001, ASCII: true, Skew: true, Start: U128(123456789)},
		{Count: 50000, Format: record.Format{KeySize: 8, ValueSize: 24}},
		{Count: 40000, Format: record.Format{KeySize: 10, KLV: true}, MinValue: 0, MaxValue: 300},
	} {
		o1, o2 := o, o
		o1.Threads, o2.Threads = 1, 4
		b1, r1, err := GenerateBytes(o1)
		require.NoError(t, err)
		b2, r2, err := GenerateBytes(o2)
		require.NoError(t, err)
		require.Equal(t, b1, b2)
		require.Equal(t, r1, r2)
	}
}

func TestGenStartEqualsSlice(t *testing.T) {
	all := gen(t, GenOptions{Count: 3000, Skew: true})
	part := gen(t, GenOptions{Count: 1000, Start: U128(2000), Skew: true})
	require.Equal(t, all[200000:], part)
}

func TestGenOtherFormats(t *testing.T) {
	g := gen(t, GenOptions{Count: 100})
	f := gen(t, GenOptions{Count: 100, Format: record.Format{KeySize: 10, ValueSize: 90}})
	require.Equal(t, g, f)
	// A shorter fixed format is a prefix of the same stream.
	s := gen(t, GenOptions{Count: 100, Format: record.Format{KeySize: 8, ValueSize: 30}})
	for i := 0; i < 100; i++ {
		require.Equal(t, g[i*100:i*100+38], s[i*38:(i+1)*38])
	}
	// KLV: keys equal gensort keys; the file decodes exactly.
	k := gen(t, GenOptions{Count: 100, Format: record.Format{KeySize: 10, KLV: true}, MinValue: 5, MaxValue: 500})
	i := 0
	require.NoError(t, record.ScanKLV(k, 10, func(r record.KLVRecord) error {
		require.Equal(t, g[i*100:i*100+10], k[r.Off:r.Off+10])
		require.GreaterOrEqual(t, r.ValueLen, uint32(5))
		require.LessOrEqual(t, r.ValueLen, uint32(500))
		i++
		return nil
	}))
	require.Equal(t, 100, i)
	_, _, err := GenerateBytes(GenOptions{Count: 1, ASCII: true, Format: record.Format{KeySize: 8, ValueSize: 8}})
	require.ErrorIs(t, err, ErrInvalid)
}
