// Package asm holds braid's CPU instructions for persistent memory: cache-line
// flushes (CLWB, CLFLUSHOPT, CLFLUSH), store and memory fences, non-temporal
// (streaming) copy and fill, and a prefetch.
//
// The package has no policy. It does not decide which flush instruction to
// use, when to fence, or when streaming stores pay off: package persist does.
// Every persistent structure in braid flushes, fences and streams through
// persist, never through asm directly, so that a simulated region can see
// each flush and fence; the compute helpers (PopCount, CRC32C,
// PopCountCRC32C, Prefetch) may be called directly.
//
// On amd64 the routines are assembly. On other architectures, and with the
// purego build tag, a portable Go twin is used: copies and fills are ordinary
// copies, fences are full memory barriers from sync/atomic, and the flush
// routines do nothing; [CanFlush] reports false there, so persist falls back
// to msync for durability.
//
// CPU features are read once at start-up into the Has… variables. They are
// exported for reporting only: the routines below check them themselves and
// pick the widest instructions available.
package asm

import "unsafe"

// LineSize is the size of a CPU cache line, the unit of flushing.
const LineSize = 64

// Feature bits, read once at start-up. On the purego build all are false.
var (
	HasCLWB       bool // CLWB: write back a line and keep it cached
	HasCLFLUSHOPT bool // CLFLUSHOPT: write back and evict, weakly ordered
	HasCLFLUSH    bool // CLFLUSH: write back and evict, strongly ordered
	HasSSE2       bool // MOVNTDQ/MOVNTI streaming stores
	HasAVX2       bool // VMOVNTDQ with 32-byte registers (and OS support)
	HasAVX512     bool // VMOVNTDQ with 64-byte registers (and OS support)
	HasPOPCNT     bool // POPCNT
	HasSSE42      bool // the CRC32 instruction (CRC-32C)
	HasPCLMULQDQ  bool // carry-less multiply: combines parallel CRC streams
)

// CanFlush reports whether this build can write cache lines back to memory
// with an instruction. It is false on the portable build.
func CanFlush() bool { return canFlush }

// NTPath names the instruction set the non-temporal copy and fill use:
// "avx512", "avx2", "sse2" or "none" (the portable twin).
func NTPath() string { return ntPath() }

// FlushCLWB writes back, with CLWB, every cache line that intersects
// [p, p+n). It does nothing when n <= 0. The caller must make sure the CPU
// has CLWB ([HasCLWB]); persist does.
func FlushCLWB(p unsafe.Pointer, n int) { flushCLWB(p, n) }

// FlushCLFLUSHOPT writes back and evicts, with CLFLUSHOPT, every cache line
// that intersects [p, p+n). It does nothing when n <= 0.
func FlushCLFLUSHOPT(p unsafe.Pointer, n int) { flushCLFLUSHOPT(p, n) }

// FlushCLFLUSH writes back and evicts, with CLFLUSH, every cache line that
// intersects [p, p+n). CLFLUSH is ordered with respect to stores, so no fence
// is needed between two of them, but it is the slowest of the three.
func FlushCLFLUSH(p unsafe.Pointer, n int) { flushCLFLUSH(p, n) }

// PersistCLWB is FlushCLWB followed by SFence in one call: the shortest
// instruction path for the most common persist, a few lines written back
// and waited for.
func PersistCLWB(p unsafe.Pointer, n int) { persistCLWB(p, n) }

// SFence orders all earlier stores, flushes and streaming stores before all
// later ones: after it returns, earlier CLWB/CLFLUSHOPT write-backs and
// streaming stores have reached the persistence domain.
func SFence() { sfence() }

// MFence is a full memory fence (loads and stores).
func MFence() { mfence() }

// Prefetch asks the CPU to bring the line holding p into all cache levels
// (PREFETCHT0). It never faults, whatever p is.
func Prefetch(p unsafe.Pointer) { prefetch(p) }

// CopyNT copies n bytes from src to dst with non-temporal stores. Every
// 8-byte-aligned word of dst that lies entirely inside [dst, dst+n) is written
// with a streaming store; the bytes before the first such word and after the
// last one (fewer than 8 at each end) are written with ordinary stores, so a
// caller that needs them durable must flush the first and the last line when
// dst or dst+n is not 8-byte aligned. The streaming stores are not ordered or
// durable until an [SFence]. The ranges must not overlap. n <= 0 copies
// nothing.
func CopyNT(dst, src unsafe.Pointer, n int) { copyNT(dst, src, n) }

// CopyNTFence is CopyNT followed by SFence in one call: a durable
// streaming copy (of the whole words of dst; see CopyNT for its edges).
func CopyNTFence(dst, src unsafe.Pointer, n int) { copyNTFence(dst, src, n) }

// PopCount returns the number of set bits in the n bytes at p (0 when
// n <= 0), with the POPCNT instruction where the CPU has it — also when the
// program is built for a baseline (GOAMD64=v1) where math/bits must test
// for it on every call.
func PopCount(p unsafe.Pointer, n int) int { return popCount(p, n) }

// CRC32C continues the CRC-32C (Castagnoli) crc over the n bytes at p and
// returns it (crc unchanged when n <= 0): the same value as
// crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), b), with the same
// pre- and post-inversion, so CRC32C(0, ...) is the checksum of the bytes
// and a checksum may be continued piece by piece. On amd64 it uses the
// SSE4.2 CRC32 instruction, three streams at once for longer inputs
// (combined with PCLMULQDQ), and is one call with no dispatch of its own.
func CRC32C(crc uint32, p unsafe.Pointer, n int) uint32 { return crc32c(crc, p, n) }

// PopCountCRC32C returns CRC32C(crc, p, n) and PopCount(p, n), computed in
// one pass over the bytes: on amd64 the bits are counted beside the CRC32
// chains, by POPCNT of each word or, from 96 bytes on a CPU with AVX2, by
// VPSHUFB on 32-byte blocks on the vector units.
func PopCountCRC32C(crc uint32, p unsafe.Pointer, n int) (uint32, int) {
	return popCountCRC32C(crc, p, n)
}

// FillNT sets n bytes at dst to c, with the same store kinds as [CopyNT].
func FillNT(dst unsafe.Pointer, c byte, n int) { fillNT(dst, c, n) }
