package main

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/braid-pm/braid/persist"
)

// op is what one access does.
type op uint8

const (
	// opRead copies size bytes from the file into a DRAM buffer (memmove:
	// vector loads).
	opRead op = iota
	// opWrite copies a DRAM buffer into the file with ordinary stores,
	// nothing flushed: what a write costs before it is made durable.
	opWrite
	// opWriteFlush is persist.Copy with Temporal: ordinary stores, a
	// write-back of every line (CLWB), a fence. Durable on return.
	opWriteFlush
	// opWriteNT is persist.Copy with NonTemporal: streaming stores, a
	// fence. Durable on return.
	opWriteNT
	// opPersist is persist.Store64 of one aligned word and Persist of its
	// line: the cost of a commit word.
	opPersist
)

var opNames = [...]string{"read", "write", "write+flush", "write-nt", "persist"}

func (o op) String() string { return opNames[o] }

// pattern is how a thread picks the offset of its next access.
type pattern uint8

const (
	seq  pattern = iota // each thread walks its own part of the area, wrapping at its end
	rand                // uniformly random, aligned to the access size, over the whole area
)

func (p pattern) String() string { return [...]string{"seq", "rand"}[p] }

// A group is a set of threads doing the same access over one area of the
// file. Several groups run at once to measure interference.
type group struct {
	op      op
	pattern pattern
	size    int // bytes per access
	threads int
	lo, hi  int // the area: byte offsets in the file

	// A mode that measures something other than the ops above (a log
	// append, a page update, ...) sets name and access instead of op:
	// access is called for each access of thread t (0 <= t < threads)
	// with the offset the pattern picked and a DRAM buffer of size
	// bytes; it keeps its per-thread state itself, indexed by t.
	name   string
	access func(t, off int, buf []byte) error

	// r is the region the group accesses (nil: the bench's, the -file's):
	// the scaling mode gives each emulated device its own.
	r *persist.Region
}

// region is the region g accesses: its own, else def.
func (g *group) region(def *persist.Region) *persist.Region {
	if g.r != nil {
		return g.r
	}
	return def
}

// opName is the group's op as it is recorded in the points.
func (g group) opName() string {
	if g.access != nil {
		return g.name
	}
	return g.op.String()
}

// stride is the distance between two accesses: the access size, except for
// persist, which takes a new cache line each time.
func (g group) stride() int {
	if g.op == opPersist {
		return 64
	}
	return g.size
}

func (g group) String() string {
	t := "threads"
	if g.threads == 1 {
		t = "thread"
	}
	return fmt.Sprintf("%s %s %s, %d %s", g.opName(), g.pattern, byteString(int64(g.size)), g.threads, t)
}

// sample is what a group did during one run.
type sample struct {
	bytes int64
	ops   int64
	wall  time.Duration // the run, start to stop
	busy  time.Duration // the threads' time in the access loop, summed
	hist  *hdrhistogram.Histogram
}

// gbs is the group's bandwidth in GB/s (1e9 bytes).
func (s sample) gbs() float64 {
	if s.wall <= 0 {
		return 0
	}
	return float64(s.bytes) / float64(s.wall.Nanoseconds())
}

// nsPerOp is the mean time of one access, per thread.
func (s sample) nsPerOp() float64 {
	if s.ops == 0 {
		return 0
	}
	return float64(s.busy.Nanoseconds()) / float64(s.ops)
}

// mean is the mean of the timed accesses, in ns: from the same samples as
// quantile, unlike nsPerOp (0 when the run was not timed).
func (s sample) mean() float64 {
	if s.hist == nil || s.hist.TotalCount() == 0 {
		return 0
	}
	return s.hist.Mean()
}

// quantile returns the q-quantile (0..1) of the timed accesses, in ns.
func (s sample) quantile(q float64) float64 {
	if s.hist == nil || s.hist.TotalCount() == 0 {
		return 0
	}
	return float64(s.hist.ValueAtQuantile(q * 100))
}

// Latency histograms: 1 ns to 10 s with 3 significant digits.
const histMaxNs = 10_000_000_000

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxNs, 3) }

// worker is one thread of a group.
type worker struct {
	g      *group
	t      int // thread number in the group
	r      *persist.Region
	mem    []byte
	buf    []byte // DRAM side of the access: destination of reads, source of writes
	lo, hi int    // seq: this thread's part; rand: the group's area
	off    int    // seq: next offset
	slots  uint64 // rand: accesses that fit in the area
	rng    uint64
	clock  int64 // ns of clock overhead to subtract from each timed access
	hist   *hdrhistogram.Histogram

	ops  int64
	busy time.Duration
	err  error
}

// newWorker makes thread t of group number gi.
func newWorker(g *group, gi, t int, r *persist.Region, timed bool, clock int64) *worker {
	seed := uint64(gi*maxThreads + t + 1)
	w := &worker{g: g, t: t, r: r, mem: r.Bytes(), clock: clock, rng: seed*0x9e3779b97f4a7c15 | 1}
	w.buf = alignedBuf(g.size)
	for i := range w.buf {
		w.buf[i] = byte(i*7 + t)
	}
	st := g.stride()
	if g.pattern == seq {
		part := (g.hi - g.lo) / g.threads / st * st
		w.lo = g.lo + t*part
		w.hi = w.lo + part
	} else {
		w.lo, w.hi = g.lo, g.hi
		w.slots = uint64((g.hi - g.lo) / st)
	}
	w.off = w.lo
	if timed {
		w.hist = newHist()
	}
	return w
}

