package sort

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// emitter writes records to a file through a DRAM write buffer: a reader
// pool gathers the records of a chunk of sorted IndexMap entries into the
// buffer (key from the entry, value from the source by pointer), then a
// writer pool copies the buffer to the file with streaming stores and
// persists it. By default the two never overlap (interference-aware
// scheduling, [WS] §3.5): reads stall while the buffer is written. With
// overlap, two buffers alternate and a background writer persists one
// while the readers fill the other.
type emitter struct {
	j        *job
	src      []byte // where values are read
	out      *mapped
	off      int64 // next output offset
	gatherPh phase
	writePh  phase
	bufs     [2][]byte
	// order is the gather's scratch: (pointer, slot) pairs of the
	// bucketed gather, or the output offsets of a KLV chunk. Its length
	// bounds the records of one chunk.
	order  []uint64
	hist   [][]uint32 // per-reader bucket counts of the bucketed gather
	starts []uint32   // bucket starts in order
	// inDRAM says the source is the sorter's own (huge-page) buffer, where
	// a random read costs no page walk: values are then read in key order.
	inDRAM  bool
	cur     int
	overlap bool
	// gate, if set, is held while the buffer is written, so that a
	// background merge's run reads never overlap the output writes.
	gate *sync.Mutex
	// overlap machinery
	jobs chan wjob
	free [2]chan struct{}
	errc chan error
	wg   sync.WaitGroup
}

type wjob struct {
	buf int
	off int64
	n   int
}

// newEmitter writes to out through bufs (one buffer, or two with
// overlap), gathering values from src; order is the gather's scratch.
func (j *job) newEmitter(src []byte, out *mapped, gatherPh, writePh phase, bufs [][]byte, order []uint64) *emitter {
	return j.newEmitterOverlap(src, out, gatherPh, writePh, bufs, order, j.s.o.Overlap)
}

// newEmitterOverlap is newEmitter with the choice of a background writer
// made by the caller (bufs must then hold two buffers).
func (j *job) newEmitterOverlap(src []byte, out *mapped, gatherPh, writePh phase, bufs [][]byte, order []uint64, overlap bool) *emitter {
	e := &emitter{j: j, src: src, out: out, gatherPh: gatherPh, writePh: writePh, overlap: overlap, order: order}
	copy(e.bufs[:], bufs)
	if e.overlap {
		e.jobs = make(chan wjob, 1)
		e.errc = make(chan error, 1)
		for i := range e.free {
			e.free[i] = make(chan struct{}, 1)
			e.free[i] <- struct{}{}
		}
		e.wg.Add(1)
		go e.writer()
	}
	return e
}

func (e *emitter) writer() {
	defer e.wg.Done()
	var first error
	for jb := range e.jobs {
		if first == nil {
			t := time.Now()
			first = e.put(jb.off, e.bufs[jb.buf][:jb.n])
			e.j.ph.add(e.writePh, time.Since(t))
		}
		e.free[jb.buf] <- struct{}{}
	}
	e.errc <- first
}

// buf returns the buffer to fill next (waiting for its previous write in
// overlap mode).
func (e *emitter) buf() []byte {
	if e.overlap {
		<-e.free[e.cur]
	}
	return e.bufs[e.cur]
}

// commit writes the first n bytes of the buffer returned by buf at the
// current output offset.
func (e *emitter) commit(n int) error {
	if n == 0 {
		if e.overlap {
			e.free[e.cur] <- struct{}{}
		}
		return nil
	}
	if e.overlap {
		e.jobs <- wjob{buf: e.cur, off: e.off, n: n}
		e.cur ^= 1
	} else {
		e.j.ph.start(e.writePh)
		err := e.put(e.off, e.bufs[e.cur][:n])
		e.j.ph.stop()
		if err != nil {
			return err
		}
	}
	e.advance(int64(n))
	return nil
}

// put writes b at off with the writer pool, holding the gate if any.
func (e *emitter) put(off int64, b []byte) error {
	if e.gate != nil {
		e.gate.Lock()
		defer e.gate.Unlock()
	}
	return e.j.putParallel(e.out, off, b)
}

func (e *emitter) advance(n int64) {
	e.off += n
	if e.out == e.j.out {
		e.j.written += n
		if p := e.j.s.o.Progress; p != nil {
			p(e.j.written, e.j.size)
		}
	}
}

// close waits for pending writes (overlap mode) and returns their error.
func (e *emitter) close() error {
	if !e.overlap {
		return nil
	}
	close(e.jobs)
	e.wg.Wait()
	return <-e.errc
}

