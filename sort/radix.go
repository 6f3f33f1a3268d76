package sort

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/sort/internal/sortio"
)

// indexer builds sorted IndexMaps. The reader pool reads only the keys,
// once, at the record stride, writing the entries in input order and
// counting their first radix digit on the way. With a scratch buffer as
// large as the IndexMap, the entries are read into the scratch and
// scattered from there into their first-level buckets of the IndexMap
// (a parallel, cache-friendly pass in DRAM); without one, they are read
// into the IndexMap and permuted into their buckets in place (American
// flag sort). The sorter pool then sorts the buckets with an MSD radix
// sort (out of place through the scratch, or through a small scratch of
// its own), down to insertion sort on tiny sub-buckets.
type indexer struct {
	l       layout
	readers int // goroutines of the key gather (RUN read)
	sorters int // goroutines of the bucket sort (RUN sort)
	hist    [][]uint32
	ph      *phases
	readPh  phase // phase of the key passes (RUN read; RUN sort for EMS)
	generic bool  // tests: take the any-width code paths for wide entries too
	splitAt int64 // tests: split buckets larger than this into tasks (0: default)
}

// source says where the keys of one run are.
type source struct {
	src []byte
	// Fixed-size records: record i of the run is at src[(first+i)*rs:] and
	// its pointer is first+i.
	rs    int
	first int64
	// KLV: parts from klvSource.
	parts []klvPart
	n     int64 // records in the run
	// in is the mapped file src lies in, to which the key reads are
	// declared (device.go); nil when src is in DRAM.
	in *sortio.Mapped
}

// klvPart is a slice of a KLV run: n records starting at byte off.
type klvPart struct {
	off int64
	n   int64
}

// histFor returns partition pi's histogram of nb zeroed counters.
func (x *indexer) histFor(pi, nb int) []uint32 {
	for len(x.hist) <= pi {
		x.hist = append(x.hist, nil)
	}
	if cap(x.hist[pi]) < nb {
		x.hist[pi] = make([]uint32, nb)
	}
	h := x.hist[pi][:nb]
	clear(h)
	return h
}

// build fills idx (s.n entries of l.w words) with the entries of the run,
// sorted by key. scratch may be nil; if it has room for s.n entries the
// keys are read only once (its contents are destroyed).
func (x *indexer) build(ctx context.Context, s *source, idx, scratch []uint64) error {
	l := &x.l
	w := int64(l.w)
	if int64(len(idx)) < s.n*w {
		panic("sort: IndexMap buffer too small")
	}
	idx = idx[:s.n*w]
	if int64(len(scratch)) < s.n*w {
		scratch = nil
	} else {
		scratch = scratch[:s.n*w]
	}
	if s.n >= 1<<32 {
		// Bucket cursors are 32-bit; the planner keeps runs below this.
		return fmt.Errorf("%w: %d entries in one run", ErrInvalid, s.n)
	}
	db := firstBits(s.n, l.k)
	nb := 1 << db
	wide := l.wide() && !x.generic

	parts, starts := x.partition(s)
	hists := make([][]uint32, len(parts))
	for i := range parts {
		hists[i] = x.histFor(i, nb)
	}
	// Key bits of the first digit: the top db bits of the key, read from
	// its first two bytes (db <= 12, and <= 8 for one-byte keys).
	sh := 16 - db
	digit := func(key []byte) uint {
		if l.k == 1 {
			return uint(key[0]) << 8 >> sh
		}
		return uint(binary.BigEndian.Uint16(key)) >> sh
	}

	x.ph.start(x.readPh)
	// One read: entries in input order into the scratch (or the IndexMap
	// itself), counting first digits.
	dst := scratch
	if dst == nil {
		dst = idx
	}
	err := sortio.ParallelChunks(ctx, x.readers, len(parts), func(pi int) error {
		x.readKeys(s, parts[pi], dst[starts[pi]*w:starts[pi+1]*w], hists[pi], digit)
		return nil
	})
	x.ph.stop()
	if err != nil {
		return err
	}
	x.ph.start(phRunSort)
	bounds := bucketBounds(hists, nb)
	if scratch != nil {
		err = sortio.ParallelChunks(ctx, x.readers, len(parts), func(pi int) error {
			scatterEntries(l, scratch[starts[pi]*w:starts[pi+1]*w], idx, hists[pi], 64-db, wide)
			return nil
		})
	} else {
		partitionInPlace(l, idx, bounds, 64-db, wide)
	}
	if err == nil {
		err = sortBuckets(ctx, l, idx, scratch, bounds, db, x.sorters, wide, x.splitAt)
	}
	x.ph.stop()
	if err == nil && invariants.Enabled {
		if i := unsorted(l, idx); i >= 0 {
			panic(fmt.Sprintf("sort: IndexMap entry %d is smaller than entry %d", i, i-1))
		}
	}
	return err
}

