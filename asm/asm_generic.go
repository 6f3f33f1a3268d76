//go:build !amd64 || purego

package asm

import (
	"sync/atomic"
	"unsafe"
)

// The portable twin: no flush instruction, so persist must not rely on it
// for durability (CanFlush reports false); copies and fills are plain.

const canFlush = false

func ntPath() string { return "none" }

func flushCLWB(p unsafe.Pointer, n int)       {}
func flushCLFLUSHOPT(p unsafe.Pointer, n int) {}
func flushCLFLUSH(p unsafe.Pointer, n int)    {}

func persistCLWB(p unsafe.Pointer, n int) { sfence() }

var fenceWord atomic.Uint64

// A sequentially consistent read-modify-write is the strongest barrier
// portable Go offers.
func sfence() { fenceWord.Add(1) }
func mfence() { fenceWord.Add(1) }

func prefetch(p unsafe.Pointer) {}

func popCount(p unsafe.Pointer, n int) int { return popCountGeneric(p, n) }

func copyNT(dst, src unsafe.Pointer, n int) { copyGeneric(dst, src, n) }

func copyNTFence(dst, src unsafe.Pointer, n int) {
	copyGeneric(dst, src, n)
	sfence()
}

func fillNT(dst unsafe.Pointer, c byte, n int) { fillGeneric(dst, c, n) }

func crc32c(crc uint32, p unsafe.Pointer, n int) uint32 { return crc32cGeneric(crc, p, n) }

func popCountCRC32C(crc uint32, p unsafe.Pointer, n int) (uint32, int) {
	return popCountCRC32CGeneric(crc, p, n)
}