// emit writes the records of n sorted entries.
func (e *emitter) emit(entries []uint64, n int64) error {
	j := e.j
	l := &j.l
	w := int64(l.w)
	for done := int64(0); done < n; {
		if err := j.ctx.Err(); err != nil {
			return err
		}
		buf := e.buf()
		var c int64 // entries in this chunk
		var bytes int64
		var offs []int64
		if j.rs > 0 {
			c = min(n-done, int64(len(buf)/j.rs))
			if !e.inDRAM {
				// The bucketed gather's scratch; slots numbered in 24 bits.
				c = min(c, int64(len(e.order))/j.orderWords(), 1<<24-1)
			}
			bytes = c * int64(j.rs)
		} else {
			// KLV: as many records as fit; output offsets by prefix sum.
			offs = int64s(e.order)
			offs[0] = 0
			for done+c < n && c+1 < int64(len(offs)) {
				ent := entries[(done+c)*w:]
				sz := int64(l.k+klvHeader) + int64(l.vlen(ent))
				if bytes+sz > int64(len(buf)) {
					break
				}
				bytes += sz
				c++
				offs[c] = bytes
			}
			if c == 0 {
				// One record larger than the write buffer: copy it directly.
				if e.overlap {
					e.free[e.cur] <- struct{}{}
					e.drain()
				}
				ent := entries[done*w:]
				p := int64(l.ptr(ent))
				sz := int64(l.k+klvHeader) + int64(l.vlen(ent))
				j.ph.start(e.writePh)
				if e.gate != nil {
					e.gate.Lock()
				}
				err := e.out.put(e.off, e.src[p:p+sz])
				if e.gate != nil {
					e.gate.Unlock()
				}
				j.ph.stop()
				if err != nil {
					return err
				}
				e.advance(sz)
				done++
				continue
			}
		}
		chunk := entries[done*w : (done+c)*w]
		j.ph.start(e.gatherPh)
		var err error
		if j.rs > 0 {
			err = e.gatherFixed(buf, chunk, c)
		} else {
			parts := int64(max(1, min(j.s.pools.Readers, int(c))))
			err = parallelChunks(j.ctx, j.s.pools.Readers, int(parts), func(part int) error {
				lo, hi := c*int64(part)/parts, c*int64(part+1)/parts
				gatherKLV(buf, chunk, offs, lo, hi, e.src, l)
				return nil
			})
		}
		j.ph.stop()
		if err != nil {
			return err
		}
		if err := e.commit(int(bytes)); err != nil {
			return err
		}
		done += c
	}
	return nil
}

// int64s views a word slice as int64s.
func int64s(b []uint64) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// drain waits until every buffer is free again (overlap mode).
func (e *emitter) drain() {
	for i := range e.free {
		<-e.free[i]
	}
	for i := range e.free {
		e.free[i] <- struct{}{}
	}
}

// prefetchAhead is how many records ahead the value gather prefetches:
// enough to keep a few page walks and a dozen cache misses in flight.
const prefetchAhead = 8

