package sort

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
	src.in = j.in
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
