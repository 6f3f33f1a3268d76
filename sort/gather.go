package sort

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/sort/internal/sortio"
)

// gatherFixed assembles the c records of a chunk of sorted entries into
// buf with the reader pool: the key from the entry, the value (only the
// value, [WS] §3.2) from the source by pointer.
//
// The values are not read in key order. A chunk's pointers are spread over
// the whole input, and on a machine with 4 KiB pages (tmpfs, a VM) a
// random read costs a page walk as well as a cache miss. So the records
// are bucketed by their place in the source (buckets of about 256 KiB),
// the buckets are divided among the readers by source range — each reader
// reads its own part of the input, so no page is walked by two readers in
// one chunk — and each reader visits its buckets in address order,
// prefetching a few records ahead so that walks and misses overlap. Three
// parallel passes: keys into their slots and a bucket count per reader;
// (pointer, slot) pairs into bucket order (e.order); the values.
func (e *emitter) gatherFixed(buf []byte, chunk []uint64, c int64) error {
	j := e.j
	l := &j.l
	r := int64(j.rs)
	recs := uint64(len(e.src)) / uint64(r)
	g := &bucketGather{buf: buf, chunk: chunk, c: c, parts: int64(max(1, min(j.s.pools.Readers, int(c/1024))))}
	if c < 4096 || recs >= 1<<40 || r == int64(l.k) || e.inDRAM {
		return sortio.ParallelChunks(j.ctx, int(g.parts), int(g.parts), func(part int) error {
			lo, hi := g.split(part)
			gatherKeyOrder(buf, chunk, lo, hi, e.src, l, j.rs)
			e.declareGather(hi-lo, j.rs-l.k)
			return nil
		})
	}
	// Buckets of about 256 KiB of source each, at most 2^14 of them.
	g.shift = uint(bits.Len64(bucketBytes/uint64(r))) - 1
	for recs>>g.shift >= 1<<14 {
		g.shift++
	}
	g.nb = int(recs>>g.shift) + 1
	g.wide = j.orderWords() == 3
	if err := e.countBuckets(g); err != nil {
		return err
	}
	starts := e.bucketStarts(g)
	if err := e.orderByBucket(g); err != nil {
		return err
	}
	return e.gatherBuckets(g, starts)
}

// bucketGather is one chunk's bucketed gather: c entries of chunk, their
// records gathered into buf, by parts readers, through nb buckets of the
// source (record index >> shift).
type bucketGather struct {
	buf   []byte
	chunk []uint64
	c     int64
	parts int64
	shift uint
	nb    int
	wide  bool // (entry, slot) triples, not (pointer, slot) pairs
	order []uint64
}

// split is the range of the chunk's entries reader part takes in passes
// 1 and 2.
func (g *bucketGather) split(part int) (int64, int64) {
	return g.c * int64(part) / g.parts, g.c * int64(part+1) / g.parts
}

// countBuckets is pass 1: each reader's bucket counts (and, with a narrow
// order, the keys into their slots; a wide order carries the entry, key
// included, to pass 3).
func (e *emitter) countBuckets(g *bucketGather) error {
	l := &e.j.l
	w, r := int64(l.w), int64(e.j.rs)
	for len(e.hist) < int(g.parts) {
		e.hist = append(e.hist, nil)
	}
	for p := range g.parts {
		if cap(e.hist[p]) < g.nb {
			e.hist[p] = make([]uint32, g.nb)
		}
		e.hist[p] = e.hist[p][:g.nb]
		clear(e.hist[p])
	}
	return sortio.ParallelChunks(e.j.ctx, int(g.parts), int(g.parts), func(part int) error {
		lo, hi := g.split(part)
		h := e.hist[part]
		if g.wide {
			for _, x := range asW2(g.chunk)[lo:hi] {
				h[(x.lo&l.pm)>>g.shift]++
			}
			return nil
		}
		for i := lo; i < hi; i++ {
			ent := g.chunk[i*w : i*w+w]
			l.keyTo(g.buf[i*r:], ent)
			h[l.ptr(ent)>>g.shift]++
		}
		return nil
	})
}

