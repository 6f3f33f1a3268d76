package sort

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
	"time"
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
	cur      int
	overlap  bool
	// overlap machinery
	jobs chan wjob
	free [2]chan struct{}
	errc chan error
	wg   sync.WaitGroup
	werr error
	// order is per-reader scratch of the bucketed gather.
	order [][]uint64
}

type wjob struct {
	buf int
	off int64
	n   int
}

func (j *job) newEmitter(src []byte, out *mapped, gatherPh, writePh phase) (*emitter, error) {
	e := &emitter{j: j, src: src, out: out, gatherPh: gatherPh, writePh: writePh, overlap: j.s.o.Overlap}
	nb := 1
	if e.overlap {
		nb = 2
	}
	for i := 0; i < nb; i++ {
		b, err := buffer(&j.s.wbufs[i], j.plan0.wb)
		if err != nil {
			return nil, err
		}
		e.bufs[i] = b
	}
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
	return e, nil
}

func (e *emitter) writer() {
	defer e.wg.Done()
	var first error
	for jb := range e.jobs {
		if first == nil {
			t := time.Now()
			first = e.j.putParallel(e.out, jb.off, e.bufs[jb.buf][:jb.n])
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
		err := e.j.putParallel(e.out, e.off, e.bufs[e.cur][:n])
		e.j.ph.stop()
		if err != nil {
			return err
		}
	}
	e.off += int64(n)
	if e.out == e.j.out {
		e.j.written += int64(n)
		if p := e.j.s.o.Progress; p != nil {
			p(e.j.written, e.j.size)
		}
	}
	return nil
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
func (e *emitter) emit(entries []byte, n int64) error {
	j := e.j
	l := j.l
	es := int64(l.e)
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
			bytes = c * int64(j.rs)
		} else {
			// KLV: as many records as fit; output offsets by prefix sum.
			offs = make([]int64, 1, 1024)
			for done+c < n {
				ent := entries[(done+c)*es:]
				sz := int64(l.k+klvHeader) + int64(l.vlen(ent))
				if bytes+sz > int64(len(buf)) {
					break
				}
				bytes += sz
				offs = append(offs, bytes)
				c++
			}
			if c == 0 {
				// One record larger than the write buffer: copy it directly.
				if e.overlap {
					e.free[e.cur] <- struct{}{}
					if err := e.drain(); err != nil {
						return err
					}
				}
				ent := entries[done*es:]
				p := int64(l.ptr(ent))
				sz := int64(l.k+klvHeader) + int64(l.vlen(ent))
				j.ph.start(e.writePh)
				err := e.out.put(e.off, e.src[p:p+sz])
				j.ph.stop()
				if err != nil {
					return err
				}
				e.off += sz
				if e.out == j.out {
					j.written += sz
				}
				done++
				continue
			}
		}
		chunk := entries[done*es : (done+c)*es]
		j.ph.start(e.gatherPh)
		parts := min(j.s.pools.Readers, int(c))
		for len(e.order) < parts {
			e.order = append(e.order, nil)
		}
		err := parallelChunks(j.ctx, j.s.pools.Readers, parts, func(part int) error {
			lo, hi := c*int64(part)/int64(parts), c*int64(part+1)/int64(parts)
			if j.rs > 0 {
				e.order[part] = gatherFixed(buf, chunk, lo, hi, e.src, l, j.rs, e.order[part])
			} else {
				gatherKLV(buf, chunk, offs, lo, hi, e.src, l)
			}
			return nil
		})
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

// drain waits until every buffer is free again (overlap mode).
func (e *emitter) drain() error {
	for i := range e.free {
		<-e.free[i]
	}
	for i := range e.free {
		e.free[i] <- struct{}{}
	}
	return nil
}

// gatherFixed assembles records lo..hi of a chunk: the key from the entry,
// the value (only the value, [WS] §3.2) from the source by pointer. The
// values are read in order of their position in the source, bucketed by
// pointer: a chunk's pointers are spread over the whole input, and visiting
// them bucket by bucket keeps the reads of one bucket within a few pages
// (TLB and DRAM-row locality), which on a VM with 4 KiB pages made the
// random gather more than twice as fast. The slot order goes through the
// caller's scratch slice, which is returned (grown) for reuse.
func gatherFixed(buf, chunk []byte, lo, hi int64, src []byte, l layout, rs int, order []uint64) []uint64 {
	e, k := int64(l.e), l.k
	r := int64(rs)
	n := hi - lo
	if n < 4096 || n >= 1<<24 {
		for i := lo; i < hi; i++ {
			ent := chunk[i*e : i*e+e]
			p := int64(l.ptr(ent)) * r
			dst := buf[i*r : i*r+r]
			putKey(dst, ent, k)
			copy(dst[k:], src[p+int64(k):p+r])
		}
		return order
	}
	// Buckets of about 256 KiB of source each, at most 2^14 of them.
	recs := uint64(len(src)) / uint64(r)
	shift := uint(bits.Len64(uint64(256<<10)/uint64(r))) - 1
	for recs>>shift >= 1<<14 {
		shift++
	}
	nb := int(recs>>shift) + 1
	var cntBuf [1<<14 + 2]uint32
	cnt := cntBuf[:nb+1]
	// Pass 1: keys into their slots (sequential), count buckets.
	for i := lo; i < hi; i++ {
		ent := chunk[i*e : i*e+e]
		putKey(buf[i*r:], ent, k)
		cnt[l.ptr(ent)>>shift+1]++
	}
	for b := 1; b <= nb; b++ {
		cnt[b] += cnt[b-1]
	}
	if int64(cap(order)) < n {
		order = make([]uint64, n)
	}
	order = order[:n]
	// Pass 2: (pointer, slot) pairs in bucket order.
	for i := lo; i < hi; i++ {
		p := l.ptr(chunk[i*e:])
		b := p >> shift
		order[cnt[b]] = p<<24 | uint64(i-lo)
		cnt[b]++
	}
	// Pass 3: the values.
	for _, v := range order {
		p := int64(v>>24) * r
		i := lo + int64(v&(1<<24-1))
		copy(buf[i*r+int64(k):i*r+r], src[p+int64(k):p+r])
	}
	return order
}

func gatherKLV(buf, chunk []byte, offs []int64, lo, hi int64, src []byte, l layout) {
	e, k := int64(l.e), l.k
	for i := lo; i < hi; i++ {
		ent := chunk[i*e : i*e+e]
		p := int64(l.ptr(ent))
		vl := int64(l.vlen(ent))
		dst := buf[offs[i]:offs[i+1]]
		copy(dst[:k], ent[:k])
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
		return fmt.Errorf("%w: temp dir: %v", ErrOptions, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: temp dir %s is not a directory", ErrOptions, dir)
	}
	f, err := os.CreateTemp(dir, ".pmsort-probe-*")
	if err != nil {
		return fmt.Errorf("%w: temp dir %s is not writable: %v", ErrOptions, dir, err)
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
	return m, nil
}

func (j *job) removeTemps() {
	for _, t := range j.temps {
		os.Remove(t)
	}
	j.temps = nil
}
