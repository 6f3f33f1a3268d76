package sort

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
)

// klvSource walks KLV records from byte off of src, at most maxN records
// and maxBytes bytes, and cuts them into about parts slices for the reader
// pool. It returns the source (pointers are offsets in src) and the offset
// after the last record taken.
func (j *job) klvSource(src []byte, off, maxN, maxBytes int64, parts int) (source, int64) {
	k := int64(j.l.k)
	perN := (maxN + int64(parts) - 1) / int64(parts)
	perB := (maxBytes + int64(parts) - 1) / int64(parts)
	s := source{src: src}
	start := off
	cur := klvPart{off: off}
	for s.n < maxN && off < int64(len(src)) {
		sz := k + klvHeader + int64(binary.LittleEndian.Uint32(src[off+k:]))
		if off+sz-start > maxBytes {
			break
		}
		if cur.n >= perN || (cur.n > 0 && off+sz-cur.off > perB) {
			s.parts = append(s.parts, cur)
			cur = klvPart{off: off}
		}
		cur.n++
		s.n++
		off += sz
	}
	if cur.n > 0 {
		s.parts = append(s.parts, cur)
	}
	return s, off
}

// arena carves 64-byte aligned pieces out of a buffer.
type arena struct {
	b   []byte
	off int64
}

func (a *arena) take(n int64) []byte {
	p := a.b[a.off : a.off+n : a.off+n]
	a.off = (a.off + n + 63) &^ 63
	return p
}

// rest returns everything not taken yet.
func (a *arena) rest() []byte {
	if a.off >= int64(len(a.b)) {
		return nil
	}
	return a.b[a.off:]
}

// writeBuffers carves the write buffer(s) and the gather's scratch out of
// a: wb bytes per buffer, one buffer or two with overlap, and ord words.
func (j *job) writeBuffers(a *arena) ([][]byte, []uint64) {
	b := j.plan0
	bufs := [][]byte{a.take(b.wb)}
	if j.s.o.Overlap {
		bufs = append(bufs, a.take(b.wb))
	}
	return bufs, words(a.take(b.ord * 8))
}