// bucketStarts turns the counts into each reader's cursor in each bucket
// and returns the buckets' starts.
func (e *emitter) bucketStarts(g *bucketGather) []uint32 {
	if cap(e.starts) < g.nb+1 {
		e.starts = make([]uint32, g.nb+1)
	}
	starts := e.starts[:g.nb+1]
	var sum uint32
	for b := 0; b < g.nb; b++ {
		starts[b] = sum
		for p := range g.parts {
			n := e.hist[p][b]
			e.hist[p][b] = sum
			sum += n
		}
	}
	starts[g.nb] = sum
	return starts
}

// orderByBucket is pass 2: (pointer, slot) pairs in bucket order; for wide
// entries, (entry, slot) triples.
func (e *emitter) orderByBucket(g *bucketGather) error {
	l := &e.j.l
	w := int64(l.w)
	g.order = e.order[:g.c*e.j.orderWords()]
	order := g.order
	return sortio.ParallelChunks(e.j.ctx, int(g.parts), int(g.parts), func(part int) error {
		lo, hi := g.split(part)
		cur := e.hist[part]
		if g.wide {
			ents := asW2(g.chunk)
			for i := lo; i < hi; i++ {
				x := ents[i]
				b := (x.lo & l.pm) >> g.shift
				o := order[3*int64(cur[b]) : 3*int64(cur[b])+3]
				o[0], o[1], o[2] = x.hi, x.lo, uint64(i)
				cur[b]++
			}
			return nil
		}
		for i := lo; i < hi; i++ {
			p := l.ptr(g.chunk[i*w:])
			b := p >> g.shift
			order[cur[b]] = p<<24 | uint64(i)
			cur[b]++
		}
		return nil
	})
}

// gatherBuckets is pass 3: the values, each reader on its own range of the
// source (the buckets split at about equal record counts).
func (e *emitter) gatherBuckets(g *bucketGather, starts []uint32) error {
	l := &e.j.l
	r, k := int64(e.j.rs), int64(l.k)
	return sortio.ParallelChunks(e.j.ctx, int(g.parts), int(g.parts), func(part int) error {
		lo, hi := bucketSplit(starts, part, int(g.parts)), bucketSplit(starts, part+1, int(g.parts))
		if g.wide {
			gatherRecords(g.buf, g.order[3*lo:3*hi], e.src, r, l)
		} else {
			gatherValues(g.buf, g.order[lo:hi], e.src, r, k)
		}
		e.declareGather(int64(hi-lo), int(r-k))
		return nil
	})
}

// orderWords is the size of one element of the bucketed gather's order:
// a (pointer, slot) word, or (entry, slot) words — three for wide entries
// in OnePass, where the write buffer is large: each of its slots is then
// written once, key and value together, instead of key first and value
// later. MergePass, whose memory is the budget's merge buffer, keeps the
// order narrow and its write buffer a tenth larger. A KLV chunk's order
// is one output offset per record.
func (j *job) orderWords() int64 { return j.orderWordsIn(j.mode) }

// orderWordsIn is orderWords for a sort in mode (the planner's question).
func (j *job) orderWordsIn(mode Mode) int64 {
	if j.rs > 0 && j.l.wide() && mode == OnePass {
		return 3
	}
	return 1
}

// gatherRecords writes whole records — the key from the entry, the value
// from src by pointer — for (entry, slot) triples, prefetching ahead: each
// slot of the write buffer is visited once.
func gatherRecords(buf []byte, order []uint64, src []byte, r int64, l *layout) {
	k := int64(l.k)
	const ahead = 3 * prefetchAhead
	for x := 0; x+2 < len(order); x += 3 {
		if x+ahead+2 < len(order) {
			q := int64(order[x+ahead+1]&l.pm) * r
			prefetchRecord(src, q+k, q+r-1)
			d := int64(order[x+ahead+2]) * r
			prefetchRecord(buf, d, d+r-1)
		}
		hi, lo, i := order[x], order[x+1], int64(order[x+2])
		p := int64(lo&l.pm) * r
		dst := buf[i*r : i*r+r]
		if k == 10 {
			binary.BigEndian.PutUint64(dst, hi)
			binary.BigEndian.PutUint16(dst[8:], uint16(lo>>48))
		} else {
			e := [2]uint64{hi, lo}
			l.keyTo(dst, e[:])
		}
		copy(dst[k:], src[p+k:p+r])
	}
}

