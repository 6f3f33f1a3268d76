package kv

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Token is the location of a value as a put left it: which worker's data
// log, where, and the put's serial number. GetWithToken takes it back to
// skip the index lookup (the paper's fast path); the store validates it
// (the record there must hold the key, its checksum must hold, and it must
// still be the key's latest version), so a stale or forged token costs a
// slow-path Get, never a wrong value. Tokens are small and comparable; the
// zero Token is no location.
type Token struct {
	l    loc
	hint uint32 // the index slot of the key when the put was published
}

// Store is an open key-value store. Its methods are safe for concurrent
// use by many goroutines.
type Store struct {
	c       config
	media   media
	ckdir   fileDir
	devs    []*device
	workers []*worker
	idx     *index
	storeID uint64
	// needsCkpt: a device's kv.id says GC freed metadata segments a
	// checkpoint covered, so Open needs a checkpoint (open.go).
	needsCkpt bool
	// base: a lazy open's checkpoint, probed by lookups instead of loaded
	// into the index (reader.go); nil otherwise.
	base   *ckView
	epoch  atomic.Uint64  // last segment epoch handed out
	serial atomic.Uint64  // last serial number handed out
	spread []*worker      // the order writes visit the workers (routeOrder)
	placed sync.WaitGroup // the workers have placed themselves (start)

	// ops is held shared by every operation for its whole run (an async
	// put until its callback); Checkpoint and Close take it exclusively,
	// so that they see every worker idle and every queue empty.
	ops    sync.RWMutex
	closed atomic.Bool
	wg     sync.WaitGroup
	bg     sync.WaitGroup
	stalls sync.WaitGroup // PutAsyncs waiting for room (room.go)
	room   roomState
	failed failure // a failed durability call (faults.go)
	stop   chan struct{}
	mkick  chan struct{}
	ckick  chan struct{}
	gcMu   sync.Mutex
	ckMu   sync.Mutex
	ckpts  []ckptInfo // retained checkpoints, oldest first
	// orphans are the ends of the metadata logs of workers this store
	// found on media but does not run (reopened with fewer
	// WorkersPerDevice): every checkpoint records them, so that a replay
	// never starts such a log over (its old entries are behind the
	// checkpoint, a dropped tombstone's key among them) and GC frees its
	// segments but the last.
	orphans []chainPos
	ckSeq   uint64
	// ckLogAt is the log bytes appended when the last checkpoint was
	// written (negative: the tail a recovery replayed), ckBytes that
	// checkpoint's size (checkpointDue).
	ckLogAt, ckBytes atomic.Int64
	rep              RecoveryReport
	broken           broken
	shared           sharedFences // the broken variant sharedFence (variant.go)
	stats            storeStats
	grow             growState     // sized to the data (grow.go)
	prog             progressState // Options.Progress (progress.go)
	exp              expiry        // deadlines (expire.go)
	pool             sync.Pool
	// readers bounds each device's concurrent direct reads (a semaphore;
	// nil: no bound; Options.ReadersPerDevice).
	readers []chan struct{}
	reads   [readStripes]readCounter // direct reads made
}

// broken switches on the deliberately broken variants the crash tests
// must catch.
type broken struct {
	ackBeforeFence   bool // acknowledge a batch before its fence
	noValueCRC       bool // metadata entries checksum the key only
	freeBeforeSwitch bool // GC marks a victim free on media before its entries are moved
	noSerialRestore  bool // the serial counter restarts at 0 after recovery
	noDeadlineCRC    bool // a record's CRC leaves its deadline out (expire.go)
	everyBatchStart  bool // every metadata entry says it starts a batch, fenced before it or not
	sharedFence      bool // a writer acknowledges on another writer's fence (variant.go)
	growInPlace      bool // a new segment file is made under its own name, then sized (grow.go)

	mergeLogs bool // not a bug: the crash tests' switch for Options.MergeLogs
	// oneWriter, not a bug either: no expirer in the background, and
	// expireAll waits for each drop before it sends the next, so that one
	// worker at a time writes, when the workload calls (a simulated crash
	// point looks at the regions while the others are idle).
	oneWriter bool
	workers   bool // not a bug either: the crash tests' switch for the workers' data path (WorkerReads, DedicatedWorkers)
	// unfencedMax, not a bug either, when > 0 replaces maxUnfencedMeta,
	// so that the crash tests' small batches fence on the way too.
	unfencedMax int
}

