package sort

import (
	"encoding/binary"
	"fmt"
)

// keyPrefix is the first 8 key bytes as a big-endian number (zero-padded),
// so that most comparisons in the merge are one integer compare.
func keyPrefix(key []byte, k int) uint64 {
	if k >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var v uint64
	for i := 0; i < k; i++ {
		v |= uint64(key[i]) << (56 - 8*uint(i))
	}
	return v
}

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

// onePass: gather keys, sort the IndexMap, gather records into the output.
func (j *job) onePass() error {
	e := int64(j.l.e)
	j.ph.start(phOther)
	idx, err := buffer(&j.s.main, j.n*e)
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = int64(len(idx)) + j.wbufBytes()
	j.s.indexer.readPh = phRunRead
	var src source
	if j.rs > 0 {
		src = source{src: j.src, rs: j.rs, n: j.n}
	} else {
		j.ph.start(phRunRead)
		src, _ = j.klvSource(j.src, 0, j.n, j.size, j.s.pools.Readers)
		j.ph.stop()
	}
	if err := j.s.indexer.build(j.ctx, &src, idx); err != nil {
		return err
	}
	em, err := j.newEmitter(j.src, j.out, phRecordRead, phMergeWrite)
	if err != nil {
		return err
	}
	err = em.emit(idx, j.n)
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

func (j *job) wbufBytes() int64 {
	if j.s.o.Overlap {
		return 2 * j.plan0.wb
	}
	return j.plan0.wb
}

// runReader streams one run file through its share of the merge buffer.
type runReader struct {
	m     *mapped
	body  []byte // the run's items in its file
	next  int64  // first byte of body not yet loaded
	share []byte
	pos   int // head item starts here
	end   int // loaded bytes end here
	head  []byte
	pre   uint64
	done  bool
}

// ensure makes at least need bytes from pos available in the share (moving
// a partial item to the front), loading as much as fits. It returns false
// when fewer than need bytes remain in the run.
func (j *job) ensure(r *runReader, need int) bool {
	if r.end-r.pos >= need {
		return true
	}
	left := int64(len(r.body)) - r.next
	if int64(r.end-r.pos)+left < int64(need) {
		return false
	}
	j.ph.start(phMergeRead)
	n := copy(r.share, r.share[r.pos:r.end])
	c := min(int64(len(r.share)-n), left)
	_ = j.copyParallel(r.share[n:n+int(c)], r.body[r.next:r.next+c])
	r.next += c
	r.pos, r.end = 0, n+int(c)
	j.ph.stop()
	return true
}

// loserTree selects the run with the smallest head ([Knuth 5.4.1]): one
// comparison per level to replace the winner.
type loserTree struct {
	tree []int
	k    int
	less func(a, b int) bool
}

func newLoserTree(k int, less func(a, b int) bool) *loserTree {
	t := &loserTree{tree: make([]int, max(k, 1)), k: k, less: less}
	if k == 1 {
		t.tree[0] = 0
		return t
	}
	t.tree[0] = t.build(1)
	return t
}

func (t *loserTree) build(node int) int {
	if node >= t.k {
		return node - t.k
	}
	a, b := t.build(2*node), t.build(2*node+1)
	if t.less(b, a) {
		t.tree[node] = a
		return b
	}
	t.tree[node] = b
	return a
}

func (t *loserTree) winner() int { return t.tree[0] }

// replay restores the tree after the winner's head changed.
func (t *loserTree) replay() {
	s := t.tree[0]
	for p := (s + t.k) / 2; p > 0; p /= 2 {
		if t.less(t.tree[p], s) {
			t.tree[p], s = s, t.tree[p]
		}
	}
	t.tree[0] = s
}

func runLess(runs []*runReader, k int) func(a, b int) bool {
	return func(a, b int) bool {
		ra, rb := runs[a], runs[b]
		if ra.done || rb.done {
			return !ra.done && rb.done
		}
		if ra.pre != rb.pre {
			return ra.pre < rb.pre
		}
		return k > 8 && keyLess(ra.head[8:k], rb.head[8:k])
	}
}

// mergePass: sorted IndexMap runs persisted to temporary files, then a
// k-way merge of the entries and a value gather per write buffer.
func (j *job) mergePass() error {
	b := j.plan0
	e := int64(j.l.e)
	k := b.runs
	shareB := (b.avail - b.pendCap*e) / int64(k) / e * e
	shareB = min(shareB, b.runN*e)
	need := max(b.runN*e, b.pendCap*e+int64(k)*shareB)
	j.ph.start(phOther)
	main, err := buffer(&j.s.main, need)
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = need + j.wbufBytes()
	j.s.indexer.readPh = phRunRead

	// RUN phase.
	runs := make([]*runReader, 0, k)
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
		idx := main[:n*e]
		if err := j.s.indexer.build(j.ctx, &src, idx); err != nil {
			return err
		}
		j.ph.start(phOther)
		m, err := j.newRunFile(runHeaderSize + n*e)
		j.ph.stop()
		if err != nil {
			return err
		}
		runs = append(runs, &runReader{m: m})
		j.ph.start(phRunWrite)
		err = m.put(0, runHeader{l: j.l, count: n, inputSize: j.size}.encode())
		if err == nil {
			err = j.putParallel(m, runHeaderSize, idx)
		}
		j.ph.stop()
		if err != nil {
			return err
		}
		first += n
	}
	j.rep.Runs = len(runs)

	// MERGE phase.
	pending := main[:b.pendCap*e]
	for i, r := range runs {
		h, err := decodeRunHeader(r.m.bytes())
		if err != nil {
			return fmt.Errorf("sort: run %d: %w", i, err)
		}
		if h.l != j.l || h.inputSize != j.size {
			return fmt.Errorf("%w: run %d does not belong to this sort", ErrCorrupt, i)
		}
		r.body = r.m.bytes()[runHeaderSize:]
		r.share = main[b.pendCap*e+int64(i)*shareB : b.pendCap*e+int64(i+1)*shareB]
		j.nextEntry(r, e)
	}
	em, err := j.newEmitter(j.src, j.out, phRecordRead, phMergeWrite)
	if err != nil {
		return err
	}
	err = j.mergeEntries(runs, pending, b.pendCap, em)
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

// nextEntry makes the run's head the entry at pos (loading if needed).
func (j *job) nextEntry(r *runReader, e int64) {
	if !j.ensure(r, int(e)) {
		r.done, r.head = true, nil
		return
	}
	r.head = r.share[r.pos : r.pos+int(e)]
	r.pre = keyPrefix(r.head, j.l.k)
}

func (j *job) mergeEntries(runs []*runReader, pending []byte, pendCap int64, em *emitter) error {
	e := int64(j.l.e)
	t := newLoserTree(len(runs), runLess(runs, j.l.k))
	var np int64
	for {
		w := t.winner()
		r := runs[w]
		if r.done {
			break
		}
		copy(pending[np*e:np*e+e], r.head)
		np++
		r.pos += int(e)
		j.nextEntry(r, e)
		t.replay()
		if np == pendCap {
			if err := em.emit(pending, np); err != nil {
				return err
			}
			np = 0
		}
	}
	if np > 0 {
		return em.emit(pending, np)
	}
	return nil
}

// ems is the external merge sort baseline: runs of whole records are read
// sequentially into DRAM, sorted, written to run files; then a k-way
// merge copies the records into the write buffer. Same pools, same
// interference-aware write buffer, same radix sort as WiscSort.
func (j *job) ems() error {
	b := j.plan0
	e := int64(j.l.e)
	j.ph.start(phOther)
	main, err := buffer(&j.s.main, b.avail)
	j.ph.stop()
	if err != nil {
		return err
	}
	j.rep.BufferBytes = b.avail + j.wbufBytes()
	runBuf := main[:b.runB]
	idxBuf := main[b.runB:]
	// The records are already in DRAM: the key pass is part of sorting.
	j.s.indexer.readPh = phRunSort

	runs := []*runReader{}
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
		idx := idxBuf[:src.n*e]
		if err := j.s.indexer.build(j.ctx, &src, idx); err != nil {
			return err
		}
		j.ph.start(phOther)
		m, err := j.newRunFile(end - off)
		j.ph.stop()
		if err != nil {
			return err
		}
		runs = append(runs, &runReader{m: m})
		em, err := j.newEmitter(runBuf, m, phRunSort, phRunWrite)
		if err != nil {
			return err
		}
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
	share := b.avail / k
	if j.rs > 0 {
		share = share / int64(j.rs) * int64(j.rs)
	}
	if share < max(int64(minShare), 2*j.klvMax, int64(j.rs)) {
		return fmt.Errorf("%w: %d EMS runs leave %d bytes of merge buffer each (raise -mem)", ErrBudget, k, share)
	}
	for i, r := range runs {
		r.body = r.m.bytes()
		r.share = main[int64(i)*share : int64(i+1)*share]
		j.nextRecord(r)
	}
	em, err := j.newEmitter(nil, j.out, phOther, phMergeWrite)
	if err != nil {
		return err
	}
	err = j.mergeRecords(runs, em)
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

// nextRecord makes the run's head the record at pos.
func (j *job) nextRecord(r *runReader) {
	need := j.rs
	if need == 0 {
		need = j.l.k + klvHeader
		if j.ensure(r, need) {
			need += int(binary.LittleEndian.Uint32(r.share[r.pos+j.l.k:]))
		}
	}
	if !j.ensure(r, need) {
		r.done, r.head = true, nil
		return
	}
	r.head = r.share[r.pos : r.pos+need]
	r.pre = keyPrefix(r.head, j.l.k)
}

func (j *job) mergeRecords(runs []*runReader, em *emitter) error {
	t := newLoserTree(len(runs), runLess(runs, j.l.k))
	buf := em.buf()
	fill := 0
	for {
		r := runs[t.winner()]
		if r.done {
			break
		}
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
		j.nextRecord(r)
		t.replay()
	}
	return em.commit(fill)
}
