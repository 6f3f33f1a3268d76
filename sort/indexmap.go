package sort

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
)

// An IndexMap ([WS] §3.2) is an array of fixed-size entries
//
//	key[K] | pointer[P] little-endian | value_len uint32 LE (KLV only)
//
// packed with no padding (15 bytes for gensort keys and 5-byte pointers).
// For fixed-size records the pointer is the record's index in the input
// (so 5 bytes name 2^40 records whatever their size); for KLV records it is
// the record's byte offset, and the value length rides along so that output
// offsets can be prefix-summed without touching the input again.
type layout struct {
	k   int  // key bytes
	p   int  // pointer bytes, 5 or 8
	klv bool // entries carry the value length
	e   int  // entry bytes
}

func newLayout(k, p int, klv bool) layout {
	l := layout{k: k, p: p, klv: klv, e: k + p}
	if klv {
		l.e += klvHeader
	}
	return l
}

// maxPtr is the largest pointer the layout can hold.
func (l layout) maxPtr() uint64 {
	if l.p >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*uint(l.p)) - 1
}

func (l layout) ptr(ent []byte) uint64 {
	if l.p == 8 {
		return binary.LittleEndian.Uint64(ent[l.k:])
	}
	b := ent[l.k : l.k+5]
	return uint64(binary.LittleEndian.Uint32(b)) | uint64(b[4])<<32
}

func (l layout) setPtr(ent []byte, v uint64) {
	if l.p == 8 {
		binary.LittleEndian.PutUint64(ent[l.k:], v)
		return
	}
	b := ent[l.k : l.k+5]
	binary.LittleEndian.PutUint32(b, uint32(v))
	b[4] = byte(v >> 32)
}

func (l layout) vlen(ent []byte) uint32 {
	return binary.LittleEndian.Uint32(ent[l.k+l.p:])
}

// putKey copies a key into an entry; gensort's 10-byte key gets two moves
// instead of a memmove call.
func putKey(ent, key []byte, k int) {
	if k == 10 {
		binary.LittleEndian.PutUint64(ent, binary.LittleEndian.Uint64(key))
		binary.LittleEndian.PutUint16(ent[8:], binary.LittleEndian.Uint16(key[8:]))
		return
	}
	copy(ent[:k], key[:k])
}

// indexer builds sorted IndexMaps: a counting pass over the keys, a
// scatter of (key, pointer) entries straight into their first-level radix
// buckets, then an in-place MSD radix sort of every bucket (on the next
// bytes) on a pool of sorter goroutines. The IndexMap is the only large
// buffer: the sort needs no second copy of it.
type indexer struct {
	l       layout
	readers int // goroutines of the key gather (RUN read)
	sorters int // goroutines of the bucket sort (RUN sort)
	hist    [][]uint32
	ph      *phases
	readPh  phase // phase of the key passes (RUN read; RUN sort for EMS)
}

// source says where the keys of one run are.
type source struct {
	src []byte
	// Fixed-size records: record i of the run is at src[(first+i)*rs:] and
	// its pointer is first+i.
	rs    int
	first int64
	// KLV: parts from klvParts.
	parts []klvPart
	n     int64 // records in the run
}

// klvPart is a slice of a KLV run: n records starting at byte off.
type klvPart struct {
	off int64
	n   int64
}

// digitBits picks the first-level radix width: about 128 entries per
// bucket, between 8 and 16 bits, never more than the key has.
func digitBits(n int64, k int) uint {
	b := uint(bits.Len64(uint64(n)))
	if b > 7 {
		b -= 7
	} else {
		b = 0
	}
	b = max(8, min(b, 16))
	return min(b, 8*uint(k))
}

func firstDigit(key []byte, k int, shift uint) uint {
	if k == 1 {
		return uint(key[0]) >> shift
	}
	return (uint(key[0])<<8 | uint(key[1])) >> shift
}