type storeStats struct {
	mediaBytes, segmentsFreed, gcPasses, gcMoved atomic.Uint64
	checkpoints, tokenHits, tokenMisses          atomic.Uint64
	roomWaits, expired                           atomic.Uint64
}

// Open opens the store on opts.Devices, creating it when no device holds
// one yet, recovering it otherwise (see the package comment). Another
// process holding the store is ErrBusy.
func Open(opts *Options) (*Store, error) { return openStore(opts, false) }

// openStore is Open; lazy leaves the checkpoint out of the index
// (reader.go).
func openStore(opts *Options, lazy bool) (*Store, error) {
	c, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	c.lazy = lazy
	s := &Store{c: *c, stop: make(chan struct{}), mkick: make(chan struct{}, 1), ckick: make(chan struct{}, 1)}
	s.exp.kick = make(chan struct{}, 1)
	s.broken = opts.broken
	s.media = c.media
	if s.media == nil {
		s.media = &fileMedia{c: &s.c}
	}
	s.pool.New = func() any { return &request{done: make(chan struct{}, 1)} }
	s.initGrowth()
	if err := s.open(); err != nil {
		s.closeMedia()
		s.undoCreate() // space.go
		return nil, err
	}
	return s, nil
}

func (s *Store) open() error {
	if err := s.openMedia(); err != nil {
		return err
	}
	if err := s.recover(); err != nil {
		return err
	}
	s.start()
	if !s.c.NoStartupGC && !s.rep.Created && !s.c.ReadOnly {
		rep, err := s.gc(true)
		s.rep.GC = rep
		if err != nil {
			s.shutdown()
			return err
		}
	}
	return nil
}

func (s *Store) start() {
	s.spread = s.routeOrder()
	s.placed.Add(len(s.workers))
	if n := s.c.ExpectedKeys; n > 0 {
		s.idx.reserve(n)
	}
	s.readers = make([]chan struct{}, len(s.devs))
	if n := s.c.readers; n > 0 {
		for i := range s.readers {
			s.readers[i] = make(chan struct{}, n)
		}
	}
	for _, w := range s.workers {
		s.wg.Add(1)
		if s.c.DedicatedWorkers {
			s.spawn(w.run)
			continue
		}
		w.c.kick = make(chan struct{}, 1)
		s.spawn(w.runCombining)
	}
	s.placed.Wait() // every worker has bound itself to its node (numa.go)
	if s.c.ReadOnly {
		return // no background work: it writes (readonly.go)
	}
	s.bg.Add(3)
	s.spawn(s.merger)
	s.spawn(s.cleaner)
	s.spawn(s.expirer)
	if s.primeGrowth() { // (grow.go)
		s.bg.Add(1)
		s.spawn(s.grower)
	}
	if s.c.CheckpointInterval > 0 || s.c.CheckpointBytes > 0 {
		s.bg.Add(1)
		s.spawn(s.checkpointer)
	}
}

func (s *Store) getReq() *request { return s.pool.Get().(*request) }

func (s *Store) putReq(r *request) {
	*r = request{done: r.done}
	s.pool.Put(r)
}

// complete hands a finished request back to its caller.
func (s *Store) complete(r *request) {
	if r.cb != nil {
		if re := asRoom(r.err); re != nil && s.c.FullWait >= 0 {
			// Wait for room off the worker, without the operations lock.
			key, value, cb := r.key, r.value, r.cb
			s.putReq(r)
			s.ops.RUnlock()
			s.stalls.Add(1)
			s.spawn(func() { s.retryAsync(re, key, value, cb) })
			return
		}
		cb, tok, err := r.cb, r.tok, r.err
		s.putReq(r)
		cb(tok, err)
		s.ops.RUnlock()
		return
	}
	r.done <- struct{}{}
}

