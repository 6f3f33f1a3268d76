package sort

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	stdsort "sort"
	"testing"
)

// entrySlice sorts packed entries with the standard library's comparison
// sort (pdqsort), the baseline the radix sort is measured against.
type entrySlice struct {
	b   []byte
	e   int
	k   int
	tmp []byte
}

func (s entrySlice) Len() int { return len(s.b) / s.e }
func (s entrySlice) Less(i, j int) bool {
	return bytes.Compare(s.b[i*s.e:i*s.e+s.k], s.b[j*s.e:j*s.e+s.k]) < 0
}
func (s entrySlice) Swap(i, j int) {
	x, y := s.b[i*s.e:(i+1)*s.e], s.b[j*s.e:(j+1)*s.e]
	copy(s.tmp, x)
	copy(x, y)
	copy(y, s.tmp)
}

// BenchmarkIndexSort: building and sorting the IndexMap of n gensort
// records (key gather from an in-memory image + sort), radix vs the
// standard library's pdqsort on the same entries.
func BenchmarkIndexSort(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		img, _, err := GenerateBytes(GenOptions{Count: uint64(n)})
		if err != nil {
			b.Fatal(err)
		}
		l := newLayout(10, 5, false)
		idx := make([]byte, n*l.e)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("radix/threads=%d/n=%d", th, n), func(b *testing.B) {
				x := indexer{l: l, readers: th, sorters: th}
				b.SetBytes(int64(n * l.e))
				for b.Loop() {
					src := source{src: img, rs: 100, n: int64(n)}
					if err := x.build(context.Background(), &src, idx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("pdqsort/threads=1/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n * l.e))
			for b.Loop() {
				for i := 0; i < n; i++ {
					putKey(idx[i*l.e:], img[i*100:], 10)
					l.setPtr(idx[i*l.e:], uint64(i))
				}
				stdsort.Sort(entrySlice{b: idx, e: l.e, k: 10, tmp: make([]byte, l.e)})
			}
		})
	}
}

// BenchmarkGather: assembling the output records of sorted entries from
// the input image (value-only gather), bucketed by pointer (what the
// sorter does) vs in key order.
func BenchmarkGather(b *testing.B) {
	const n = 1_000_000
	img, _, err := GenerateBytes(GenOptions{Count: n})
	if err != nil {
		b.Fatal(err)
	}
	l := newLayout(10, 5, false)
	idx := make([]byte, n*l.e)
	x := indexer{l: l, readers: 2, sorters: 2}
	if err := x.build(context.Background(), &source{src: img, rs: 100, n: n}, idx); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, n*100)
	b.Run("bucketed", func(b *testing.B) {
		var order []uint64
		b.SetBytes(n * 100)
		for b.Loop() {
			order = gatherFixed(buf, idx, 0, n, img, l, 100, order)
		}
	})
	b.Run("key-order", func(b *testing.B) {
		b.SetBytes(n * 100)
		for b.Loop() {
			for i := int64(0); i < n; i++ {
				ent := idx[i*15 : i*15+15]
				p := int64(l.ptr(ent)) * 100
				putKey(buf[i*100:], ent, 10)
				copy(buf[i*100+10:i*100+100], img[p+10:p+100])
			}
		}
	})
}

func runtimeGC() { runtime.GC(); debug.FreeOSMemory() }
