package asm

import (
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"testing"
)

// BenchmarkCopyNT measures the streaming copy of every instruction set this
// CPU has into a 256 MiB buffer (sequential destinations, no fence) next to
// the built-in copy, and CopyNTFence (each copy fenced).
func BenchmarkCopyNT(b *testing.B) {
	dst := make([]byte, 256<<20)
	for i := range dst {
		dst[i] = 1
	}
	fns := allCopies()
	fns["memmove"] = copyGeneric
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		f := fns[name]
		for _, size := range []int{64, 256, 4096, 65536, 1 << 20} {
			// Not zeros: on the VM braid is measured on, streaming
			// stores of zero lines run nearly twice as fast as of any
			// other data (37 against 20 GB/s at 64 KiB), which no
			// real copy sees.
			src := make([]byte, size)
			for i := range src {
				src[i] = byte(i*7 + 1)
			}
			b.Run(fmt.Sprintf("%s/%d", name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				off := 0
				for b.Loop() {
					if off+size > len(dst) {
						off = 0
					}
					f(ptr(dst, off), ptr(src, 0), size)
					off += size
				}
				SFence()
			})
		}
	}
}

func BenchmarkPopCount(b *testing.B) {
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for _, size := range []int{64, 256, 4096} {
		b.Run(fmt.Sprintf("asm/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				PopCount(ptr(buf, 0), size)
			}
		})
		b.Run(fmt.Sprintf("generic/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				popCountGeneric(ptr(buf, 0), size)
			}
		})
	}
}

// BenchmarkCRC32C measures CRC32C and PopCountCRC32C in each mode of
// crcModes (on amd64: as dispatched, one stream, three streams from any
// length, the portable twin) next to what they replace, hash/crc32 and a
// PopCount pass. 24, 72 and 264 bytes are what walog checksums for
// 16-, 64- and 256-byte entries (sequence number and data).
func BenchmarkCRC32C(b *testing.B) {
	buf := randomBytes(3, 4096)
	tab := crc32.MakeTable(crc32.Castagnoli)
	sizes := []int{8, 24, 48, 72, 96, 136, 264, 520, 1032, 4096}
	for _, size := range sizes {
		for _, m := range crcModes() {
			b.Run(fmt.Sprintf("CRC32C/%s/%d", m.name, size), func(b *testing.B) {
				defer m.set()()
				b.SetBytes(int64(size))
				var c uint32
				for b.Loop() {
					c = CRC32C(c, ptr(buf, 0), size)
				}
			})
			b.Run(fmt.Sprintf("PopCountCRC32C/%s/%d", m.name, size), func(b *testing.B) {
				defer m.set()()
				b.SetBytes(int64(size))
				var c uint32
				for b.Loop() {
					c, _ = PopCountCRC32C(c, ptr(buf, 0), size)
				}
			})
		}
		b.Run(fmt.Sprintf("hash-crc32/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			var c uint32
			for b.Loop() {
				c = crc32.Update(c, tab, buf[:size])
			}
		})
		b.Run(fmt.Sprintf("hash-crc32+PopCount/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			var c uint32
			for b.Loop() {
				c = crc32.Update(c, tab, buf[:size]) + uint32(PopCount(ptr(buf, 0), size))
			}
		})
	}
}
