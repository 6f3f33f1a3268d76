//go:build !purego

package asm

import (
	"math"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

const canFlush = true

// cpuidex executes CPUID with the given leaf and sub-leaf.
//
//go:noescape
func cpuidex(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

func init() {
	// CLWB and CLFLUSHOPT are leaf 7, sub-leaf 0, EBX bits 24 and 23;
	// cpuid/v2 does not expose them, so ask the CPU ourselves.
	maxLeaf, _, _, _ := cpuidex(0, 0)
	if maxLeaf >= 7 {
		_, ebx, _, _ := cpuidex(7, 0)
		HasCLFLUSHOPT = ebx&(1<<23) != 0
		HasCLWB = ebx&(1<<24) != 0
	}
	_, _, ecx1, edx := cpuidex(1, 0)
	HasCLFLUSH = edx&(1<<19) != 0
	HasSSE2 = cpuid.CPU.Supports(cpuid.SSE2)
	HasAVX2 = cpuid.CPU.Supports(cpuid.AVX2) // includes the OS (XCR0) check
	HasAVX512 = cpuid.CPU.Supports(cpuid.AVX512F)
	useAVX512, useAVX2 = HasAVX512, HasAVX2
	HasPOPCNT = ecx1&(1<<23) != 0
	HasSSE42 = ecx1&(1<<20) != 0
	HasPCLMULQDQ = ecx1&(1<<1) != 0
	useCRC = HasSSE42 && HasPOPCNT
	usePopAVX2 = useCRC && HasAVX2 && HasPCLMULQDQ
	crcTripleMin = defaultTripleMin
	if !HasPCLMULQDQ {
		crcTripleMin = math.MaxInt
	}
}

func popCount(p unsafe.Pointer, n int) int {
	if HasPOPCNT {
		return popcntAsm(p, n)
	}
	return popCountGeneric(p, n)
}

//go:noescape
func popcntAsm(p unsafe.Pointer, n int) int

// useCRC selects the assembly CRC-32C (SSE4.2 and POPCNT; every x86-64
// CPU since 2008 has both). Tests lower it to run the twins.
var useCRC bool

func crc32c(crc uint32, p unsafe.Pointer, n int) uint32 {
	if useCRC {
		return crc32cAsm(crc, p, n)
	}
	return crc32cGeneric(crc, p, n)
}

func popCountCRC32C(crc uint32, p unsafe.Pointer, n int) (uint32, int) {
	if useCRC {
		if usePopAVX2 && n >= crcTripleMin {
			return popCountCRC32CAVX2(crc, p, n)
		}
		return popCountCRC32CAsm(crc, p, n)
	}
	return popCountCRC32CGeneric(crc, p, n)
}

// usePopAVX2 selects popCountCRC32CAVX2 for the inputs that take three
// streams: AVX2 counts the bits on the vector units while the CRC32
// chains keep the integer ones busy. Tests lower it.
var usePopAVX2 bool

// The CRC routines run one stream of CRC32Q (a word per 3 cycles: the
// instruction's latency) below crcTripleMin bytes, and from there three
// streams over three equal parts (a word per cycle: its throughput),
// combined with PCLMULQDQ (see xPowMod), in rounds of at most
// 3*crcBlock bytes; the last round splits what is left in three, and
// fewer than 24 bytes end the input on the single stream. crcTripleMin
// is read by the assembly, so tests can move it; without PCLMULQDQ it is
// infinite.
const (
	crcBlock         = 1024
	defaultTripleMin = 96
)

var crcTripleMin int

// crcShift[m] holds the multipliers of a round with parts of L = 8m bytes:
// x^(16L-33) mod P (shifts the first part's CRC over the other two) and
// x^(8L-33) mod P (the second's over the third). The assembly indexes it
// by 2L bytes.
var crcShift = func() (t [crcBlock/8 + 1][2]uint64) {
	for m := 1; m < len(t); m++ {
		t[m] = [2]uint64{uint64(xPowMod(128*m - 33)), uint64(xPowMod(64*m - 33))}
	}
	return t
}()

//go:noescape
func crc32cAsm(crc uint32, p unsafe.Pointer, n int) uint32

//go:noescape
func popCountCRC32CAsm(crc uint32, p unsafe.Pointer, n int) (uint32, int)

//go:noescape
func popCountCRC32CAVX2(crc uint32, p unsafe.Pointer, n int) (uint32, int)

// useAVX512 and useAVX2 select the streaming-store width. They start equal
// to the features and are lowered only by tests that exercise the narrower
// paths on a wide machine.
var useAVX512, useAVX2 bool

func ntPath() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2"
	}
	return "sse2"
}

func copyNT(dst, src unsafe.Pointer, n int) { streamCopy(dst, src, n, false) }

func copyNTFence(dst, src unsafe.Pointer, n int) { streamCopy(dst, src, n, true) }

// streamCopy dispatches on useAVX512 and useAVX2 in assembly and, with
// fence, ends with SFENCE.
//
//go:noescape
func streamCopy(dst, src unsafe.Pointer, n int, fence bool)

func fillNT(dst unsafe.Pointer, c byte, n int) {
	switch {
	case useAVX512:
		fillNTAVX512(dst, c, n)
	case useAVX2:
		fillNTAVX2(dst, c, n)
	default:
		fillNTSSE2(dst, c, n)
	}
}

//go:noescape
func flushCLWB(p unsafe.Pointer, n int)

//go:noescape
func flushCLFLUSHOPT(p unsafe.Pointer, n int)

//go:noescape
func flushCLFLUSH(p unsafe.Pointer, n int)

//go:noescape
func persistCLWB(p unsafe.Pointer, n int)

func sfence()

func mfence()

//go:noescape
func prefetch(p unsafe.Pointer)

//go:noescape
func copyNTSSE2(dst, src unsafe.Pointer, n int, fence bool)

//go:noescape
func copyNTAVX2(dst, src unsafe.Pointer, n int, fence bool)

//go:noescape
func copyNTAVX512(dst, src unsafe.Pointer, n int, fence bool)

//go:noescape
func fillNTSSE2(dst unsafe.Pointer, c byte, n int)

//go:noescape
func fillNTAVX2(dst unsafe.Pointer, c byte, n int)

//go:noescape
func fillNTAVX512(dst unsafe.Pointer, c byte, n int)
