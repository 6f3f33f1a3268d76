package sort

import (
	"sync"
	"time"
	"unsafe"

	"github.com/braid-pm/braid/sort/internal/sortio"
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
	out      *sortio.Mapped
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
func (j *job) newEmitter(src []byte, out *sortio.Mapped, gatherPh, writePh phase, bufs [][]byte, order []uint64) *emitter {
	return j.newEmitterOverlap(src, out, gatherPh, writePh, bufs, order, j.s.o.Overlap)
}

// newEmitterOverlap is newEmitter with the choice of a background writer
// made by the caller (bufs must then hold two buffers).
func (j *job) newEmitterOverlap(src []byte, out *sortio.Mapped, gatherPh, writePh phase, bufs [][]byte, order []uint64, overlap bool) *emitter {
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
				if err := e.emitLarge(entries[done*w:]); err != nil {
					return err
				}
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
			err = sortio.ParallelChunks(j.ctx, j.s.pools.Readers, int(parts), func(part int) error {
				lo, hi := c*int64(part)/parts, c*int64(part+1)/parts
				gatherKLV(buf, chunk, offs, lo, hi, e.src, l)
				if hi > lo {
					e.declareGather(hi-lo, int(bytes/c))
				}
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

// emitLarge writes the KLV record of entry ent, larger than the write
// buffer, straight from the input to the output.
func (e *emitter) emitLarge(ent []uint64) error {
	j := e.j
	l := &j.l
	if e.overlap {
		e.free[e.cur] <- struct{}{}
		e.drain()
	}
	p := int64(l.ptr(ent))
	sz := int64(l.k+klvHeader) + int64(l.vlen(ent))
	j.ph.start(e.writePh)
	if e.gate != nil {
		e.gate.Lock()
	}
	err := e.out.Put(e.off, e.src[p:p+sz])
	if e.gate != nil {
		e.gate.Unlock()
	}
	j.ph.stop()
	if err != nil {
		return err
	}
	e.advance(sz)
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

// putParallel writes b at off with the writer pool, in pieces aligned to
// 256 bytes (the Optane write unit).
func (j *job) putParallel(out *sortio.Mapped, off int64, b []byte) error {
	w := j.s.pools.Writers
	n := int64(len(b))
	if w <= 1 || n < 256<<10 {
		return out.Put(off, b)
	}
	return sortio.ParallelChunks(j.ctx, w, w, func(i int) error {
		lo := (n * int64(i) / int64(w)) &^ 255
		hi := (n * int64(i+1) / int64(w)) &^ 255
		if i == w-1 {
			hi = n
		}
		return out.Put(off+lo, b[lo:hi])
	})
}

// copyParallel copies src, a range of from, into dst (DRAM) with the
// reader pool.
func (j *job) copyParallel(dst, src []byte, from *sortio.Mapped) error {
	r := j.s.pools.Readers
	n := int64(len(src))
	if r <= 1 || n < 256<<10 {
		copy(dst, src)
		from.ReadSeq(src)
		return nil
	}
	return sortio.ParallelChunks(j.ctx, r, r, func(i int) error {
		lo, hi := n*int64(i)/int64(r), n*int64(i+1)/int64(r)
		copy(dst[lo:hi], src[lo:hi])
		from.ReadSeq(src[lo:hi])
		return nil
	})
}
