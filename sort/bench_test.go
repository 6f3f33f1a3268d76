package sort

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	stdsort "sort"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/sort/internal/sortio"
	"github.com/braid-pm/braid/sort/sortbench"
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
		img, _, err := sortbench.GenerateBytes(sortbench.GenOptions{Count: uint64(n)})
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
// the input (value-only gather), bucketed by pointer, split among the
// readers by source range and prefetched (what the sorter does), vs in key
// order. The input is n records either in a file mapped the way the sorter
// maps its input (src=file: a tmpfs file under $BRAID_BENCH_DIR, default
// /dev/shm — 4 KiB pages, a page walk per random read) or in DRAM
// allocated as the sorter allocates its own buffers (src=dram: transparent
// huge pages where the system grants them, as for EMS's run buffer).
func BenchmarkGather(b *testing.B) {
	for _, n := range []int64{1_000_000, 10_000_000} {
		img, _, err := sortbench.GenerateBytes(sortbench.GenOptions{Count: uint64(n)})
		if err != nil {
			b.Fatal(err)
		}
		l := newLayout(10, 5, false)
		idx := make([]uint64, n*int64(l.w))
		x := indexer{l: l, readers: 2, sorters: 2}
		if err := x.build(context.Background(), &source{src: img, rs: 100, n: n}, idx, nil); err != nil {
			b.Fatal(err)
		}
		dir := os.Getenv("BRAID_BENCH_DIR")
		if dir == "" {
			dir = structtest.ShmDir()
		}
		path := filepath.Join(dir, fmt.Sprintf("braid-gather-bench-%d", os.Getpid()))
		if err := os.WriteFile(path, img, 0o644); err != nil {
			b.Fatal(err)
		}
		m, err := sortio.OpenMapped(path)
		os.Remove(path) // the mapping keeps the pages
		if err != nil {
			b.Fatal(err)
		}
		var dram []byte
		if _, err := buffer(&dram, int64(len(img))); err != nil {
			b.Fatal(err)
		}
		copy(dram, img)
		img = nil
		// At most 1 M records per chunk, as a 100 MB write buffer would.
		const chunk = 1_000_000
		buf := make([]byte, chunk*100)
		for _, src := range []struct {
			name string
			b    []byte
		}{{"file", m.Bytes()}, {"dram", dram}} {
			for _, readers := range []int{1, 2} {
				j := &job{s: &Sorter{pools: Pools{Readers: readers}}, ctx: context.Background(), l: l, rs: 100}
				e := &emitter{j: j, src: src.b, order: make([]uint64, chunk)}
				b.Run(fmt.Sprintf("bucketed/src=%s/readers=%d/n=%d", src.name, readers, n), func(b *testing.B) {
					b.SetBytes(n * 100)
					for b.Loop() {
						for c := int64(0); c < n; c += chunk {
							if err := e.gatherFixed(buf, idx[c*int64(l.w):], min(chunk, n-c)); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
			b.Run(fmt.Sprintf("key-order/src=%s/readers=1/n=%d", src.name, n), func(b *testing.B) {
				b.SetBytes(n * 100)
				for b.Loop() {
					for c := int64(0); c < n; c += chunk {
						gatherKeyOrder(buf, idx[c*int64(l.w):], 0, min(chunk, n-c), src.b, &l, 100)
					}
				}
			})
		}
		m.Close()
		freeBuffer(&dram)
	}
}

// BenchmarkOutputFile: what creating a sort's output costs on the file
// system under $BRAID_BENCH_DIR (default /dev/shm), per byte, in the steps
// the sorter takes: create (fallocate, or a sparse file on tmpfs),
// populate (fault the pages in, two goroutines, as the writer pool does),
// and the streaming copy into pages already there. $BRAID_BENCH_OUTPUT sets the size (default 256 MiB).
func BenchmarkOutputFile(b *testing.B) {
	dir := os.Getenv("BRAID_BENCH_DIR")
	if dir == "" {
		dir = structtest.ShmDir()
	}
	size := int64(256 << 20)
	if v := os.Getenv("BRAID_BENCH_OUTPUT"); v != "" {
		if _, err := fmt.Sscan(v, &size); err != nil || size < 1<<20 {
			b.Fatalf("BRAID_BENCH_OUTPUT=%q: want a size in bytes of at least 1 MiB", v)
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("braid-output-bench-%d", os.Getpid()))
	create := func(b *testing.B) *sortio.Mapped {
		os.Remove(path)
		m, err := sortio.CreateMapped(path, size, true)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	populate2 := func(b *testing.B, m *sortio.Mapped) {
		err := sortio.ParallelChunks(context.Background(), 2, 2, func(i int) error {
			d := m.Bytes()
			return sortio.Populate(d[int64(i)*size/2 : int64(i+1)*size/2])
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("create", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			m := create(b)
			b.StopTimer()
			m.Close()
			os.Remove(path)
			b.StartTimer()
		}
	})
	b.Run("populate", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			b.StopTimer()
			m := create(b)
			b.StartTimer()
			populate2(b, m)
			b.StopTimer()
			m.Close()
			os.Remove(path)
			b.StartTimer()
		}
	})
	b.Run("copy", func(b *testing.B) {
		m := create(b)
		defer os.Remove(path)
		defer m.Close()
		populate2(b, m)
		src := make([]byte, 64<<20)
		for i := range src {
			src[i] = byte(i*7 + 1)
		}
		j := &job{s: &Sorter{pools: Pools{Writers: 2}}, ctx: context.Background()}
		b.SetBytes(size)
		for b.Loop() {
			for off := int64(0); off < size; off += int64(len(src)) {
				if err := j.putParallel(m, off, src[:min(int64(len(src)), size-off)]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func runtimeGC() { runtime.GC(); debug.FreeOSMemory() }
