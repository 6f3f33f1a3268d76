package asm

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkCRC compares CRC32C and PopCountCRC32C over buf[off:off+n], in
// each of the modes, with the portable twins, from two presets.
func checkCRC(t testing.TB, modes []crcMode, buf []byte, off, n int) {
	wantPop := popCountGeneric(ptr(buf, off), n)
	for _, crc := range []uint32{0, 0x9e3779b9} {
		want := crc32cGeneric(crc, ptr(buf, off), n)
		for _, m := range modes {
			restore := m.set()
			got := CRC32C(crc, ptr(buf, off), n)
			got2, pop := PopCountCRC32C(crc, ptr(buf, off), n)
			restore()
			if got != want || got2 != want || pop != wantPop {
				t.Fatalf("%s: n=%d off=%d crc %#x: CRC32C %#08x, PopCountCRC32C %#08x %d, want %#08x %d", m.name, n, off, crc, got, got2, pop, want, wantPop)
			}
		}
	}
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 11))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestCRC32CMatchesGeneric runs every length up to 4096+65 and the
// cut-offs at every alignment of a line, in each of the arch's modes
// (single stream only, three streams from the shortest input, ...).
func TestCRC32CMatchesGeneric(t *testing.T) {
	skipWithoutAsm(t)
	buf := randomBytes(5, crcTestMax+200)
	modes := crcModes()
	for n := -1; n <= 4096+65; n++ {
		checkCRC(t, modes, buf, (n+67)%67, n)
	}
	for _, n := range append(cutoffs, 23, 24, 25, 95, 96, 97, 3071, 3072, 3073, 3095, 3096, 3097, crcTestMax) {
		for off := 0; off < 72; off++ {
			checkCRC(t, modes, buf, off, n)
		}
	}
}

// crcTestMax is past the longest round of three streams, twice.
const crcTestMax = 7*1024 + 77

// TestCRC32CKnown checks the twin itself: the CRC-32C check value of
// "123456789", a bitwise CRC, continuation, and all-ones input.
func TestCRC32CKnown(t *testing.T) {
	s := []byte("123456789")
	require.Equal(t, uint32(0xe3069283), CRC32C(0, ptr(s, 0), len(s)))
	require.Equal(t, uint32(0xe3069283), crc32cGeneric(0, ptr(s, 0), len(s)))
	bitwise := func(crc uint32, b []byte) uint32 {
		crc = ^crc
		for _, x := range b {
			crc ^= uint32(x)
			for range 8 {
				crc = crc>>1 ^ crcPoly&-(crc&1)
			}
		}
		return ^crc
	}
	b := randomBytes(9, 5000)
	for _, n := range append(cutoffs, 3*1024+100, 5000) {
		require.Equal(t, bitwise(7, b[:n]), CRC32C(7, ptr(b, 0), n), n)
		// Continued piece by piece, as crc32.Update allows.
		h := n / 3
		require.Equal(t, CRC32C(7, ptr(b, 0), n), CRC32C(CRC32C(7, ptr(b, 0), h), ptr(b, h), n-h), n)
	}
	ones := make([]byte, 1000)
	for i := range ones {
		ones[i] = 0xff
	}
	c, pop := PopCountCRC32C(0, ptr(ones, 0), len(ones))
	require.Equal(t, 8000, pop)
	require.Equal(t, crc32.Checksum(ones, crc32.MakeTable(crc32.Castagnoli)), c)
}

// TestXPowMod checks the shift the three streams are combined with: L zero
// bytes fed to the raw register r give CRC32Q(0, clmul(r, x^(8L-33))),
// with the instruction and the carry-less multiply done in Go.
func TestXPowMod(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	raw := func(r uint32, b []byte) uint32 { return ^crc32.Update(^r, tab, b) }
	crc32q0 := func(w uint64) uint32 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		return raw(0, b[:])
	}
	clmul := func(a, b uint32) (p uint64) {
		for i := range 32 {
			if b>>i&1 != 0 {
				p ^= uint64(a) << i
			}
		}
		return p
	}
	require.Equal(t, uint32(1<<31), xPowMod(0))
	r := rand.New(rand.NewPCG(1, 1))
	for _, L := range []int{5, 8, 16, 24, 336, 1024, 2048} {
		zeros := make([]byte, L)
		for range 20 {
			reg := r.Uint32()
			require.Equal(t, raw(reg, zeros), crc32q0(clmul(reg, xPowMod(8*L-33))), "L=%d reg=%#x", L, reg)
		}
	}
}

// FuzzCRC32C checks CRC32C and PopCountCRC32C against the twins for
// arbitrary bytes, lengths, alignments and presets, in every mode.
func FuzzCRC32C(f *testing.F) {
	f.Add([]byte("123456789"), uint8(0), uint32(0))
	f.Add(make([]byte, 300), uint8(3), uint32(1))
	f.Add(randomBytes(1, 3200), uint8(1), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, b []byte, off uint8, crc uint32) {
		o := int(off) % (len(b) + 1)
		for _, m := range crcModes() {
			restore := m.set()
			got, pop := PopCountCRC32C(crc, ptr(b, o), len(b)-o)
			c := CRC32C(crc, ptr(b, o), len(b)-o)
			restore()
			want := crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), b[o:])
			if c != want || got != want || pop != popCountGeneric(ptr(b, o), len(b)-o) {
				t.Fatalf("%s: n=%d off=%d crc %#x: CRC32C %#08x, PopCountCRC32C %#08x %d, want %#08x", m.name, len(b)-o, o, crc, c, got, pop, want)
			}
		}
	})
}
