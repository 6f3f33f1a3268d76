package sort

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/braid-pm/braid/sort/internal/sortio"
)

// ems is the external merge sort baseline: runs of whole records are read
// sequentially into DRAM, sorted, written to run files; then a k-way
// merge copies the records into the write buffer. Same pools, same
// interference-aware write buffer, same radix sort and merge tree as
// WiscSort.
func (j *job) ems() error {
	b := j.plan0
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

	var runs []*recordRun
	defer func() {
		for _, r := range runs {
			r.m.Close()
		}
	}()
	for off := int64(0); off < j.size; {
		if off, err = j.emsRun(off, runBuf, idxBuf, bufs, order, &runs); err != nil {
			return err
		}
	}
	j.rep.Runs = len(runs)
	return j.emsMerge(main, runs, bufs, order)
}

// emsRun makes the EMS run that starts at byte off of the input: its
// records copied into the run buffer, sorted there (IndexMap and
// gather), written to a new run file (appended to runs). It returns where
// the next run starts.
func (j *job) emsRun(off int64, runBuf []byte, idxBuf []uint64, bufs [][]byte, order []uint64, runs *[]*recordRun) (int64, error) {
	b := j.plan0
	ew := j.l.ew()
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
			return 0, fmt.Errorf("%w: a record at offset %d does not fit the EMS run buffer", ErrBudget, off)
		}
		for i := range src.parts {
			src.parts[i].off -= off
		}
		src.src = runBuf
	}
	j.ph.start(phRunRead)
	err := j.copyParallel(runBuf[:end-off], j.src[off:end], j.in)
	j.ph.stop()
	if err != nil {
		return 0, err
	}
	idx := idxBuf[:src.n*ew/8]
	if err := j.s.indexer.build(j.ctx, &src, idx, nil); err != nil {
		return 0, err
	}
	j.ph.start(phOther)
	m, err := j.newRunFile(end - off)
	j.ph.stop()
	if err != nil {
		return 0, err
	}
	*runs = append(*runs, &recordRun{m: m})
	em := j.newEmitter(runBuf, m, phRunSort, phRunWrite, bufs, order)
	em.inDRAM = true
	err = em.emit(idx, src.n)
	if e2 := em.close(); err == nil {
		err = e2
	}
	return end, err
}

// emsMerge is EMS's MERGE phase: a k-way merge of the runs' records, with
// shares of the whole buffer, into the output.
func (j *job) emsMerge(main []byte, runs []*recordRun, bufs [][]byte, order []uint64) error {
	b := j.plan0
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
		r.body = r.m.Bytes()
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
	err := j.mergeRecords(runs, t, em)
	j.bgMerge = false
	if e2 := em.close(); err == nil {
		err = e2
	}
	return err
}

// recordRun streams one EMS run file of records through its share of the
// merge buffer.
type recordRun struct {
	m     *sortio.Mapped
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
	_ = j.copyParallel(r.share[n:n+int(c)], r.body[r.next:r.next+c], r.m)
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
