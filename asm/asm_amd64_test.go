//go:build !purego

package asm

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// archCopies lists every instruction-set variant this CPU can run, so each
// is tested whatever the dispatcher would pick.
func archCopies() map[string]copyFunc {
	isas := map[string]func(dst, src unsafe.Pointer, n int, fence bool){"SSE2": copyNTSSE2}
	if HasAVX2 {
		isas["AVX2"] = copyNTAVX2
	}
	if HasAVX512 {
		isas["AVX512"] = copyNTAVX512
	}
	m := map[string]copyFunc{}
	for name, f := range isas {
		m[name] = func(dst, src unsafe.Pointer, n int) { f(dst, src, n, false) }
		m[name+"+fence"] = func(dst, src unsafe.Pointer, n int) { f(dst, src, n, true) }
	}
	return m
}

func archFills() map[string]fillFunc {
	m := map[string]fillFunc{"SSE2": fillNTSSE2}
	if HasAVX2 {
		m["AVX2"] = fillNTAVX2
	}
	if HasAVX512 {
		m["AVX512"] = fillNTAVX512
	}
	return m
}

// TestDispatch runs CopyNT and CopyNTFence with every instruction set this
// CPU has selected in turn: the assembly dispatcher must reach each one.
func TestDispatch(t *testing.T) {
	defer func(a512, a2 bool) { useAVX512, useAVX2 = a512, a2 }(useAVX512, useAVX2)
	for _, c := range []struct {
		a512, a2 bool
		path     string
	}{{false, false, "sse2"}, {false, HasAVX2, "avx2"}, {HasAVX512, HasAVX2, "avx512"}} {
		if (c.path == "avx2" && !HasAVX2) || (c.path == "avx512" && !HasAVX512) {
			continue
		}
		useAVX512, useAVX2 = c.a512, c.a2
		if NTPath() != c.path {
			t.Fatalf("NTPath %s, want %s", NTPath(), c.path)
		}
		for _, n := range cutoffs {
			for _, off := range []int{0, 1, 8, 24, 40, 63} {
				checkCopy(t, CopyNT, off, off/3, n, 4)
				checkCopy(t, CopyNTFence, off, off/3, n, 5)
				checkFill(t, FillNT, off, n, 0x3c)
			}
		}
	}
}

type crcMode struct {
	name string
	set  func() (restore func())
}

// crcModes runs the CRC routines with each of their paths taken wherever
// it can be: as dispatched, one stream only (a CPU without PCLMULQDQ),
// three streams from the shortest input, and the portable twin.
func crcModes() []crcMode {
	with := func(min int, use, avx2 bool) func() func() {
		return func() func() {
			m, u, a := crcTripleMin, useCRC, usePopAVX2
			crcTripleMin, useCRC, usePopAVX2 = min, use && useCRC, avx2 && usePopAVX2
			return func() { crcTripleMin, useCRC, usePopAVX2 = m, u, a }
		}
	}
	modes := []crcMode{
		{"dispatch", with(crcTripleMin, true, true)},
		{"single", with(math.MaxInt, true, true)},
		{"triple", with(0, true, false)},
		{"generic", with(crcTripleMin, false, false)},
	}
	if usePopAVX2 {
		// PopCountCRC32C's three streams with the AVX2 count, from the
		// shortest input (CRC32C has no AVX2 path: the same as triple).
		modes = append(modes, crcMode{"triple-avx2", with(0, true, true)})
	}
	return modes
}

func TestCRCFeatures(t *testing.T) {
	t.Logf("POPCNT=%v SSE4.2=%v PCLMULQDQ=%v useCRC=%v tripleMin=%d", HasPOPCNT, HasSSE42, HasPCLMULQDQ, useCRC, crcTripleMin)
	require.Equal(t, HasSSE42 && HasPOPCNT, useCRC)
	require.Equal(t, uint64(xPowMod(64*crcBlock/8*2-33)), crcShift[crcBlock/8][0])
}

// haveAsm: this build has the assembly, which the cross-checks test
// against the twins.
const haveAsm = true