// bucketBytes is the span of source one bucket of the gather covers.
const bucketBytes = 256 << 10

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
	src := e.src
	w, k := int64(l.w), int64(l.k)
	r := int64(j.rs)
	recs := uint64(len(src)) / uint64(r)
	parts := int64(max(1, min(j.s.pools.Readers, int(c/1024))))
	split := func(part int) (int64, int64) { return c * int64(part) / parts, c * int64(part+1) / parts }
	if c < 4096 || recs >= 1<<40 || r == k || e.inDRAM {
		return parallelChunks(j.ctx, int(parts), int(parts), func(part int) error {
			lo, hi := split(part)
			gatherKeyOrder(buf, chunk, lo, hi, src, l, j.rs)
			return nil
		})
	}
	// Buckets of about 256 KiB of source each, at most 2^14 of them.
	shift := uint(bits.Len64(bucketBytes/uint64(r))) - 1
	for recs>>shift >= 1<<14 {
		shift++
	}
	nb := int(recs>>shift) + 1
	for len(e.hist) < int(parts) {
		e.hist = append(e.hist, nil)
	}
	for p := range parts {
		if cap(e.hist[p]) < nb {
			e.hist[p] = make([]uint32, nb)
		}
		e.hist[p] = e.hist[p][:nb]
		clear(e.hist[p])
	}
	// Pass 1: bucket counts (and, with a narrow order, the keys into their
	// slots; a wide order carries the entry, key included, to pass 3).
	wide := j.orderWords() == 3
	err := parallelChunks(j.ctx, int(parts), int(parts), func(part int) error {
		lo, hi := split(part)
		h := e.hist[part]
		if wide {
			for _, x := range asW2(chunk)[lo:hi] {
				h[(x.lo&l.pm)>>shift]++
			}
			return nil
		}
		for i := lo; i < hi; i++ {
			ent := chunk[i*w : i*w+w]
			l.keyTo(buf[i*r:], ent)
			h[l.ptr(ent)>>shift]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Each reader's cursor in each bucket; bucket starts.
	if cap(e.starts) < nb+1 {
		e.starts = make([]uint32, nb+1)
	}
	starts := e.starts[:nb+1]
	var sum uint32
	for b := 0; b < nb; b++ {
		starts[b] = sum
		for p := range parts {
			n := e.hist[p][b]
			e.hist[p][b] = sum
			sum += n
		}
	}
	starts[nb] = sum
	// Pass 2: (pointer, slot) pairs in bucket order; for wide entries,
	// (entry, slot) triples.
	order := e.order[:c*j.orderWords()]
	err = parallelChunks(j.ctx, int(parts), int(parts), func(part int) error {
		lo, hi := split(part)
		cur := e.hist[part]
		if wide {
			ents := asW2(chunk)
			for i := lo; i < hi; i++ {
				x := ents[i]
				b := (x.lo & l.pm) >> shift
				o := order[3*int64(cur[b]) : 3*int64(cur[b])+3]
				o[0], o[1], o[2] = x.hi, x.lo, uint64(i)
				cur[b]++
			}
			return nil
		}
		for i := lo; i < hi; i++ {
			p := l.ptr(chunk[i*w:])
			b := p >> shift
			order[cur[b]] = p<<24 | uint64(i)
			cur[b]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Pass 3: the values, each reader on its own range of the source (the
	// buckets split at about equal record counts).
	return parallelChunks(j.ctx, int(parts), int(parts), func(part int) error {
		lo, hi := bucketSplit(starts, part, int(parts)), bucketSplit(starts, part+1, int(parts))
		if wide {
			gatherRecords(buf, order[3*lo:3*hi], src, r, l)
		} else {
			gatherValues(buf, order[lo:hi], src, r, k)
		}
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

// putParallel writes b at off with the writer pool, in pieces aligned to
// 256 bytes (the Optane write unit).
func (j *job) putParallel(out *mapped, off int64, b []byte) error {
	w := j.s.pools.Writers
	n := int64(len(b))
	if w <= 1 || n < 256<<10 {
		return out.put(off, b)
	}
	return parallelChunks(j.ctx, w, w, func(i int) error {
		lo := (n * int64(i) / int64(w)) &^ 255
		hi := (n * int64(i+1) / int64(w)) &^ 255
		if i == w-1 {
			hi = n
		}
		return out.put(off+lo, b[lo:hi])
	})
}

// copyParallel copies src into dst (DRAM) with the reader pool.
func (j *job) copyParallel(dst, src []byte) error {
	r := j.s.pools.Readers
	n := int64(len(src))
	if r <= 1 || n < 256<<10 {
		copy(dst, src)
		return nil
	}
	return parallelChunks(j.ctx, r, r, func(i int) error {
		lo, hi := n*int64(i)/int64(r), n*int64(i+1)/int64(r)
		copy(dst[lo:hi], src[lo:hi])
		return nil
	})
}

// setupTempDir picks the run-file directory and checks that it is
// writable before any work is done.
func (j *job) setupTempDir(outDir string) error {
	dir := j.s.o.TempDir
	if dir == "" {
		dir = outDir
	}
	st, err := os.Stat(dir)
	if err != nil {
		return optionError("temp dir: %v", err)
	}
	if !st.IsDir() {
		return optionError("temp dir %s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".pmsort-probe-*")
	if err != nil {
		return optionError("temp dir %s is not writable: %v", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	j.tmpDir = dir
	return nil
}

// newRunFile creates a temporary run file of size bytes.
func (j *job) newRunFile(size int64) (*mapped, error) {
	if j.s.failAfterRuns > 0 && len(j.temps) >= j.s.failAfterRuns {
		return nil, fmt.Errorf("sort: injected failure creating run %d", len(j.temps))
	}
	name := filepath.Join(j.tmpDir, fmt.Sprintf("pmsort-run-%s-%d", randSuffix(), len(j.temps)))
	m, err := createMapped(name, size, j.s.o.ForcePMem)
	if err != nil {
		return nil, fmt.Errorf("sort: run file: %w", err)
	}
	j.temps = append(j.temps, name)
	j.runs = append(j.runs, m)
	return m, nil
}

func (j *job) removeTemps() {
	for _, t := range j.temps {
		os.Remove(t)
	}
	j.temps = nil
}