// enter starts an operation: ErrClosed after Close.
func (s *Store) enter() error {
	s.ops.RLock()
	if s.closed.Load() {
		s.ops.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) checkKey(key []byte) error {
	switch {
	case len(key) == 0:
		return fmt.Errorf("%w: empty key (keys are 1 to %d bytes)", ErrInvalid, s.c.MaxKey)
	case len(key) > s.c.MaxKey:
		return fmt.Errorf("%w: key of %d bytes, the limit is %d (Options.MaxKey)", ErrTooLarge, len(key), s.c.MaxKey)
	}
	return nil
}

func (s *Store) checkKV(key, value []byte) error {
	if err := s.checkKey(key); err != nil {
		return err
	}
	if len(value) > s.c.MaxValue {
		return fmt.Errorf("%w: value of %d bytes, the limit is %d (Options.MaxValue)", ErrTooLarge, len(value), s.c.MaxValue)
	}
	return nil
}

// writer is the worker for a write of serial number serial: uniform over
// the workers of all devices, consecutive serials alternating NUMA nodes,
// then devices (routeOrder). The serial is the spread, so that a write
// costs the router one atomic.
func (s *Store) writer(serial uint64) *worker {
	return s.spread[serial%uint64(len(s.spread))]
}

// write runs a put or delete to completion.
func (s *Store) write(kind opKind, key, value []byte) (Token, error) {
	if err := s.checkKV(key, value); err != nil {
		return Token{}, err
	}
	return s.writeRetry(nil, kind, key, value, 0, nil)
}

// Put stores key = value; durable when it returns nil.
func (s *Store) Put(key, value []byte) error {
	_, err := s.write(opPut, key, value)
	return err
}

// PutToken is Put that also returns the value's location token.
func (s *Store) PutToken(key, value []byte) (Token, error) { return s.write(opPut, key, value) }

// Delete removes key (a durable tombstone when it returns nil). Deleting
// an absent key is not an error.
func (s *Store) Delete(key []byte) error {
	_, err := s.write(opDel, key, nil)
	return err
}

// PutAsync queues a put and returns; done is called once, from the
// goroutine that writes its batch (a worker, or a client leading a batch
// on the combining path; or, for a put that found no free segment and waited for the cleaner,
// from the goroutine that waited; room.go), when the put is durable (with
// its token) or failed. done must be quick and must not call the store.
// key and value are copied. A full queue blocks PutAsync (admission
// control); Close waits for the puts waiting for room (they get ErrClosed).
func (s *Store) PutAsync(key, value []byte, done func(Token, error)) error {
	if done == nil {
		return fmt.Errorf("%w: nil done callback", ErrInvalid)
	}
	if err := s.checkKV(key, value); err != nil {
		return err
	}
	if err := s.failure(); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	r := s.getReq()
	r.kind, r.cb = opPut, done
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	r.key, r.value = buf[:len(key):len(key)], buf[len(key):]
	r.serial = s.serial.Add(1)
	s.writer(r.serial).send(r) // the worker's complete releases s.ops
	return nil
}

// Apply makes every operation of b durable before it returns; its
// operations go to one worker and share its batches (one fence when they
// fit in BatchBytes and the segment). On an error some operations may be
// durable and others not.
func (s *Store) Apply(b *Batch) error {
	if b == nil || len(b.ops) == 0 {
		return nil
	}
	for i := range b.ops {
		if err := s.checkKV(b.ops[i].key, b.ops[i].value); err != nil {
			return fmt.Errorf("batch operation %d: %w", i, err)
		}
		if err := checkOpDeadline(b.ops[i].dl); err != nil {
			return fmt.Errorf("batch operation %d: %w", i, err)
		}
	}
	if err := s.failure(); err != nil {
		return err
	}
	ops := b.ops
	var rw roomWait
	defer rw.done(s)
	for {
		if err := s.enter(); err != nil {
			return err
		}
		r := s.getReq()
		r.kind, r.ops = opApply, ops
		r.serials = make([]uint64, len(ops))
		last := s.serial.Add(uint64(len(ops)))
		for i := range r.serials {
			r.serials[i] = last - uint64(len(ops)-1-i)
		}
		w := s.route(&rw, last)
		w.send(r)
		w.await(r)
		err, n := r.err, r.nops
		s.putReq(r)
		s.ops.RUnlock()
		re := asRoom(err)
		if re == nil {
			return err
		}
		// The operations before n are durable; wait, then write the rest.
		ops = ops[n:]
		if err := s.awaitRoom(&rw, re); err != nil {
			return err
		}
	}
}

// owner is the worker that reads data segment g.
func (s *Store) owner(g *segment) *worker {
	w := s.c.workers
	return s.workers[g.dev.idx*w+g.owner%w]
}

// Close writes a checkpoint, stops the workers and unmaps the devices.
// Further calls return ErrClosed.
func (s *Store) Close() error {
	s.ops.Lock()
	if s.closed.Load() {
		s.ops.Unlock()
		return ErrClosed
	}
	var err error
	if !s.c.ReadOnly {
		err = s.checkpointLocked()
	}
	s.closed.Store(true)
	s.ops.Unlock()
	s.shutdown()
	return err
}

// shutdown stops every goroutine and unmaps the devices.
func (s *Store) shutdown() {
	s.closed.Store(true)
	close(s.stop)
	s.room.signal()
	s.stalls.Wait()
	s.bg.Wait()
	for _, w := range s.workers {
		if s.c.DedicatedWorkers {
			close(w.q)
		} else {
			close(w.c.kick)
		}
	}
	s.wg.Wait()
	s.closeMedia()
}

func (s *Store) closeMedia() {
	for _, d := range s.devs {
		if d.dm != nil {
			d.dm.close()
		}
	}
}

// fence is the batch's one fence: it makes every streamed or flushed
// store of this worker durable (an SFENCE orders all of them, whatever
// segment they went to; a simulated region's fence is global too).
func (s *Store) fence(g ...*segment) error {
	for _, x := range g {
		if x != nil {
			return x.r.Drain()
		}
	}
	return nil
}

// seal marks g as no longer appended to.
func (s *Store) seal(g *segment) {
	g.dev.mu.Lock()
	g.sealed = true
	g.dev.mu.Unlock()
}

// dead accounts a version that is no longer the latest.
func (s *Store) dead(l loc) {
	if int(l.dev) >= len(s.devs) {
		return
	}
	if segs := s.devs[l.dev].list(); int(l.seg) < len(segs) { // (the merger calls it outside the operations lock: grow.go)
		if g := segs[l.seg]; g.epoch.Load() == l.epoch {
			g.live.Add(-l.dataSize())
		}
	}
}

// record returns the key and value of the record at l, checked.
func (s *Store) record(l loc) (key, value []byte, err error) {
	if int(l.dev) >= len(s.devs) || int(l.seg) >= len(s.devs[l.dev].segs) {
		return nil, nil, fmt.Errorf("%w: location on device %d segment %d does not exist", ErrCorrupt, l.dev, l.seg)
	}
	g := s.devs[l.dev].segs[l.seg]
	n := int(l.klen) + l.valueLen()
	if g.kind != kindData || g.epoch.Load() != l.epoch || int(l.off) < bodyOff || int(l.off)+n > g.size {
		return nil, nil, fmt.Errorf("%w: device %d segment %d: no record of %d bytes at offset %d (epoch %d, segment epoch %d)", ErrCorrupt, l.dev, l.seg, n, l.off, l.epoch, g.epoch.Load())
	}
	b := g.mem[l.off : int(l.off)+n]
	g.r.ReadRand(b) // declared to an emulated device (Options.Emulate)
	crc, err := s.readCRC(g, b[:s.crcLen(n, l.ttl())])
	if err != nil {
		return nil, nil, fmt.Errorf("kv: device %s segment %d: the record at offset %d: %w", g.dev.dm.name(), l.seg, l.off, err)
	}
	if crc != l.crc && !s.broken.noValueCRC {
		return nil, nil, fmt.Errorf("%w: device %d segment %d offset %d: record checksum %#08x, its metadata says %#08x", ErrCorrupt, l.dev, l.seg, l.off, crc, l.crc)
	}
	return b[:l.klen], b[l.klen:], nil
}

func (s *Store) kickMerger() {
	select {
	case s.mkick <- struct{}{}:
	default:
	}
}

func (s *Store) kickCleaner() {
	select {
	case s.ckick <- struct{}{}:
	default:
	}
}

// merger applies the workers' merge logs to the index in the background.
func (s *Store) merger() {
	defer s.bg.Done()
	timer := time.NewTimer(mergeDelay)
	timer.Stop()
	armed := false
	for {
		fired := false
		select {
		case <-s.stop:
			timer.Stop()
			return
		case <-s.mkick:
		case <-timer.C:
			armed, fired = false, true
		}
		if (fired || s.longestMerge() >= mergeKick) && !testPauseMerger.Load() {
			s.drainMerge()
		}
		if !armed && s.idx.pending() > 0 {
			timer.Reset(mergeDelay)
			armed = true
		}
	}
}

func (s *Store) longestMerge() int {
	n := 0
	for _, ml := range s.idx.merge {
		n = max(n, ml.len())
	}
	return n
}

func (s *Store) drainMerge() {
	for _, ml := range s.idx.merge {
		ml.drain(s.idx)
	}
}
