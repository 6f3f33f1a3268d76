package walog

import (
	"fmt"
	"testing"
)

// BenchmarkRAWLEncode is RAWL's bit packing alone, in DRAM: the cost that
// PopLog and Classic do not pay.
func BenchmarkRAWLEncode(b *testing.B) {
	for _, n := range []int{64, 256, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := &Log{format: RAWL, v: 1, stage: make([]byte, stageSize)}
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(i * 7)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				l.eN = 0
				l.writeRAWL(1, p, false)
			}
		})
	}
}

// BenchmarkPopcount is PopLog's popcount alone, in DRAM.
func BenchmarkPopcount(b *testing.B) {
	for _, n := range []int{64, 256, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(i * 7)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				popcount(p)
			}
		})
	}
}