// build fills idx (s.n entries) and sorts it.
func (x *indexer) build(ctx context.Context, s *source, idx []byte) error {
	l := x.l
	if int64(len(idx)) < s.n*int64(l.e) {
		panic("sort: IndexMap buffer too small")
	}
	b := digitBits(s.n, l.k)
	shift := 16 - b
	if l.k == 1 {
		shift = 8 - b
	}
	nb := 1 << b

	// Partition the run among the readers.
	var parts []klvPart // for fixed records: off = first record index
	if s.parts != nil {
		parts = s.parts
	} else {
		p := int64(max(1, x.readers))
		if p > s.n {
			p = max(1, s.n)
		}
		for i := int64(0); i < p; i++ {
			lo, hi := s.n*i/p, s.n*(i+1)/p
			parts = append(parts, klvPart{off: s.first + lo, n: hi - lo})
		}
	}
	for len(x.hist) < len(parts) {
		x.hist = append(x.hist, nil)
	}
	for i := range parts {
		if cap(x.hist[i]) < nb {
			x.hist[i] = make([]uint32, nb)
		}
		x.hist[i] = x.hist[i][:nb]
		clear(x.hist[i])
	}

	x.ph.start(x.readPh)
	// Pass 1: count first digits per partition.
	err := parallelChunks(ctx, x.readers, len(parts), func(pi int) error {
		h := x.hist[pi]
		pt := parts[pi]
		if s.parts == nil {
			src, rs, k := s.src, int64(s.rs), l.k
			for i, end := pt.off, pt.off+pt.n; i < end; i++ {
				h[firstDigit(src[i*rs:], k, shift)]++
			}
			return nil
		}
		off := pt.off
		for j := int64(0); j < pt.n; j++ {
			key := s.src[off:]
			h[firstDigit(key, l.k, shift)]++
			off += int64(l.k+klvHeader) + int64(binary.LittleEndian.Uint32(key[l.k:]))
		}
		return nil
	})
	if err != nil {
		x.ph.stop()
		return err
	}
	// Bucket starts, and each partition's write cursor inside each bucket.
	bounds := make([]int64, nb+1)
	var sum int64
	for d := 0; d < nb; d++ {
		bounds[d] = sum
		for pi := range parts {
			c := int64(x.hist[pi][d])
			x.hist[pi][d] = uint32(sum) // reused as cursor; fits: entries per run < 2^32
			sum += c
		}
	}
	bounds[nb] = sum
	if sum >= 1<<32 {
		// Cursors are 32-bit; runs are split well below this.
		x.ph.stop()
		return fmt.Errorf("%w: %d entries in one run", ErrOptions, sum)
	}
	// Pass 2: scatter (key, pointer) entries into their buckets.
	err = parallelChunks(ctx, x.readers, len(parts), func(pi int) error {
		cur := x.hist[pi]
		pt := parts[pi]
		e := int64(l.e)
		if s.parts == nil {
			src, rs, k := s.src, int64(s.rs), l.k
			for i, end := pt.off, pt.off+pt.n; i < end; i++ {
				key := src[i*rs:]
				d := firstDigit(key, k, shift)
				p := int64(cur[d])
				cur[d]++
				ent := idx[p*e : p*e+e]
				putKey(ent, key, k)
				l.setPtr(ent, uint64(i))
			}
			return nil
		}
		off := pt.off
		for j := int64(0); j < pt.n; j++ {
			key := s.src[off:]
			d := firstDigit(key, l.k, shift)
			p := int64(cur[d])
			cur[d]++
			ent := idx[p*e : p*e+e]
			putKey(ent, key, l.k)
			l.setPtr(ent, uint64(off))
			vl := binary.LittleEndian.Uint32(key[l.k:])
			binary.LittleEndian.PutUint32(ent[l.k+l.p:], vl)
			off += int64(l.k+klvHeader) + int64(vl)
		}
		return nil
	})
	x.ph.stop()
	if err != nil {
		return err
	}
	x.ph.start(phRunSort)
	err = sortBuckets(ctx, idx[:s.n*int64(l.e)], l, bounds, int(b/8), x.sorters)
	x.ph.stop()
	return err
}