// bucketSplit returns where part (of parts) of the bucketed order starts:
// the start of the first bucket at or past part/parts of the records.
func bucketSplit(starts []uint32, part, parts int) int {
	total := int64(starts[len(starts)-1])
	if part >= parts {
		return int(total)
	}
	want := uint32(total * int64(part) / int64(parts))
	b, _ := slices.BinarySearch(starts, want)
	return int(starts[b])
}

// gatherValues copies the values of (pointer, slot) pairs from src into
// their slots of buf, prefetching both ahead.
func gatherValues(buf []byte, order []uint64, src []byte, r, k int64) {
	for x, v := range order {
		if x+prefetchAhead < len(order) {
			w := order[x+prefetchAhead]
			q := int64(w>>24) * r
			prefetchRecord(src, q+k, q+r-1)
			// The slots are scattered over the write buffer too: without
			// this the stores wait for their lines (measured: a third of
			// the gather's time).
			d := int64(w&(1<<24-1)) * r
			prefetchRecord(buf, d+k, d+r-1)
		}
		p := int64(v>>24) * r
		i := int64(v & (1<<24 - 1))
		copy(buf[i*r+k:i*r+r], src[p+k:p+r])
	}
}

// gatherKeyOrder assembles records lo..hi of a chunk in key order (small
// chunks, records without value, or inputs too large for the bucketed
// gather's 40-bit pointers).
func gatherKeyOrder(buf []byte, chunk []uint64, lo, hi int64, src []byte, l *layout, rs int) {
	w, k := int64(l.w), l.k
	r := int64(rs)
	hasValue := r > int64(k)
	for i := lo; i < hi; i++ {
		if hasValue && i+prefetchAhead < hi {
			q := int64(l.ptr(chunk[(i+prefetchAhead)*w:])) * r
			prefetchRecord(src, q+int64(k), q+r-1)
		}
		ent := chunk[i*w : i*w+w]
		p := int64(l.ptr(ent)) * r
		dst := buf[i*r : i*r+r]
		l.keyTo(dst, ent)
		copy(dst[k:], src[p+int64(k):p+r])
	}
}

// prefetchRecord prefetches the lines holding src[a] and src[b].
func prefetchRecord(src []byte, a, b int64) {
	asm.Prefetch(unsafe.Pointer(&src[a]))
	if b>>6 != a>>6 {
		asm.Prefetch(unsafe.Pointer(&src[b]))
	}
}

// gatherKLV assembles KLV records lo..hi of a chunk at their output
// offsets offs, prefetching the values ahead.
func gatherKLV(buf []byte, chunk []uint64, offs []int64, lo, hi int64, src []byte, l *layout) {
	w, k := int64(l.w), l.k
	for i := lo; i < hi; i++ {
		if i+prefetchAhead < hi {
			q := int64(l.ptr(chunk[(i+prefetchAhead)*w:])) + int64(k+klvHeader)
			if q < int64(len(src)) {
				asm.Prefetch(unsafe.Pointer(&src[q]))
			}
		}
		ent := chunk[i*w : i*w+w]
		p := int64(l.ptr(ent))
		vl := int64(l.vlen(ent))
		dst := buf[offs[i]:offs[i+1]]
		l.keyTo(dst, ent)
		binary.LittleEndian.PutUint32(dst[k:], uint32(vl))
		v := p + int64(k+klvHeader)
		copy(dst[k+klvHeader:], src[v:v+vl])
	}
}