// onePass: gather keys, sort the IndexMap, gather records into the output.
// The memory after the IndexMap is the key pass's scratch first (when it
// is large enough for one read of the keys), then the write buffer.
func (j *job) onePass() error {
	b := j.plan0
	ew := j.l.ew()
	j.ph.start(phOther)
	main, err := buffer(&j.s.main, b.main)
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = b.main + b.fixed
	a := &arena{b: main}
	idx := words(a.take(j.n * ew))
	var scratch []uint64
	if r := a.rest(); int64(len(r)) >= j.n*ew {
		scratch = words(r[:j.n*ew])
	}
	j.s.indexer.readPh = phRunRead
	var src source
	if j.rs > 0 {
		src = source{src: j.src, rs: j.rs, n: j.n}
	} else {
		j.ph.start(phRunRead)
		src, _ = j.klvSource(j.src, 0, j.n, j.size, j.s.pools.Readers)
		j.ph.stop()
	}
	if err := j.s.indexer.build(j.ctx, &src, idx, scratch); err != nil {
		return err
	}
	bufs, order := j.writeBuffers(a)
	em := j.newEmitter(j.src, j.out, phRecordRead, phMergeWrite, bufs, order)
	err = em.emit(idx, j.n)
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

// entryRun streams one run file of packed entries through its share of
// the merge buffer, decoded.
type entryRun struct {
	m     *mapped
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
	err := parallelChunks(j.ctx, int(parts), int(parts), func(i int) error {
		lo, hi := n*int64(i)/parts, n*int64(i+1)/parts
		l.unpackRun(dst[lo*int64(w):hi*int64(w)], src[lo*e:hi*e])
		return nil
	})
	r.next += n * e
	return err
}

// loserTree selects the run with the smallest head ([Knuth 5.4.1]): one
// comparison per level to replace the winner. Heads are compared by a
// 16-byte prefix held in keys (an exhausted run has all ones there and
// done set); deep, if set, breaks ties between live runs.
type loserTree struct {
	tree []int32
	keys []w2
	done []bool
	k    int
	deep func(a, b int) bool
	// fast: keys are whole (no deep), equal keys may come out in any
	// order, and no live key is all ones — so the exhausted runs' keys
	// sort last by themselves and a comparison is two integer compares.
	fast bool
}

// replayFast is replay for fast trees.
func (t *loserTree) replayFast() {
	s := t.tree[0]
	ks := t.keys[s]
	for p := (int(s) + t.k) / 2; p > 0; p /= 2 {
		o := t.tree[p]
		ko := t.keys[o]
		if ko.hi < ks.hi || (ko.hi == ks.hi && ko.lo < ks.lo) {
			t.tree[p], s, ks = s, o, ko
		}
	}
	t.tree[0] = s
}

func newLoserTree(k int) *loserTree {
	return &loserTree{tree: make([]int32, max(k, 1)), keys: make([]w2, k), done: make([]bool, k), k: k}
}

func (t *loserTree) less(a, b int32) bool {
	x, y := t.keys[a], t.keys[b]
	if x.hi != y.hi {
		return x.hi < y.hi
	}
	if x.lo != y.lo {
		return x.lo < y.lo
	}
	if da, db := t.done[a], t.done[b]; da || db {
		return !da && db
	}
	return t.deep != nil && t.deep(int(a), int(b))
}

// init builds the tree once every run's head is set.
func (t *loserTree) init() {
	if t.k == 1 {
		t.tree[0] = 0
		return
	}
	t.tree[0] = t.build(1)
}

func (t *loserTree) build(node int) int32 {
	if node >= t.k {
		return int32(node - t.k)
	}
	a, b := t.build(2*node), t.build(2*node+1)
	if t.less(b, a) {
		t.tree[node] = a
		return b
	}
	t.tree[node] = b
	return a
}

func (t *loserTree) winner() int { return int(t.tree[0]) }

// finish marks run i exhausted.
func (t *loserTree) finish(i int) {
	t.done[i] = true
	t.keys[i] = w2{^uint64(0), ^uint64(0)}
}

// replay restores the tree after the winner's head changed.
func (t *loserTree) replay() {
	if t.fast {
		t.replayFast()
		return
	}
	s := t.tree[0]
	for p := (int(s) + t.k) / 2; p > 0; p /= 2 {
		if t.less(t.tree[p], s) {
			t.tree[p], s = s, t.tree[p]
		}
	}
	t.tree[0] = s
}

// mergePass: sorted IndexMap runs persisted to temporary files, then a
// k-way merge of the entries and a value gather per write buffer. The
// memory budget is one buffer: the run's IndexMap in the RUN phase; the
// run shares, the merged entries and the write buffer in the MERGE phase.
func (j *job) mergePass() error {
	b := j.plan0
	l := &j.l
	ew := l.ew()
	w := int64(l.w)
	j.ph.start(phOther)
	main, err := buffer(&j.s.main, b.main)
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = b.main + b.fixed
	j.s.indexer.readPh = phRunRead

	// RUN phase.
	runs := make([]*entryRun, 0, b.runs)
	defer func() {
		for _, r := range runs {
			r.m.close()
		}
	}()
	var off int64 // KLV: next record offset
	for first := int64(0); first < j.n; {
		n := min(b.runN, j.n-first)
		var src source
		if j.rs > 0 {
			src = source{src: j.src, rs: j.rs, first: first, n: n}
		} else {
			j.ph.start(phRunRead)
			src, off = j.klvSource(j.src, off, n, j.size, j.s.pools.Readers)
			j.ph.stop()
		}
		idx := words(main[:n*ew])
		var scratch []uint64
		if int64(len(main)) >= 2*n*ew {
			scratch = words(main[n*ew : 2*n*ew])
		}
		if err := j.s.indexer.build(j.ctx, &src, idx, scratch); err != nil {
			return err
		}
		j.ph.start(phOther)
		m, err := j.newRunFile(runHeaderSize + n*int64(l.e))
		j.ph.stop()
		if err != nil {
			return err
		}
		runs = append(runs, &entryRun{m: m})
		j.ph.start(phRunWrite)
		// Packed in place (an entry is never longer packed), then written.
		packed := l.packRun(idx, n)
		err = m.put(0, runHeader{l: *l, count: n, inputSize: j.size}.encode())
		if err == nil {
			err = j.putParallel(m, runHeaderSize, packed)
		}
		j.ph.stop()
		if err != nil {
			return err
		}
		first += n
	}
	j.rep.Runs = len(runs)

	// MERGE phase.
	a := &arena{b: main}
	pending := words(a.take(2 * b.pendCap * ew))
	t := newLoserTree(len(runs))
	for i, r := range runs {
		h, err := decodeRunHeader(r.m.bytes())
		if err != nil {
			return fmt.Errorf("sort: run %d: %w", i, err)
		}
		if h.l != j.l || h.inputSize != j.size {
			return fmt.Errorf("%w: run %d does not belong to this sort", ErrCorrupt, i)
		}
		r.body = r.m.bytes()[runHeaderSize:]
		r.share = words(a.take(b.shareN * ew))
		if err := j.refill(r); err != nil {
			return err
		}
		j.setHead(t, i, r)
	}
	// Wide entries with a spare byte between key and pointer (gensort)
	// are never all ones: no done checks needed.
	t.fast = l.w == 2 && l.v == 0 && l.k+l.p < 16
	t.init()
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
	bufs, order := j.writeBuffers(a)
	em := j.newEmitter(j.src, j.out, phRecordRead, phMergeWrite, bufs, order)
	em.gate = &j.gate
	err = j.pipeMerge(runs, t, pending, em)
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

// ems is the external merge sort baseline: runs of whole records are read
// sequentially into DRAM, sorted, written to run files; then a k-way
// merge copies the records into the write buffer. Same pools, same
// interference-aware write buffer, same radix sort and merge tree as
// WiscSort.
func (j *job) ems() error {
	b := j.plan0
	ew := j.l.ew()
	j.ph.start(phOther)
	main, err := buffer(&j.s.main, b.main)
	if err == nil {
		_, err = buffer(&j.s.wbufs, b.wbArea)
	}
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = b.main + b.wbArea + b.fixed
	runBuf := main[:b.runB]
	idxBuf := words(main[(b.runB+63)&^63:])
	bufs, order := j.writeBuffers(&arena{b: j.s.wbufs})
	// The records are already in DRAM: the key pass is part of sorting.
	j.s.indexer.readPh = phRunSort

	runs := []*recordRun{}
	defer func() {
		for _, r := range runs {
			r.m.close()
		}
	}()
	for off := int64(0); off < j.size; {
		var src source
		var end int64
		if j.rs > 0 {
			n := min(b.runN, (j.size-off)/int64(j.rs))
			end = off + n*int64(j.rs)
			src = source{src: runBuf, rs: j.rs, n: n}
		} else {
			j.ph.start(phRunRead)
			src, end = j.klvSource(j.src, off, b.runN, b.runB, j.s.pools.Readers)
			j.ph.stop()
			if src.n == 0 {
				return fmt.Errorf("%w: a record at offset %d does not fit the EMS run buffer", ErrBudget, off)
			}
			for i := range src.parts {
				src.parts[i].off -= off
			}
			src.src = runBuf
		}
		j.ph.start(phRunRead)
		err := j.copyParallel(runBuf[:end-off], j.src[off:end])
		j.ph.stop()
		if err != nil {
			return err
		}
		idx := idxBuf[:src.n*ew/8]
		if err := j.s.indexer.build(j.ctx, &src, idx, nil); err != nil {
			return err
		}
		j.ph.start(phOther)
		m, err := j.newRunFile(end - off)
		j.ph.stop()
		if err != nil {
			return err
		}
		runs = append(runs, &recordRun{m: m})
		em := j.newEmitter(runBuf, m, phRunSort, phRunWrite, bufs, order)
		em.inDRAM = true
		err = em.emit(idx, src.n)
		if e2 := em.close(); err == nil {
			err = e2
		}
		if err != nil {
			return err
		}
		off = end
	}
	j.rep.Runs = len(runs)

	// MERGE phase: shares of the whole buffer.
	k := int64(len(runs))
	share := b.main / k
	if j.rs > 0 {
		share = share / int64(j.rs) * int64(j.rs)
	}
	if share < max(int64(minShare), 2*j.klvMax, int64(j.rs)) {
		return fmt.Errorf("%w: %d EMS runs leave %d bytes of merge buffer each (raise -mem)", ErrBudget, k, share)
	}
	t := newLoserTree(len(runs))
	if j.l.k > 16 {
		t.deep = func(x, y int) bool {
			return bytes.Compare(runs[x].head[16:j.l.k], runs[y].head[16:j.l.k]) < 0
		}
	}
	// Keys of up to 15 bytes leave the prefix's last byte zero: never all
	// ones, and equal prefixes are equal keys.
	t.fast = j.l.k <= 15
	for i, r := range runs {
		r.body = r.m.bytes()
		r.share = main[int64(i)*share : int64(i+1)*share]
		j.nextRecord(t, i, r)
	}
	t.init()
	// The merge copies records into one half of the write buffer while a
	// background writer persists the other (as MergePass's pipeMerge
	// merges ahead of its gather): the merge is DRAM work, and its run
	// refills take the gate, so reads and writes still never overlap.
	if len(bufs) == 1 {
		half := len(bufs[0]) / 2
		if j.rs > 0 {
			half = half / j.rs * j.rs
		}
		if half >= max(j.rs, int(j.klvMax), minWriteBuffer/2) {
			bufs = [][]byte{bufs[0][:half], bufs[0][half:]}
		}
	}
	em := j.newEmitterOverlap(nil, j.out, phOther, phMergeWrite, bufs, order, len(bufs) == 2)
	em.gate = &j.gate
	j.bgMerge = true
	err = j.mergeRecords(runs, t, em)
	j.bgMerge = false
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

// recordRun streams one EMS run file of records through its share of the
// merge buffer.
type recordRun struct {
	m     *mapped
	body  []byte // the run's records in its file
	next  int64  // first byte of body not yet loaded
	share []byte
	pos   int // head record starts here
	end   int // loaded bytes end here
	head  []byte
}

// ensure makes at least need bytes from pos available in the share (moving
// a partial record to the front), loading as much as fits. It returns
// false when fewer than need bytes remain in the run.
func (j *job) ensure(r *recordRun, need int) bool {
	if r.end-r.pos >= need {
		return true
	}
	left := int64(len(r.body)) - r.next
	if int64(r.end-r.pos)+left < int64(need) {
		return false
	}
	j.ph.start(phMergeRead)
	if j.bgMerge {
		j.gate.Lock() // no output write in flight
		defer j.gate.Unlock()
	}
	n := copy(r.share, r.share[r.pos:r.end])
	c := min(int64(len(r.share)-n), left)
	_ = j.copyParallel(r.share[n:n+int(c)], r.body[r.next:r.next+c])
	r.next += c
	r.pos, r.end = 0, n+int(c)
	j.ph.stop()
	return true
}

// keyPrefix16 is the first 16 key bytes as two big-endian words, zero
// padded: the loser tree's key for a record.
func keyPrefix16(key []byte, k int) w2 {
	if k >= 16 {
		return w2{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
	}
	var b [16]byte
	copy(b[:], key[:k])
	return w2{binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[8:])}
}

// nextRecord makes run i's head the record at pos.
func (j *job) nextRecord(t *loserTree, i int, r *recordRun) {
	need := j.rs
	if need == 0 {
		need = j.l.k + klvHeader
		if j.ensure(r, need) {
			need += int(binary.LittleEndian.Uint32(r.share[r.pos+j.l.k:]))
		}
	}
	if !j.ensure(r, need) {
		r.head = nil
		t.finish(i)
		return
	}
	r.head = r.share[r.pos : r.pos+need]
	if j.l.k == 10 {
		t.keys[i] = w2{binary.BigEndian.Uint64(r.head), uint64(binary.BigEndian.Uint16(r.head[8:])) << 48}
		return
	}
	t.keys[i] = keyPrefix16(r.head, j.l.k)
}

func (j *job) mergeRecords(runs []*recordRun, t *loserTree, em *emitter) error {
	buf := em.buf()
	fill := 0
	for {
		wi := t.winner()
		if t.done[wi] {
			break
		}
		r := runs[wi]
		if fill+len(r.head) > len(buf) {
			if err := em.commit(fill); err != nil {
				return err
			}
			if err := j.ctx.Err(); err != nil {
				return err
			}
			buf, fill = em.buf(), 0
		}
		fill += copy(buf[fill:], r.head)
		r.pos += len(r.head)
		j.nextRecord(t, wi, r)
		t.replay()
	}
	return em.commit(fill)
}