// sortTask is a slice of the IndexMap to sort from key byte d on: either a
// group of first-level buckets [b0, b1) or one range [lo, hi).
type sortTask struct {
	lo, hi int64
	b0, b1 int
	d      int
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

// sortBuckets sorts each first-level bucket of idx (bounds[i] is the first
// entry of bucket i) from key byte d on.
func sortBuckets(ctx context.Context, idx []byte, l layout, bounds []int64, d, threads int) error {
	n := int64(len(idx) / l.e)
	if d >= l.k || n < 2 {
		return nil
	}
	threads = max(1, threads)
	big := max(n/int64(threads*8), 1<<14)
	q := &taskQueue{}
	q.cond = sync.NewCond(&q.mu)
	// Group small neighbouring buckets into tasks of ~big/4 entries.
	nb := len(bounds) - 1
	for b := 0; b < nb; {
		size := bounds[b+1] - bounds[b]
		if size > big {
			q.tasks = append(q.tasks, sortTask{lo: bounds[b], hi: bounds[b+1], d: d})
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
		q.tasks = append(q.tasks, sortTask{b0: b, b1: e, d: d})
		b = e
	}
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bs := bucketSorter{l: l, tmp: make([]byte, l.e)}
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
				switch {
				case task.b1 > task.b0:
					for b := task.b0; b < task.b1; b++ {
						lo, hi := bounds[b], bounds[b+1]
						bs.sort(idx[lo*int64(l.e):hi*int64(l.e)], int(hi-lo), task.d)
					}
				case task.hi-task.lo > big:
					// One radix pass here; the sub-buckets become tasks.
					a := idx[task.lo*int64(l.e) : task.hi*int64(l.e)]
					var ends [257]int
					dd := bs.partition(a, int(task.hi-task.lo), task.d, &ends)
					if dd < l.k {
						for v := 0; v < 256; v++ {
							if ends[v+1]-ends[v] > 1 {
								q.push(sortTask{lo: task.lo + int64(ends[v]), hi: task.lo + int64(ends[v+1]), d: dd + 1})
							}
						}
					}
				default:
					bs.sort(idx[task.lo*int64(l.e):task.hi*int64(l.e)], int(task.hi-task.lo), task.d)
				}
				q.done()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// bucketSorter sorts small slices of an IndexMap in place: MSD radix
// (American flag sort) on one key byte at a time, insertion sort below
// insertionMax entries.
type bucketSorter struct {
	l   layout
	tmp []byte
}

const insertionMax = 24

// keyLess compares two equal-length key suffixes.
func keyLess(x, y []byte) bool {
	for len(x) >= 8 {
		a, b := binary.BigEndian.Uint64(x), binary.BigEndian.Uint64(y)
		if a != b {
			return a < b
		}
		x, y = x[8:], y[8:]
	}
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

func (s *bucketSorter) insertion(a []byte, n, d int) {
	e, k := s.l.e, s.l.k
	tmp := s.tmp
	for i := 1; i < n; i++ {
		cur := a[i*e : i*e+e]
		j := i
		for j > 0 && keyLess(cur[d:k], a[(j-1)*e+d:(j-1)*e+k]) {
			j--
		}
		if j < i {
			copy(tmp, cur)
			copy(a[(j+1)*e:(i+1)*e], a[j*e:i*e])
			copy(a[j*e:j*e+e], tmp)
		}
	}
}

// partition permutes a (n entries) in place by key byte d, skipping bytes
// on which all entries agree. It returns the byte used (k if all keys are
// equal from d on) and the sub-bucket boundaries in ends.
func (s *bucketSorter) partition(a []byte, n, d int, ends *[257]int) int {
	e, k := s.l.e, s.l.k
	var cnt [256]int
	for ; d < k; d++ {
		cnt = [256]int{}
		for i := 0; i < n; i++ {
			cnt[a[i*e+d]]++
		}
		if cnt[a[d]] != n {
			break
		}
	}
	if d >= k {
		return k
	}
	var next [256]int
	sum := 0
	for v := 0; v < 256; v++ {
		ends[v] = sum
		next[v] = sum
		sum += cnt[v]
	}
	ends[256] = sum
	tmp := s.tmp
	for v := 0; v < 256; v++ {
		end := ends[v+1]
		for next[v] < end {
			i := next[v]
			w := int(a[i*e+d])
			if w == v {
				next[v]++
				continue
			}
			// Swap entry i into bucket w's next free slot.
			j := next[w]
			next[w]++
			x, y := a[i*e:i*e+e], a[j*e:j*e+e]
			copy(tmp, x)
			copy(x, y)
			copy(y, tmp)
		}
	}
	return d
}

func (s *bucketSorter) sort(a []byte, n, d int) {
	if n < 2 || d >= s.l.k {
		return
	}
	if n <= insertionMax {
		s.insertion(a, n, d)
		return
	}
	var ends [257]int
	d = s.partition(a, n, d, &ends)
	if d >= s.l.k {
		return
	}
	e := s.l.e
	for v := 0; v < 256; v++ {
		lo, hi := ends[v], ends[v+1]
		if hi-lo > 1 {
			s.sort(a[lo*e:hi*e], hi-lo, d+1)
		}
	}
}