// partition divides the run among the readers: pt.off is the first record
// index (fixed) or byte offset (KLV); starts[i] is part i's first entry
// index, starts[len(parts)] the run's entries.
func (x *indexer) partition(s *source) (parts []klvPart, starts []int64) {
	parts = s.parts
	if parts == nil {
		p := int64(max(1, x.readers))
		p = max(1, min(p, s.n))
		for i := int64(0); i < p; i++ {
			lo, hi := s.n*i/p, s.n*(i+1)/p
			parts = append(parts, klvPart{off: s.first + lo, n: hi - lo})
		}
	}
	starts = make([]int64, len(parts)+1)
	for i, pt := range parts {
		starts[i+1] = starts[i] + pt.n
	}
	return parts, starts
}

// bucketBounds turns the partitions' first-digit counts into the buckets'
// starts (nb+1 of them, the last the total) and each partition's write
// cursor inside each bucket (in hists, in place).
func bucketBounds(hists [][]uint32, nb int) []int64 {
	bounds := make([]int64, nb+1)
	var sum int64
	for d := 0; d < nb; d++ {
		bounds[d] = sum
		for pi := range hists {
			c := int64(hists[pi][d])
			hists[pi][d] = uint32(sum)
			sum += c
		}
	}
	bounds[nb] = sum
	return bounds
}

// unsorted returns the index of the first entry whose key is smaller than
// its predecessor's, or -1.
func unsorted(l *layout, idx []uint64) int {
	w := l.w
	for i := w; i+w <= len(idx); i += w {
		if l.keyLess(idx[i:i+w], idx[i-w:i]) {
			return i / w
		}
	}
	return -1
}

// readKeys writes the entries of one partition, in input order, to dst and
// counts their first digits.
func (x *indexer) readKeys(s *source, pt klvPart, dst []uint64, h []uint32, digit func([]byte) uint) {
	l := &x.l
	w := l.w
	s.declareKeys(pt, l.k)
	if s.parts == nil {
		src, rs := s.src, int64(s.rs)
		if l.wide() && l.k == 10 && !x.generic {
			d := asW2(dst)
			sh := 64 - firstShift(len(h))
			for i := range d {
				r := pt.off + int64(i)
				key := src[r*rs : r*rs+10]
				hi := binary.BigEndian.Uint64(key)
				d[i] = w2{hi, uint64(binary.BigEndian.Uint16(key[8:]))<<48 | uint64(r)}
				h[hi>>sh]++
			}
			return
		}
		for i := int64(0); i < pt.n; i++ {
			r := pt.off + i
			key := src[r*rs:]
			l.setEntry(dst[i*int64(w):], key, uint64(r), 0)
			h[digit(key)]++
		}
		return
	}
	off := pt.off
	for i := int64(0); i < pt.n; i++ {
		key := s.src[off:]
		vl := binary.LittleEndian.Uint32(key[l.k:])
		l.setEntry(dst[i*int64(w):], key, uint64(off), vl)
		h[digit(key)]++
		off += int64(l.k+klvHeader) + int64(vl)
	}
}

// firstShift is log2 of a histogram's length.
func firstShift(nb int) uint { return uint(bits.Len(uint(nb)) - 1) }

// partitionInPlace permutes idx so that every entry is in its
// first-level bucket (the top 64-sh bits of its first word; bounds[b] is
// where bucket b starts): American flag sort, one cycle of swaps at a
// time, with as many cursors as buckets.
func partitionInPlace(l *layout, idx []uint64, bounds []int64, sh uint, wide bool) {
	nb := len(bounds) - 1
	next := make([]int64, nb)
	copy(next, bounds[:nb])
	if wide {
		a := asW2(idx)
		for b := 0; b < nb; b++ {
			end := bounds[b+1]
			for next[b] < end {
				x := a[next[b]]
				d := int(x.hi >> sh)
				for d != b {
					j := next[d]
					next[d]++
					x, a[j] = a[j], x
					d = int(x.hi >> sh)
				}
				a[next[b]] = x
				next[b]++
			}
		}
		return
	}
	w := int64(l.w)
	var tmp [MaxKeySize/8 + 2]uint64
	x := tmp[:w]
	for b := 0; b < nb; b++ {
		end := bounds[b+1]
		for next[b] < end {
			i := next[b] * w
			d := int(idx[i] >> sh)
			if d == b {
				next[b]++
				continue
			}
			j := next[d] * w
			next[d]++
			copy(x, idx[i:i+w])
			copy(idx[i:i+w], idx[j:j+w])
			copy(idx[j:j+w], x)
		}
	}
}

// scatterEntries moves a partition's entries from src to their buckets in
// dst (bucket = the top 64-sh bits of the first word).
func scatterEntries(l *layout, src, dst []uint64, cur []uint32, sh uint, wide bool) {
	if wide {
		s, d := asW2(src), asW2(dst)
		for _, e := range s {
			b := e.hi >> sh
			d[cur[b]] = e
			cur[b]++
		}
		return
	}
	w := l.w
	for i := 0; i+w <= len(src); i += w {
		b := src[i] >> sh
		p := int(cur[b]) * w
		cur[b]++
		copy(dst[p:p+w], src[i:i+w])
	}
}

