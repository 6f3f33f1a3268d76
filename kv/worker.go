package kv

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/braid-pm/braid/persist"
)

type opKind uint8

const (
	opPut opKind = iota
	opDel
	opApply
	opGet
	opTokenGet
	opMove   // GC: re-append a live entry with its serial
	opFree   // GC: free a segment this worker owns
	opExpire // an expired version becomes a tombstone with its serial (expire.go)
)

// request is one operation queued for a worker. Sync callers wait on
// done; PutAsync's callback is called by the worker instead.
type request struct {
	kind    opKind
	key     []byte
	value   []byte
	serial  uint64
	dl      uint64 // put: its deadline (0: none); get: the value's
	cond    bool   // put: only if the index still holds l (Expire, Persist)
	l       loc    // get: where to read; move: the version to move
	hint    uint32 // token get: the index slot the put left its entry in
	ops     []batchOp
	serials []uint64
	g       *segment
	cb      func(Token, error)
	done    chan struct{}
	first   bool // its caller took the free writer slot in send (combine.go)
	lead    bool // a leader handed its caller the writer slot (heir)

	// results
	err     error
	val     []byte
	tok     Token
	miss    bool // token get: not the latest, go the slow way
	moved   bool
	expired bool // move, expire: the version was expired, moved as a tombstone
	movedL  loc  // move: the new version
	ui      int  // put: its update in the worker's batch (-1: none)
	nops    int  // apply: the operations staged before it failed
}

func (r *request) bytes() int {
	switch r.kind {
	case opPut, opDel, opMove:
		return recSize(len(r.key), len(r.value)+dlSize(r.dl)) + entrySize
	case opApply:
		n := 0
		for i := range r.ops {
			n += recSize(len(r.ops[i].key), len(r.ops[i].value)+dlSize(r.ops[i].dl)) + entrySize
		}
		return n
	}
	return 64
}

// worker is the only writer of one data log and one metadata log on its
// device (with WorkerReads, the reader of the data segments it owns too):
// a dedicated goroutine with DedicatedWorkers, else whichever goroutine
// holds its writer slot (combine.go). Its state below is touched only by
// the goroutine writing its batch.
type worker struct {
	s      *Store
	dev    *device
	id     int           // on its device
	gid    int           // in Store.workers
	cpus   atomic.Value  // []int: the thread affinity it bound itself to (numa.go), nil unbound
	q      chan *request // DedicatedWorkers: the worker's queue
	c      combiner      // else: the writer slot and its queue (combine.go)
	d, m   logWriter
	batch  []*request
	writes []*request
	ups    []upd      // the index updates of the batch being written
	hints  []uint32   // their slots, once published
	toSeal []*segment // segments the batch switched away from (sealSwitched)
	dls    []dlUpd    // the deadlines the batch wrote (expire.go)
	// unfenced is the metadata bytes staged since the last fence, kept
	// under maxUnfencedMeta (a batch that would pass it fences on the
	// way): what a torn batch can leave after a log's end is bounded, and
	// recovery's tail repair reads only that far. An entry staged while it
	// is 0 is a batch start (layout.go).
	unfenced int
	fenceAt  int // maxUnfencedMeta (smaller in a crash test)
	// seed is the entrySeed of metadata segment epoch seedEpoch (seedOK):
	// computed once per segment, not per entry.
	seed      uint32
	seedEpoch uint64
	seedOK    bool

	puts, gets, dels, batches, fences atomic.Uint64
	appended, media                   atomic.Uint64
	_                                 [64]byte
}

func (w *worker) run() {
	defer w.s.wg.Done()
	w.cpus.Store(w.s.c.bindToNode(w.s.c.workerNode(w.dev.idx)))
	w.s.placed.Done()
	for {
		r, ok := <-w.q
		if !ok {
			return
		}
		b := w.collect(r)
		w.process(b)
		w.batch = b[:0] // (process cleared it)
	}
}

// collect takes r and, unless batching is off, what else is queued, up to
// BatchBytes of log bytes; with BatchWait it waits that long once for more.
func (w *worker) collect(r *request) []*request {
	c := &w.s.c
	b := append(w.batch[:0], r)
	if c.NoBatching {
		return b
	}
	n := r.bytes()
	var timer <-chan time.Time
	yielded := false
	for n < c.BatchBytes && len(b) < 4096 {
		select {
		case r2, ok := <-w.q:
			if !ok {
				return b
			}
			b = append(b, r2)
			n += r2.bytes()
			continue
		default:
		}
		if !yielded {
			// Let the clients that are ready to run enqueue before the
			// batch closes: a send to an idle worker runs the worker next,
			// so without this a batch would hold one request under any
			// load that leaves the worker idle between batches.
			yielded = true
			runtime.Gosched()
			continue
		}
		if c.BatchWait <= 0 || timer == nil && n >= c.BatchBytes {
			return b
		}
		if timer == nil {
			timer = time.After(c.BatchWait)
		}
		select {
		case r2, ok := <-w.q:
			if !ok {
				return b
			}
			b = append(b, r2)
			n += r2.bytes()
		case <-timer:
			return b
		}
	}
	return b
}

