package sort

import (
	"errors"
	"fmt"
	"time"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/internal/sortio"
)

// entryRun streams one run file of packed entries through its share of
// the merge buffer, decoded.
type entryRun struct {
	m     *sortio.Mapped
	body  []byte   // the run's packed entries in its file
	next  int64    // first byte of body not yet loaded
	share []uint64 // decoded entries
	pos   int      // head entry (index into share)
	end   int      // entries loaded
}

// refill loads the next share of a run's entries (MERGE read: sequential
// reads of the run file, decoded into DRAM by the reader pool).
func (j *job) refill(r *entryRun) error {
	l := &j.l
	e := int64(l.e)
	w := l.w
	n := min(int64(len(r.share)/w), (int64(len(r.body))-r.next)/e)
	r.pos, r.end = 0, int(n)
	if n == 0 {
		return nil
	}
	if j.bgMerge {
		// On the merge goroutine (pipeMerge): the driving goroutine owns
		// the phase clock, so add the time; wait out output writes.
		j.gate.Lock()
		defer j.gate.Unlock()
		defer func(t0 time.Time) { j.ph.add(phMergeRead, time.Since(t0)) }(time.Now())
	} else {
		j.ph.start(phMergeRead)
		defer j.ph.stop()
	}
	src := r.body[r.next : r.next+n*e]
	dst := r.share[:n*int64(w)]
	parts := int64(1)
	if n >= 1<<14 {
		parts = int64(max(1, j.s.pools.Readers))
	}
	err := sortio.ParallelChunks(j.ctx, int(parts), int(parts), func(i int) error {
		lo, hi := n*int64(i)/parts, n*int64(i+1)/parts
		r.m.ReadSeq(src[lo*e : hi*e])
		l.unpackRun(dst[lo*int64(w):hi*int64(w)], src[lo*e:hi*e])
		return nil
	})
	r.next += n * e
	return err
}

// mergePass: sorted IndexMap runs persisted to temporary files, then a
// k-way merge of the entries and a value gather per write buffer. The
// memory budget is one buffer: the run's IndexMap in the RUN phase; the
// run shares, the merged entries and the write buffer in the MERGE phase.
func (j *job) mergePass() error {
	b := j.plan0
	j.ph.start(phOther)
	main, err := buffer(&j.s.main, b.main)
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = b.main + b.fixed
	j.s.indexer.readPh = phRunRead

	runs := make([]*entryRun, 0, b.runs)
	defer func() {
		for _, r := range runs {
			r.m.Close()
		}
	}()
	var off int64 // KLV: next record offset
	for first := int64(0); first < j.n; {
		n := min(b.runN, j.n-first)
		if off, err = j.entryRunFile(main, first, n, off, &runs); err != nil {
			return err
		}
		first += n
	}
	j.rep.Runs = len(runs)
	return j.mergeEntries(main, runs)
}

// entryRunFile is one MergePass run of the RUN phase: the IndexMap of
// records first..first+n (KLV: from byte off) built and sorted in main,
// packed and written to a new run file (appended to runs). It returns the
// KLV offset after the run.
func (j *job) entryRunFile(main []byte, first, n, off int64, runs *[]*entryRun) (int64, error) {
	l := &j.l
	ew := l.ew()
	var src source
	if j.rs > 0 {
		src = source{src: j.src, rs: j.rs, first: first, n: n}
	} else {
		j.ph.start(phRunRead)
		src, off = j.klvSource(j.src, off, n, j.size, j.s.pools.Readers)
		j.ph.stop()
	}
	src.in = j.in
	idx := words(main[:n*ew])
	var scratch []uint64
	if int64(len(main)) >= 2*n*ew {
		scratch = words(main[n*ew : 2*n*ew])
	}
	if err := j.s.indexer.build(j.ctx, &src, idx, scratch); err != nil {
		return off, err
	}
	j.ph.start(phOther)
	m, err := j.newRunFile(runHeaderSize + n*int64(l.e))
	j.ph.stop()
	if err != nil {
		return off, err
	}
	*runs = append(*runs, &entryRun{m: m})
	j.ph.start(phRunWrite)
	// Packed in place (an entry is never longer packed), then written.
	packed := l.packRun(idx, n)
	err = m.Put(0, runHeader{l: *l, count: n, inputSize: j.size}.encode())
	if err == nil {
		err = j.putParallel(m, runHeaderSize, packed)
	}
	j.ph.stop()
	return off, err
}