// sortTask is a slice of the IndexMap to sort from key bit bit on: either
// a group of first-level buckets [b0, b1) or one range [lo, hi).
type sortTask struct {
	lo, hi int64
	b0, b1 int
	bit    uint
}

// taskQueue is a LIFO of sort tasks shared by the sorter goroutines; big
// buckets (skewed keys) are split into their sub-buckets so that the work
// stays balanced.
type taskQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	tasks  []sortTask
	active int
}

func (q *taskQueue) push(t sortTask) {
	q.mu.Lock()
	q.tasks = append(q.tasks, t)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *taskQueue) pop() (sortTask, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.tasks) == 0 {
		if q.active == 0 {
			q.cond.Broadcast()
			return sortTask{}, false
		}
		q.cond.Wait()
	}
	t := q.tasks[len(q.tasks)-1]
	q.tasks = q.tasks[:len(q.tasks)-1]
	q.active++
	return t, true
}

func (q *taskQueue) done() {
	q.mu.Lock()
	q.active--
	if q.active == 0 && len(q.tasks) == 0 {
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

// tmpEntries is the size of a sorter's own scratch when the IndexMap has
// none: buckets up to this many entries are partitioned out of place,
// larger ones in place.
const tmpEntries = 1 << 14

// sortBuckets sorts each first-level bucket of idx (bounds[i] is the first
// entry of bucket i) from key bit bit on.
func sortBuckets(ctx context.Context, l *layout, idx, scratch []uint64, bounds []int64, bit uint, threads int, wide bool, splitAt int64) error {
	w := int64(l.w)
	n := int64(len(idx)) / w
	if bit >= l.kb || n < 2 {
		return nil
	}
	threads = max(1, threads)
	big := max(n/int64(threads*8), 1<<15)
	if splitAt > 0 {
		big = splitAt
	}
	q := &taskQueue{tasks: groupBuckets(bounds, big, bit)}
	q.cond = sync.NewCond(&q.mu)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs := radixSorter{l: l, wide: wide}
			if scratch == nil {
				rs.own = make([]uint64, tmpEntries*w)
			}
			for {
				task, ok := q.pop()
				if !ok {
					return
				}
				if err := ctx.Err(); err != nil {
					errMu.Lock()
					firstErr = err
					errMu.Unlock()
					q.done()
					continue
				}
				tmpOf := func(lo, hi int64) []uint64 {
					if scratch != nil {
						return scratch[lo*w : hi*w]
					}
					return rs.own
				}
				rs.run(q, task, idx, bounds, big, tmpOf)
				q.done()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// groupBuckets makes the tasks of the buckets between bounds: a bucket
// over big entries alone, small neighbouring buckets grouped into tasks of
// about big/4 entries.
func groupBuckets(bounds []int64, big int64, bit uint) []sortTask {
	var tasks []sortTask
	nb := len(bounds) - 1
	for b := 0; b < nb; {
		size := bounds[b+1] - bounds[b]
		if size > big {
			tasks = append(tasks, sortTask{lo: bounds[b], hi: bounds[b+1], bit: bit})
			b++
			continue
		}
		e := b
		for e < nb && bounds[e+1]-bounds[b] <= big/4 && bounds[e+1]-bounds[e] <= big {
			e++
		}
		if e == b {
			e = b + 1
		}
		tasks = append(tasks, sortTask{b0: b, b1: e, bit: bit})
		b = e
	}
	return tasks
}

// run sorts one task of sortBuckets: a group of small buckets, one
// radix pass over a big one (its sub-buckets pushed to q as tasks), or
// one bucket whole.
func (rs *radixSorter) run(q *taskQueue, task sortTask, idx []uint64, bounds []int64, big int64, tmpOf func(lo, hi int64) []uint64) {
	w := int64(rs.l.w)
	switch {
	case task.b1 > task.b0:
		for b := task.b0; b < task.b1; b++ {
			lo, hi := bounds[b], bounds[b+1]
			rs.sort(idx[lo*w:hi*w], tmpOf(lo, hi), task.bit)
		}
	case task.hi-task.lo > big:
		a := idx[task.lo*w : task.hi*w]
		ends, next := rs.level(a, tmpOf(task.lo, task.hi), task.bit)
		lo := int64(0)
		for _, e := range ends {
			hi := int64(e)
			switch {
			case hi-lo > insertionMax:
				q.push(sortTask{lo: task.lo + lo, hi: task.lo + hi, bit: next})
			case hi-lo > 1:
				rs.insertion(a[lo*w : hi*w])
			}
			lo = hi
		}
	default:
		rs.sort(idx[task.lo*w:task.hi*w], tmpOf(task.lo, task.hi), task.bit)
	}
}