// process runs one batch: reads, then writes (one fence for all), then
// the index updates, then the completions. A request is not touched after
// it was completed: its caller may already be reusing it.
func (w *worker) process(batch []*request) {
	writes := w.writes[:0]
	for _, r := range batch {
		switch r.kind {
		case opGet, opTokenGet:
			w.read(r)
			w.gets.Add(1)
			w.s.complete(r)
		case opFree:
			r.err = w.s.release(r.g)
			w.s.complete(r)
		default:
			w.stage(r)
			writes = append(writes, r)
		}
	}
	if len(writes) > 0 {
		w.commit(writes)
	}
	clear(batch)
	clear(writes)
	w.writes = writes[:0]
}

// commit makes the staged writes of batch durable with one fence, then
// publishes and acknowledges them.
func (w *worker) commit(batch []*request) {
	if gate := w.s.c.ackGate; w.s.broken.ackBeforeFence && gate != nil && clientWrites(batch) {
		// (Only the crash workload's store, whose gate orders the early
		// acknowledgment, is broken: a check's store is not, so that what
		// the checks find is the same in every run.)
		// Written (so that a reader of the acknowledged records does not
		// race the write), acknowledged, and only then fenced.
		err := w.flush()
		w.ack(batch, true)
		gate.park()
		if err == nil {
			_ = w.s.fence(w.m.g, w.d.g)
			w.unfenced = 0
		}
		gate.fenced()
		return
	}
	err := w.flush()
	if err == nil {
		err = w.s.commitFence(w)
		w.unfenced = 0
		w.fences.Add(1)
		w.batches.Add(1)
	}
	if err == nil {
		err = w.s.failure() // another log's sync failed: acknowledge nothing
	} else {
		w.s.fail(err)
	}
	if err != nil {
		for _, r := range batch {
			if r.err == nil || asRoom(r.err) != nil { // not "no room": nothing of it is durable
				r.err = err
			}
		}
	}
	w.ack(batch, err == nil)
}

// ackGate makes the broken variant ackBeforeFence deterministic in the
// crash tests: after acknowledging a batch of client writes the worker
// parks until the workload has recorded the acknowledgment (and its
// durability point was tested), then writes and fences while the
// workload waits; so no goroutine touches the regions while a crash
// point's check runs, as when the fence comes first.
type ackGate struct{ release, done chan struct{} }

func newAckGate() *ackGate { return &ackGate{release: make(chan struct{}), done: make(chan struct{})} }

func (g *ackGate) park() {
	if g != nil {
		<-g.release
	}
}

func (g *ackGate) fenced() {
	if g != nil {
		g.done <- struct{}{}
	}
}

// step is the workload's side: let the parked worker write and fence,
// and wait until it has.
func (g *ackGate) step() {
	g.release <- struct{}{}
	<-g.done
}

// clientWrites reports whether batch holds a client's put, delete or
// batch (not only GC moves).
func clientWrites(batch []*request) bool {
	for _, r := range batch {
		switch r.kind {
		case opPut, opDel, opApply:
			return true
		}
	}
	return false
}

// ack publishes what the batch made durable and completes its requests.
// The records a request staged before it failed (an Apply that ran out of
// room halfway) are durable too: they are published, or the index and a
// recovery would disagree.
func (w *worker) ack(batch []*request, durable bool) {
	if durable {
		w.hints = append(w.hints[:0], make([]uint32, len(w.ups))...)
		w.s.idx.publish(w.gid, w.ups, w.hints)
	}
	if len(w.dls) > 0 {
		w.s.exp.add(w.dls, durable)
		clear(w.dls)
		w.dls = w.dls[:0]
	}
	w.sealSwitched()
	for _, r := range batch {
		switch {
		case (r.kind == opMove || r.kind == opExpire) && r.moved:
			if !durable || r.err != nil || !w.s.idx.swap(r.key, r.l, r.movedL) {
				w.s.dead(r.movedL)
				r.moved = false
			} else if r.expired {
				w.s.stats.expired.Add(1)
				if r.kind == opExpire { // (a GC move's victim is freed whole)
					w.s.dead(r.l)
				}
			}
		case r.ui >= 0 && durable:
			r.tok.hint = w.hints[r.ui]
		}
		w.s.complete(r)
	}
	clear(w.ups) // drop the callers' keys
	w.ups = w.ups[:0]
}

