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
// records (key gather from an in-memory image + sort): the radix sort
// with a scratch buffer (one read of the keys) and without (two reads),
// on 1 and 2 goroutines, the any-width code path, and the standard
// library's pdqsort on packed 15-byte entries.
func BenchmarkIndexSort(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		img, _, err := GenerateBytes(GenOptions{Count: uint64(n)})
		if err != nil {
			b.Fatal(err)
		}
		l := newLayout(10, 5, false)
		idx := make([]uint64, n*l.w)
		scratch := make([]uint64, n*l.w)
		for _, c := range []struct {
			name    string
			th      int
			scratch []uint64
			generic bool
		}{
			{"radix-scratch", 1, scratch, false}, {"radix-scratch", 2, scratch, false},
			{"radix-inplace", 1, nil, false}, {"radix-inplace", 2, nil, false},
			{"radix-scratch-generic", 2, scratch, true},
		} {
			b.Run(fmt.Sprintf("%s/threads=%d/n=%d", c.name, c.th, n), func(b *testing.B) {
				x := indexer{l: l, readers: c.th, sorters: c.th, generic: c.generic}
				b.SetBytes(int64(n * l.e))
				for b.Loop() {
					src := source{src: img, rs: 100, n: int64(n)}
					if err := x.build(context.Background(), &src, idx, c.scratch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("pdqsort/threads=1/n=%d", n), func(b *testing.B) {
			packed := make([]byte, n*l.e)
			b.SetBytes(int64(n * l.e))
			for b.Loop() {
				for i := 0; i < n; i++ {
					copy(packed[i*15:], img[i*100:i*100+10])
					packed[i*15+10] = byte(i)
				}
				stdsort.Sort(entrySlice{b: packed, e: l.e, k: 10, tmp: make([]byte, l.e)})
			}
		})
	}
}

// BenchmarkGather: assembling the output records of sorted entries from
// the input image (value-only gather), bucketed by pointer, split among
// the readers by source range and prefetched (what the sorter does), vs in
// key order.
func BenchmarkGather(b *testing.B) {
	const n = 1_000_000
	img, _, err := GenerateBytes(GenOptions{Count: n})
	if err != nil {
		b.Fatal(err)
	}
	l := newLayout(10, 5, false)
	idx := make([]uint64, n*l.w)
	x := indexer{l: l, readers: 2, sorters: 2}
	if err := x.build(context.Background(), &source{src: img, rs: 100, n: n}, idx, nil); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, n*100)
	for _, readers := range []int{1, 2} {
		j := &job{s: &Sorter{pools: Pools{Readers: readers}}, ctx: context.Background(), l: l, rs: 100}
		e := &emitter{j: j, src: img, order: make([]uint64, n)}
		b.Run(fmt.Sprintf("bucketed/readers=%d", readers), func(b *testing.B) {
			b.SetBytes(n * 100)
			for b.Loop() {
				if err := e.gatherFixed(buf, idx, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("key-order/readers=1", func(b *testing.B) {
		b.SetBytes(n * 100)
		for b.Loop() {
			gatherKeyOrder(buf, idx, 0, n, img, &l, 100)
		}
	})
}

func runtimeGC() { runtime.GC(); debug.FreeOSMemory() }