// mergeEntries is MergePass's MERGE phase: the runs' headers checked, a
// share of main each, the loser tree over their heads, and the merged
// entries' records gathered into the output (pipeMerge).
func (j *job) mergeEntries(main []byte, runs []*entryRun) error {
	b := j.plan0
	l := &j.l
	ew := l.ew()
	w := int64(l.w)
	a := &arena{b: main}
	pending := words(a.take(2 * b.pendCap * ew))
	t := newLoserTree(len(runs))
	for i, r := range runs {
		h, err := decodeRunHeader(r.m.Bytes())
		if err != nil {
			return fmt.Errorf("sort: run %d: %w", i, err)
		}
		if h.l != j.l || h.inputSize != j.size {
			return fmt.Errorf("%w: run %d does not belong to this sort", ErrCorrupt, i)
		}
		r.body = r.m.Bytes()[runHeaderSize:]
		r.share = words(a.take(b.shareN * ew))
		if err := j.refill(r); err != nil {
			return err
		}
		j.setHead(t, i, r)
	}
	// Wide entries with a spare byte between key and pointer (gensort)
	// are never all ones: no done checks needed.
	t.fast = l.w == 2 && l.v == 0 && l.k+l.p < 16
	if w > 2 {
		t.deep = func(x, y int) bool {
			rx, ry := runs[x], runs[y]
			ex := rx.share[rx.pos*int(w)+2 : (rx.pos+1)*int(w)]
			ey := ry.share[ry.pos*int(w)+2 : (ry.pos+1)*int(w)]
			for i := range ex {
				if ex[i] != ey[i] {
					return ex[i] < ey[i]
				}
			}
			return false
		}
	}
	// Built once deep is set: the first winner among heads that tie on
	// their first 16 key bytes is the deep comparison's too.
	t.init()
	bufs, order := j.writeBuffers(a)
	em := j.newEmitter(j.src, j.out, phRecordRead, phMergeWrite, bufs, order)
	em.gate = &j.gate
	err := j.pipeMerge(runs, t, pending, em)
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

// pipeMerge runs the merge on its own goroutine, one list of merged
// entries ahead of the emitter: while the reader and writer pools gather
// and write the records of one list, the loser tree fills the other. The
// merge is DRAM work, so it hides behind the gather's memory stalls and
// the writes; its refills read run files, so they take the gate, which the
// emitter holds while it writes (reads and writes still never overlap).
func (j *job) pipeMerge(runs []*entryRun, t *loserTree, pending []uint64, em *emitter) error {
	half := len(pending) / 2
	p := &mergePipe{
		full: make(chan mergeList, 1),
		free: make(chan []uint64, 1),
		quit: make(chan struct{}),
	}
	p.free <- pending[half:]
	j.bgMerge = true
	defer func() { j.bgMerge = false }()
	errc := make(chan error, 1)
	go func() {
		// Its refills read the run files: guarded, as every goroutine
		// that reads a mapped file.
		err := persist.Guard(func() error {
			if j.l.w == 2 {
				return j.merge2(runs, t, pending[:half], p.handoff)
			}
			return j.mergeN(runs, t, pending[:half], p.handoff)
		})
		close(p.full)
		errc <- err
	}()
	var err error
	for m := range p.full {
		if err != nil {
			continue // drain until the merge sees quit
		}
		if err = j.emitMerged(em, m.entries, m.n); err != nil {
			close(p.quit)
			continue
		}
		p.free <- m.entries
	}
	if merr := <-errc; err == nil && merr != errMergeStopped {
		err = merr
	}
	return err
}

// mergePipe passes lists of merged entries between the merge goroutine
// and the emitter.
type mergePipe struct {
	full chan mergeList
	free chan []uint64
	quit chan struct{} // closed when the emitter fails
}

type mergeList struct {
	entries []uint64
	n       int
}

var errMergeStopped = errors.New("sort: merge stopped")

// handoff passes the first n entries of list to the emitter and returns
// the list to fill next.
func (p *mergePipe) handoff(list []uint64, n int) ([]uint64, error) {
	select {
	case p.full <- mergeList{list, n}:
	case <-p.quit:
		return nil, errMergeStopped
	}
	select {
	case next := <-p.free:
		return next, nil
	case <-p.quit:
		return nil, errMergeStopped
	}
}

// setHead sets run i's key in the tree from its head entry.
func (j *job) setHead(t *loserTree, i int, r *entryRun) {
	if r.pos >= r.end {
		t.finish(i)
		return
	}
	w := j.l.w
	e := r.share[r.pos*w : r.pos*w+w]
	if w == 1 {
		t.keys[i] = w2{e[0], 0}
		return
	}
	t.keys[i] = w2{e[0], e[1]}
}

// merge2 is the merge loop for two-word entries: the winner's head moves
// to the pending list with two word moves, its next entry becomes its key.
// Both merges hand each full list of merged entries to flush, which
// returns the list to fill next.
func (j *job) merge2(runs []*entryRun, t *loserTree, list []uint64, flush func([]uint64, int) ([]uint64, error)) error {
	pending := asW2(list)
	np := 0
	for {
		wi := t.winner()
		if t.done[wi] {
			break
		}
		r := runs[wi]
		sh := asW2(r.share)
		pending[np] = sh[r.pos]
		np++
		r.pos++
		if r.pos == r.end {
			if err := j.refill(r); err != nil {
				return err
			}
			sh = asW2(r.share)
		}
		if r.pos < r.end {
			t.keys[wi] = sh[r.pos]
		} else {
			t.finish(wi)
		}
		t.replay()
		if np == len(pending) {
			next, err := flush(words2(pending), np)
			if err != nil {
				return err
			}
			pending, np = asW2(next), 0
		}
	}
	if np > 0 {
		_, err := flush(words2(pending), np)
		return err
	}
	return nil
}

// emitMerged writes n merged entries; with invariants on, it first checks
// that they continue the order of the previous ones.
func (j *job) emitMerged(em *emitter, pending []uint64, n int) error {
	if invariants.Enabled {
		l := &j.l
		w := l.w
		if i := unsorted(l, pending[:n*w]); i >= 0 {
			panic(fmt.Sprintf("sort: merged entry %d is out of order", i))
		}
		if j.lastMerged != nil && l.keyLess(pending[:w], j.lastMerged) {
			panic("sort: merged entries out of order across rounds")
		}
		j.lastMerged = append(j.lastMerged[:0], pending[(n-1)*w:n*w]...)
	}
	return em.emit(pending, int64(n))
}

func (j *job) mergeN(runs []*entryRun, t *loserTree, pending []uint64, flush func([]uint64, int) ([]uint64, error)) error {
	w := j.l.w
	pendCap := len(pending) / w
	np := 0
	for {
		wi := t.winner()
		if t.done[wi] {
			break
		}
		r := runs[wi]
		copy(pending[np*w:np*w+w], r.share[r.pos*w:r.pos*w+w])
		np++
		r.pos++
		if r.pos == r.end {
			if err := j.refill(r); err != nil {
				return err
			}
		}
		j.setHead(t, wi, r)
		t.replay()
		if np == pendCap {
			next, err := flush(pending, np)
			if err != nil {
				return err
			}
			pending, np = next, 0
		}
	}
	if np > 0 {
		_, err := flush(pending, np)
		return err
	}
	return nil
}