// flush emits both logs' staged bytes without a fence.
func (w *worker) flush() error {
	n, err := w.d.emit()
	if err != nil {
		return err
	}
	m, err := w.m.emit()
	w.media.Add(uint64(n + m))
	return err
}

// stage appends r's records and entries to the staging buffers.
func (w *worker) stage(r *request) {
	r.ui = -1
	switch r.kind {
	case opPut, opDel:
		if r.cond && !w.s.holds(r.key, r.l) {
			r.err = errRaced
			return
		}
		r.err = w.append(r, r.key, r.value, r.dl, r.serial, r.kind == opDel)
	case opApply:
		for i := range r.ops {
			op := &r.ops[i]
			if r.err = w.append(r, op.key, op.value, op.dl, r.serials[i], op.del); r.err != nil {
				r.nops = i
				return
			}
		}
	case opMove:
		r.err = w.move(r)
	case opExpire:
		r.err = w.expire(r)
	}
}

// move re-appends the version r.l of r.key, if it is still the latest.
func (w *worker) move(r *request) error {
	if cur, ok := w.s.idx.lookup(r.key); !ok || cur != r.l {
		return nil
	}
	key, val, err := w.s.record(r.l)
	if err != nil || !bytes.Equal(key, r.key) {
		return w.s.quarantine(r.l) // a damaged record stays (gc.go)
	}
	var dl uint64
	if r.l.ttl() {
		// The deadline goes with the value; an expired one is moved as
		// a tombstone (GC reclaims the value's bytes).
		val, dl = splitDeadline(val)
		if w.s.expiredAt(dl) {
			val, dl, r.expired = nil, 0, true
		}
	}
	if err := w.append(r, r.key, val, dl, r.l.serial, r.l.tomb() || r.expired); err != nil {
		return err
	}
	r.moved = true
	return nil
}

// metaSeed is the entry seed of the metadata segment being appended to.
func (w *worker) metaSeed() uint32 {
	if ep := w.m.g.epoch.Load(); !w.seedOK || ep != w.seedEpoch {
		w.seed, w.seedEpoch, w.seedOK = entrySeed(ep), ep, true
	}
	return w.seed
}

// midFence makes what the batch staged so far durable (not yet
// published: that waits for the batch's own fence), so that no more than
// maxUnfencedMeta of metadata is ever unfenced.
func (w *worker) midFence() error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.s.fence(w.m.g, w.d.g); err != nil {
		return err
	}
	w.unfenced = 0
	w.fences.Add(1)
	return nil
}

// append stages one record and its metadata entry; a deadline dl (not 0)
// ends the record (expire.go).
func (w *worker) append(r *request, key, value []byte, dl, serial uint64, tomb bool) error {
	if w.unfenced+2*entrySize > w.fenceAt { // its entry, and a marker if a log switches
		if err := w.midFence(); err != nil {
			return err
		}
	}
	vlen := len(value) + dlSize(dl)
	need := recSize(len(key), vlen)
	reserve := reservePut
	switch r.kind {
	case opDel, opExpire:
		reserve = reserveDel
	case opMove:
		reserve = 0
	}
	if !w.d.room(need) {
		if err := w.switchData(reserve); err != nil {
			return err
		}
	}
	if !w.m.room(entrySize) {
		if err := w.switchMeta(reserve); err != nil {
			return err
		}
	}
	if err := w.s.ready(w.d.g, w.d.tail+need); err != nil { // (grow.go)
		return err
	}
	if err := w.s.ready(w.m.g, w.m.tail+entrySize); err != nil {
		return err
	}
	buf, off := w.d.stage(need)
	copy(buf, key)
	copy(buf[len(key):], value)
	crc := recordCRC(key, value)
	if w.s.broken.noValueCRC {
		crc = persist.CRC32C(key)
	}
	if dl != 0 {
		crc = w.s.putDeadline(buf[len(key)+len(value):], dl, crc)
	}
	e := entry{serial: serial, klen: len(key), off: uint32(off), vlen: uint32(vlen), tomb: tomb, ttl: dl != 0, crc: crc, first: w.unfenced == 0 || w.s.broken.everyBatchStart}
	eb, _ := w.m.stage(entrySize)
	encodeEntrySeeded(eb, &e, w.metaSeed())
	w.unfenced += entrySize
	g := w.d.g
	l := loc{serial: serial, epoch: g.epoch.Load(), seg: uint32(g.idx), off: uint32(off), vlen: e.vlen, crc: crc, dev: uint16(w.dev.idx), klen: uint16(len(key))}
	if tomb {
		l.vlen |= tombBit
	}
	if dl != 0 {
		l.vlen |= ttlBit
	}
	g.live.Add(l.dataSize())
	if serial > g.maxSerial.Load() {
		g.maxSerial.Store(serial)
	}
	if r.kind == opMove || r.kind == opExpire {
		r.movedL = l
	} else {
		r.ui = len(w.ups)
		h := keyHash(key)
		if w.s.idx.merge == nil {
			w.s.idx.prefetch(h)
		}
		w.ups = append(w.ups, upd{h: h, key: key, l: l})
		r.tok = Token{l: l}
	}
	w.appended.Add(uint64(need + entrySize))
	if dl != 0 && r.kind != opMove {
		w.dls = append(w.dls, dlUpd{key: key, serial: serial, dl: dl})
	}
	switch {
	case r.kind == opMove || r.kind == opExpire:
	case tomb:
		w.dels.Add(1)
	default:
		w.puts.Add(1)
	}
	return nil
}

