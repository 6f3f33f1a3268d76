package asm

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// cutoffs are the lengths around every branch of the assembly: word, vector
// and unrolled-loop boundaries.
var cutoffs = []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129,
	255, 256, 257, 511, 512, 513, 4095, 4096, 4097}

type copyFunc func(dst, src unsafe.Pointer, n int)
type fillFunc func(dst unsafe.Pointer, c byte, n int)

// checkCopy copies n bytes to dst+off with f and compares the whole buffer,
// guard bytes included, with what the portable twin produces.
func checkCopy(t testing.TB, f copyFunc, off, soff, n int, seed uint64) {
	const guard = 80
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	src := make([]byte, soff+n+1)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	got := make([]byte, off+n+guard)
	want := make([]byte, off+n+guard)
	for i := range got {
		got[i] = 0xa5
		want[i] = 0xa5
	}
	f(ptr(got, off), ptr(src, soff), n)
	copyGeneric(ptr(want, off), ptr(src, soff), n)
	if string(got) != string(want) {
		t.Fatalf("copy n=%d dst offset %d src offset %d: result differs from the generic copy", n, off, soff)
	}
}

func checkFill(t testing.TB, f fillFunc, off, n int, c byte) {
	const guard = 80
	got := make([]byte, off+n+guard)
	want := make([]byte, off+n+guard)
	for i := range got {
		got[i], want[i] = 0x5a, 0x5a
	}
	f(ptr(got, off), c, n)
	fillGeneric(ptr(want, off), c, n)
	if string(got) != string(want) {
		t.Fatalf("fill n=%d offset %d: result differs from the generic fill", n, off)
	}
}

// ptr returns the address of b[off] without a bounds check on empty tails.
func ptr(b []byte, off int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), off)
}

func allCopies() map[string]copyFunc {
	m := map[string]copyFunc{"CopyNT": CopyNT, "CopyNTFence": CopyNTFence}
	for k, v := range archCopies() {
		m[k] = v
	}
	return m
}

func allFills() map[string]fillFunc {
	m := map[string]fillFunc{"FillNT": FillNT}
	for k, v := range archFills() {
		m[k] = v
	}
	return m
}

// skipWithoutAsm skips a cross-check of the assembly against its twin in
// a build without assembly (purego, or not amd64): there CopyNT, FillNT,
// PopCount and CRC32C are the twins, so the check could not fail.
func skipWithoutAsm(t testing.TB) {
	t.Helper()
	if !haveAsm {
		t.Skip("no assembly in this build (purego or not amd64): the functions are their twins, nothing to cross-check")
	}
}

func TestCopyNTMatchesGeneric(t *testing.T) {
	skipWithoutAsm(t)
	for name, f := range allCopies() {
		t.Run(name, func(t *testing.T) {
			for n := 0; n <= 4096+65; n++ {
				checkCopy(t, f, n%67, n%13, n, 1)
			}
			for _, n := range cutoffs {
				for off := 0; off < 72; off++ {
					checkCopy(t, f, off, (off*7)%64, n, 2)
				}
			}
		})
	}
}

func TestFillNTMatchesGeneric(t *testing.T) {
	skipWithoutAsm(t)
	for name, f := range allFills() {
		t.Run(name, func(t *testing.T) {
			for n := 0; n <= 4096+65; n++ {
				checkFill(t, f, n%67, n, byte(n))
			}
			for _, n := range cutoffs {
				for off := 0; off < 72; off++ {
					checkFill(t, f, off, n, 0xff)
					checkFill(t, f, off, n, 0)
				}
			}
		})
	}
}

func TestNegativeLengthsDoNothing(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	src := []byte{9, 9, 9, 9, 9, 9, 9, 9, 9}
	for _, f := range allCopies() {
		f(ptr(b, 0), ptr(src, 0), -1)
		f(ptr(b, 0), ptr(src, 0), 0)
	}
	for _, f := range allFills() {
		f(ptr(b, 0), 0, -5)
	}
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, b)
}

// TestFlushKeepsContents runs every flush over every length and alignment
// around the line size; a flush must never change memory and must accept
// n <= 0.
func TestFlushKeepsContents(t *testing.T) {
	buf := make([]byte, 3*4096)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	want := append([]byte(nil), buf...)
	flushes := map[string]func(unsafe.Pointer, int){
		"CLFLUSH": FlushCLFLUSH,
	}
	if HasCLWB {
		flushes["CLWB"] = FlushCLWB
		flushes["PersistCLWB"] = PersistCLWB
	}
	if HasCLFLUSHOPT {
		flushes["CLFLUSHOPT"] = FlushCLFLUSHOPT
	}
	if !HasCLFLUSH {
		delete(flushes, "CLFLUSH")
	}
	for name, f := range flushes {
		for _, n := range append(cutoffs, -1, 8191) {
			for _, off := range []int{0, 1, 8, 63, 64, 100} {
				f(ptr(buf, off), n)
			}
		}
		SFence()
		MFence()
		require.Equal(t, want, buf, name)
	}
	Prefetch(ptr(buf, 77))
	Prefetch(nil) // never faults
}

func TestFeatures(t *testing.T) {
	t.Logf("CLWB=%v CLFLUSHOPT=%v CLFLUSH=%v SSE2=%v AVX2=%v AVX512=%v flush=%v nt=%s",
		HasCLWB, HasCLFLUSHOPT, HasCLFLUSH, HasSSE2, HasAVX2, HasAVX512, CanFlush(), NTPath())
	if CanFlush() {
		require.True(t, HasCLFLUSH, "every amd64 CPU has CLFLUSH")
		require.True(t, HasSSE2, "every amd64 CPU has SSE2")
		require.NotEqual(t, "none", NTPath())
	} else {
		require.Equal(t, "none", NTPath())
	}
}

// FuzzCopyNT checks the streaming copy and fill of every instruction set,
// and PopCount, against the portable twins for arbitrary lengths, alignments and bytes.
func FuzzCopyNT(f *testing.F) {
	skipWithoutAsm(f)
	f.Add(uint16(0), uint8(0), uint8(0), uint64(1))
	f.Add(uint16(257), uint8(3), uint8(5), uint64(2))
	f.Add(uint16(4097), uint8(63), uint8(1), uint64(3))
	f.Fuzz(func(t *testing.T, n uint16, off, soff uint8, seed uint64) {
		ln, o, so := int(n%8200), int(off%128), int(soff%128)
		for _, fn := range allCopies() {
			checkCopy(t, fn, o, so, ln, seed)
		}
		for _, fn := range allFills() {
			checkFill(t, fn, o, ln, byte(seed))
		}
		buf := make([]byte, o+ln)
		for i := range buf {
			buf[i] = byte(seed >> (i % 64))
		}
		if got, want := PopCount(ptr(buf, o), ln), popCountGeneric(ptr(buf, o), ln); got != want {
			t.Fatalf("PopCount n=%d off=%d: %d, generic %d", ln, o, got, want)
		}
	})
}

func TestPopCountMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 4200)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	ones := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	require.Equal(t, 65, PopCount(ptr(ones, 0), len(ones)))
	skipWithoutAsm(t)
	for n := -1; n <= 300; n++ {
		for _, off := range []int{0, 1, 7, 8, 13} {
			if got, want := PopCount(ptr(buf, off), n), popCountGeneric(ptr(buf, off), n); got != want {
				t.Fatalf("PopCount n=%d off=%d = %d, want %d", n, off, got, want)
			}
		}
	}
	for _, n := range cutoffs {
		require.Equal(t, popCountGeneric(ptr(buf, 3), n), PopCount(ptr(buf, 3), n), n)
	}
}
