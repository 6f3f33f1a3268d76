package sort

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	stdsort "sort"
	"testing"

	"github.com/braid-pm/braid/sort/sortbench"
	"github.com/stretchr/testify/require"
)

// layouts covers every shape of in-memory entry: one word, the wide
// gensort layout, the pointer across two words (KLV), long keys.
var testLayouts = []struct {
	k, p int
	klv  bool
}{
	{1, 5, false}, {3, 5, false}, {4, 5, false}, {8, 5, false}, {10, 5, false}, {11, 5, false},
	{10, 8, false}, {16, 8, false}, {64, 8, false}, {3, 5, true}, {7, 5, true}, {10, 5, true},
	{10, 8, true}, {20, 5, true}, {1, 8, true},
}

func TestLayoutRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range testLayouts {
		l := newLayout(c.k, c.p, c.klv)
		require.Equal(t, (c.k+c.p+l.v+7)/8, l.w)
		const n = 50
		packed := make([]byte, n*l.e)
		for i := range packed {
			packed[i] = byte(rng.Uint32())
		}
		ents := make([]uint64, n*l.w)
		l.unpackRun(ents, packed)
		for i := 0; i < n; i++ {
			e := ents[i*l.w : (i+1)*l.w]
			src := packed[i*l.e:]
			key := make([]byte, c.k)
			l.keyTo(key, e)
			require.Equal(t, src[:c.k], key, "layout %+v", c)
			var p uint64
			for b := c.p - 1; b >= 0; b-- {
				p = p<<8 | uint64(src[c.k+b])
			}
			require.Equal(t, p, l.ptr(e), "layout %+v", c)
			if c.klv {
				require.Equal(t, binary.LittleEndian.Uint32(src[c.k+c.p:]), l.vlen(e))
			}
			// setEntry builds the same words.
			f := make([]uint64, l.w)
			var vl uint32
			if c.klv {
				vl = l.vlen(e)
			}
			l.setEntry(f, src[:c.k], p, vl)
			require.Equal(t, e, f)
			// Key order is the order of the key bytes.
			if i > 0 {
				prev := ents[(i-1)*l.w : i*l.w]
				want := bytes.Compare(packed[(i-1)*l.e:(i-1)*l.e+c.k], src[:c.k])
				require.Equal(t, want > 0, l.keyLess(e, prev))
				require.Equal(t, want < 0, l.keyLess(prev, e))
			}
		}
		got := l.packRun(append([]uint64(nil), ents...), n)
		require.Equal(t, packed, got, "layout %+v", c)
	}
}

// refSort sorts packed entries by key with the standard library.
func refKeys(l *layout, ents []uint64) [][]byte {
	n := len(ents) / l.w
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = make([]byte, l.k)
		l.keyTo(keys[i], ents[i*l.w:])
	}
	stdsort.Slice(keys, func(a, b int) bool { return bytes.Compare(keys[a], keys[b]) < 0 })
	return keys
}

// keyGen draws keys: random, from a tiny alphabet (many duplicates), with
// a long common prefix, or all equal.
func keyGen(rng *rand.Rand, kind string, k int) []byte {
	key := make([]byte, k)
	for i := range key {
		switch kind {
		case "random":
			key[i] = byte(rng.Uint32())
		case "tiny":
			key[i] = byte(rng.IntN(3))
		case "prefix":
			if i >= k-2 {
				key[i] = byte(rng.Uint32())
			} else {
				key[i] = 0xAB
			}
		case "equal":
			key[i] = 7
		}
	}
	return key
}

// The radix sort orders any layout like the standard library, with and
// without scratch, on one to three sorters, for sizes around its cut-offs,
// through the wide and the any-width code paths.
func TestRadixSortMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{0, 1, 2, 24, 25, 300, 8193, 12_000}
	for _, c := range testLayouts {
		if c.klv {
			continue // KLV sources are covered by the end-to-end sorts
		}
		l := newLayout(c.k, c.p, c.klv)
		for _, kind := range []string{"random", "tiny", "prefix", "equal"} {
			for _, n := range sizes {
				if n > 5000 && c.k != 10 && c.k != 1 && c.k != 64 {
					continue // the big sizes on a few layouts
				}
				// A fixed-record image: records of k+3 bytes.
				rs := c.k + 3
				img := make([]byte, n*rs)
				for i := 0; i < n; i++ {
					copy(img[i*rs:], keyGen(rng, kind, c.k))
				}
				for _, v := range []struct {
					scratch bool
					threads int
					generic bool
				}{{true, 2, false}, {false, 1, false}, {false, 3, false}, {true, 1, true}} {
					// Buckets of more than 1000 entries become tasks of
					// their own (as skewed keys make them at scale).
					name := fmt.Sprintf("k%d-p%d/%s/n=%d/%+v", c.k, c.p, kind, n, v)
					x := indexer{l: l, readers: v.threads, sorters: v.threads, generic: v.generic, splitAt: 1000}
					idx := make([]uint64, n*l.w)
					var scratch []uint64
					if v.scratch {
						scratch = make([]uint64, n*l.w)
					}
					require.NoError(t, x.build(context.Background(), &source{src: img, rs: rs, n: int64(n)}, idx, scratch), name)
					want := refKeys(&l, idx)
					seen := make([]bool, n)
					key := make([]byte, c.k)
					for i := 0; i < n; i++ {
						e := idx[i*l.w : (i+1)*l.w]
						l.keyTo(key, e)
						p := l.ptr(e)
						if !bytes.Equal(want[i], key) || p >= uint64(n) || seen[p] ||
							!bytes.Equal(img[int(p)*rs:int(p)*rs+c.k], key) {
							t.Fatalf("%s: entry %d: key %x pointer %d, want key %x", name, i, key, p, want[i])
						}
						seen[p] = true
					}
				}
			}
		}
	}
}

// The wide (gensort) and the any-width code paths build identical sorted
// IndexMaps up to the order of equal keys, which gensort keys do not have.
func TestRadixWideEqualsGeneric(t *testing.T) {
	img, _, err := sortbench.GenerateBytes(sortbench.GenOptions{Count: 60_000, Skew: true})
	require.NoError(t, err)
	l := newLayout(10, 5, false)
	var got [2][]uint64
	for i, generic := range []bool{false, true} {
		x := indexer{l: l, readers: 2, sorters: 2, generic: generic}
		got[i] = make([]uint64, 60_000*l.w)
		require.NoError(t, x.build(context.Background(), &source{src: img, rs: 100, n: 60_000}, got[i], make([]uint64, len(got[i]))))
	}
	for i := 0; i < 60_000; i++ {
		a, b := got[0][2*i:2*i+2], got[1][2*i:2*i+2]
		require.False(t, l.keyLess(a, b) || l.keyLess(b, a), "entry %d", i)
	}
}

// FuzzRunEntries: decoding run-file entries (packed) and encoding them
// again gives back the same bytes, for every layout.
func FuzzRunEntries(f *testing.F) {
	f.Add([]byte("0123456789abcde"), uint8(10), false, false)
	f.Add(make([]byte, 64), uint8(1), true, true)
	f.Fuzz(func(t *testing.T, b []byte, k uint8, ptr8, klv bool) {
		if k < 1 || int(k) > MaxKeySize {
			return
		}
		p := 5
		if ptr8 {
			p = 8
		}
		l := newLayout(int(k), p, klv)
		n := len(b) / l.e
		b = b[:n*l.e]
		ents := make([]uint64, n*l.w)
		l.unpackRun(ents, b)
		require.Equal(t, b, l.packRun(ents, int64(n)))
	})
}