// switchData moves the data log to a fresh segment of the device and
// writes a marker for it in the metadata log. With no segment to take, the
// full one is closed (sealed at the end of the batch, so that the cleaner
// can reclaim its garbage) and the log has no segment until one is free;
// the put fails with a roomError, which its caller waits out (room.go).
func (w *worker) switchData(reserve int) error {
	g, ok := w.s.takeOrGrow(w.dev, reserve)
	if !ok {
		w.s.kickCleaner()
		if w.d.g != nil {
			if _, err := w.d.emit(); err != nil {
				w.s.fail(err)
				return err
			}
			w.toSeal = append(w.toSeal, w.d.g)
			w.d.reset(nil, 0)
		}
		return &roomError{dev: w.dev.dm.name(), worker: w.id, gid: w.gid, log: "data"}
	}
	if _, err := w.d.emit(); err != nil {
		w.dev.give(g)
		w.s.fail(err)
		return err
	}
	if err := w.s.format(g, kindData, w.id); err != nil {
		w.dev.give(g)
		w.s.fail(err)
		return err
	}
	if old := w.d.g; old != nil {
		w.toSeal = append(w.toSeal, old)
	}
	w.d.reset(g, bodyOff)
	w.s.kickCleaner()
	if !w.m.room(entrySize) {
		return w.switchMeta(reserve) // writes the marker at its start
	}
	w.marker()
	return nil
}

// switchMeta moves the metadata log to a fresh segment, starting it with
// a marker of the current data segment.
func (w *worker) switchMeta(reserve int) error {
	g, ok := w.s.takeOrGrow(w.dev, reserve)
	if !ok {
		w.s.kickCleaner()
		return &roomError{dev: w.dev.dm.name(), worker: w.id, gid: w.gid, log: "metadata"}
	}
	if _, err := w.m.emit(); err != nil {
		w.dev.give(g)
		w.s.fail(err)
		return err
	}
	if err := w.s.format(g, kindMeta, w.id); err != nil {
		w.dev.give(g)
		w.s.fail(err)
		return err
	}
	if old := w.m.g; old != nil {
		w.toSeal = append(w.toSeal, old)
	}
	w.m.reset(g, bodyOff)
	if w.d.g != nil {
		w.marker()
	}
	return nil
}

// sealSwitched seals the segments the batch switched away from, once its
// entries are published: sealed earlier, the cleaner could take a
// segment for a victim while its newest records are not in the index yet,
// and free it under them.
func (w *worker) sealSwitched() {
	for _, g := range w.toSeal {
		w.s.seal(g)
	}
	clear(w.toSeal)
	w.toSeal = w.toSeal[:0]
}

func (w *worker) marker() {
	e := entry{serial: w.d.g.epoch.Load(), off: uint32(w.d.g.idx), vlen: uint32(w.d.tail), first: w.unfenced == 0 || w.s.broken.everyBatchStart}
	eb, _ := w.m.stage(entrySize)
	encodeEntrySeeded(eb, &e, w.metaSeed())
	w.unfenced += entrySize
	w.appended.Add(entrySize)
}

// read answers a get sent to the worker (Options.WorkerReads): the
// record at r.l, checked against its key and CRC.
func (w *worker) read(r *request) {
	defer w.dev.segs[r.l.seg].unpin()
	val, dl, err, miss := w.s.readRecord(r.kind, r.key, r.l, r.hint)
	r.dl, r.err, r.miss = dl, err, miss
	if err == nil && !miss {
		r.val = append(make([]byte, 0, len(val)), val...)
	}
}

// position is where this worker's logs stand (for a checkpoint, taken
// while no operation runs).
func (w *worker) position() chainPos {
	p := chainPos{dev: w.dev.idx, owner: w.id}
	if w.m.g != nil {
		p.metaSeg, p.metaEpoch, p.off = w.m.g.idx, w.m.g.epoch.Load(), w.m.tail
	}
	if w.d.g != nil {
		p.dataSeg, p.dataEpoch, p.dataOff = w.d.g.idx, w.d.g.epoch.Load(), w.d.tail
	}
	return p
}