// alignedBuf returns n bytes starting on a cache line.
func alignedBuf(n int) []byte {
	b := make([]byte, n+64)
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & 63)
	return b[skip : skip+n : skip+n]
}

// next returns the offset of the next access.
func (w *worker) next() int {
	st := w.g.stride()
	if w.g.pattern == seq {
		off := w.off
		w.off += st
		if w.off+st > w.hi {
			w.off = w.lo
		}
		return off
	}
	// xorshift64, then Lemire's multiply-shift instead of a modulo.
	x := w.rng
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	w.rng = x
	return w.lo + int((x>>32)*w.slots>>32)*st
}

// do performs one access at off.
func (w *worker) do(off int) {
	if w.g.access != nil {
		w.err = w.g.access(w.t, off, w.buf)
		return
	}
	n := w.g.size
	switch w.g.op {
	case opRead:
		copy(w.buf, w.mem[off:off+n])
		w.declareRead(off, n)
	case opWrite:
		copy(w.mem[off:off+n], w.buf)
	case opWriteFlush:
		w.err = w.r.Copy(w.mem[off:off+n], w.buf, persist.Temporal)
	case opWriteNT:
		w.err = w.r.Copy(w.mem[off:off+n], w.buf, persist.NonTemporal)
	case opPersist:
		persist.Store64(w.mem[off:off+8], uint64(w.ops))
		w.err = w.r.Persist(w.mem[off : off+8])
	}
}

// loop accesses until stop is set — at least once, so that a thread that
// got no CPU before the stop still yields a figure — and times each access
// when w.hist is set.
func (w *worker) loop(stop *atomic.Bool) {
	t0 := time.Now()
	if w.hist == nil {
		for {
			w.do(w.next())
			w.ops++
			if w.err != nil || stop.Load() {
				break
			}
		}
	} else {
		// The locked add waits until the access is complete — its loads
		// done, its stores and fenced write-backs globally visible — so
		// that the clock is not read while an SFENCE still drains (the
		// clock read alone is not ordered after it, and the drain would
		// then be charged to the next access or to none).
		var done uint64
		for {
			off := w.next()
			t := time.Now()
			w.do(off)
			atomic.AddUint64(&done, 1)
			ns := max(int64(time.Since(t))-w.clock, 1)
			w.hist.RecordValue(min(ns, histMaxNs))
			w.ops++
			if w.err != nil || stop.Load() {
				break
			}
		}
	}
	w.busy = time.Since(t0)
}

// runGroups runs the groups at once, each thread a goroutine locked to an
// OS thread, for d, and returns one sample per group. With timed, every
// access is timed into a histogram (which costs a clock read per access).
func (b *bench) runGroups(groups []group, d time.Duration, timed bool) ([]sample, error) {
	var (
		stop        atomic.Bool
		ready, done sync.WaitGroup
		start       = make(chan struct{})
		workers     = make([][]*worker, len(groups))
		failed      = make(chan struct{}) // closed when a worker faults
		failOnce    sync.Once
	)
	for gi := range groups {
		g := &groups[gi]
		r := g.region(b.r)
		if g.threads < 1 || g.size < 1 || g.lo < 0 || g.hi > len(r.Bytes()) || (g.hi-g.lo)/g.threads < g.stride() {
			return nil, fmt.Errorf("internal error: bad group %v over [%d, %d)", *g, g.lo, g.hi)
		}
		for t := range g.threads {
			w := newWorker(g, gi, t, r, timed, b.clock)
			workers[gi] = append(workers[gi], w)
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				ready.Done()
				<-start
				// A -file truncated by another program under the
				// mapping faults: an error naming the offset, and the
				// file is removed, instead of a dead process.
				err := r.Guard(func() error {
					w.loop(&stop)
					return nil
				})
				if err != nil {
					w.err = err
					failOnce.Do(func() { close(failed) })
				}
			}()
		}
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-b.ctx.Done():
		timer.Stop()
	case <-failed:
		timer.Stop()
	}
	stop.Store(true)
	done.Wait()
	wall := time.Since(t0)
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}

	out := make([]sample, len(groups))
	for gi, ws := range workers {
		s := sample{wall: wall}
		if timed {
			s.hist = newHist()
		}
		for _, w := range ws {
			if w.err != nil {
				return nil, fmt.Errorf("%v: %w", groups[gi], w.err)
			}
			s.ops += w.ops
			s.bytes += w.ops * int64(groups[gi].size)
			s.busy += w.busy
			if timed {
				s.hist.Merge(w.hist)
			}
		}
		out[gi] = s
	}
	return out, nil
}

// clockOverhead is the median cost, in ns, of timing one access with
// nothing in it (time.Now, the locked add, time.Since); timed accesses
// have it subtracted.
func clockOverhead() int64 {
	d := make([]int64, 4001)
	var done uint64
	for i := range d {
		t := time.Now()
		atomic.AddUint64(&done, 1)
		d[i] = int64(time.Since(t))
	}
	slices.Sort(d)
	return d[len(d)/2]
}
