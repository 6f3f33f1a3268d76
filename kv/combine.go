package kv

import "sync"

// Combining writes (the default; Options.DedicatedWorkers turns it off).
// A worker stays the sole owner of its data and metadata logs, but its
// batches are written by whichever goroutine holds its writer slot: a
// client that queues a request and finds the slot free takes it and
// leads — it takes what is queued (up to BatchBytes), writes it with one
// fence, publishes and completes it, and goes on while more is queued, up
// to leadRounds batches; then it hands the slot to a waiting client, the
// heir, whose own request is still queued (group commit, as RocksDB's
// write groups and Pebble's commit pipeline do). The others wait on their
// request's completion. A client's put so costs no goroutine hand-off
// when it leads, one wake-up when it follows, instead of two hand-offs
// (client -> worker -> client) each time. Serial numbers still come from
// the router before a request is queued, and one batch is still one
// fence. PutAsync's requests have no goroutine waiting on them: queued on
// a free slot, or left with no client to hand the slot to, they wake the
// worker's goroutine, which leads instead.
type combiner struct {
	mu      sync.Mutex
	pending []*request
	busy    bool          // a goroutine holds the writer slot (or was given it)
	notFull chan struct{} // closed when a leader takes from a full queue
	kick    chan struct{} // wakes the worker's goroutine to lead
}

// leadRounds is how many batches a client leads before it hands the slot
// on: more batches per leader save wake-ups, fewer bound the wait of the
// leader's own caller.
const leadRounds = 4

// send queues r. A synchronous request (no callback) that finds the slot
// free is given it (r.first, a field only its caller touches: the request
// is already queued, where a leader's heir may set r.lead): its caller
// leads in await. A PutAsync that
// finds it free wakes the worker's goroutine; one that finds the queue
// full (QueueDepth) waits for a leader to take from it (admission
// control).
func (w *worker) send(r *request) {
	if w.s.c.DedicatedWorkers {
		w.q <- r
		return
	}
	c := &w.c
	async := r.cb != nil || w.s.c.ackGate != nil
	c.mu.Lock()
	for async && len(c.pending) >= w.s.c.QueueDepth {
		if c.notFull == nil {
			c.notFull = make(chan struct{})
		}
		ch := c.notFull
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
	c.pending = append(c.pending, r)
	if c.busy {
		c.mu.Unlock()
		return
	}
	c.busy = true
	c.mu.Unlock()
	if async {
		// (The deliberately broken ackBeforeFence parks its writer until
		// the crash workload has seen the acknowledgment: a worker's
		// goroutine, never the workload's, writes its batches.)
		w.c.kick <- struct{}{}
		return
	}
	r.first = true
}

// await waits until r, sent to w, is complete, leading when it holds (or
// is handed) the writer slot.
func (w *worker) await(r *request) {
	if r.first {
		r.first = false
		w.lead(false)
	}
	for {
		w.wait(r)
		if !r.lead {
			return
		}
		r.lead = false
		w.lead(false)
	}
}

// spinPolls is how many times a follower polls its request's completion,
// yielding the processor in between (the leader may need it), before it
// parks: a request completed while its caller polls costs the leader no
// wake-up of a parked goroutine (and of an idle thread to run it).
const spinPolls = 8

// wait waits for r's completion (or for the writer slot: r.lead).
func (w *worker) wait(r *request) {
	if !w.s.c.parkOnly {
		for range spinPolls {
			select {
			case <-r.done:
				return
			default:
			}
			w.s.yield()
		}
	}
	<-r.done
}

// lead writes the queued batches while it holds the writer slot: at most
// leadRounds of them, then it hands the slot to a queued synchronous
// request's caller, else (a client) to the worker's goroutine; it frees
// the slot when the queue is empty.
func (w *worker) lead(worker bool) {
	c := &w.c
	if !w.s.c.NoBatching {
		// Let the clients that are ready to run queue before the first
		// batch closes, as a dedicated worker does: on few cores the
		// ones the last batch woke have not run yet, and without it a
		// batch holds about one put (measured: 1.01 puts per batch with
		// 16 clients on 2 cores, 7.2 with it).
		w.s.yield()
	}
	for round := 0; ; round++ {
		c.mu.Lock()
		if len(c.pending) == 0 {
			c.busy = false
			c.mu.Unlock()
			return
		}
		if round >= leadRounds {
			if heir := w.heir(); heir != nil {
				c.mu.Unlock()
				heir.done <- struct{}{}
				return
			}
			if !worker {
				c.mu.Unlock()
				c.kick <- struct{}{}
				return
			}
			round = 0 // the worker's goroutine: nobody to hand the slot to
		}
		b := w.take()
		c.mu.Unlock()
		w.process(b)
		w.batch = b[:0] // (process cleared it)
	}
}

// heir is the first queued synchronous request (given the slot: lead
// set), or nil. Called under c.mu.
func (w *worker) heir() *request {
	if w.s.c.ackGate != nil {
		return nil
	}
	for _, r := range w.c.pending {
		if r.cb == nil {
			r.lead = true
			return r
		}
	}
	return nil
}

// take removes the next batch from the queue: up to BatchBytes of log
// bytes (at least one request, at most 4096), one request without
// batching. Called under c.mu.
func (w *worker) take() []*request {
	c := &w.c
	n, bytes := 0, 0
	for n < len(c.pending) && n < 4096 {
		if n > 0 && (w.s.c.NoBatching || bytes >= w.s.c.BatchBytes) {
			break
		}
		bytes += c.pending[n].bytes()
		n++
	}
	b := append(w.batch[:0], c.pending[:n]...)
	rest := copy(c.pending, c.pending[n:])
	clear(c.pending[rest:])
	c.pending = c.pending[:rest]
	if c.notFull != nil && len(c.pending) < w.s.c.QueueDepth {
		close(c.notFull)
		c.notFull = nil
	}
	return b
}

// runCombining is the worker's goroutine on the combining path: it leads
// when a PutAsync (or a queue of them only) wakes it. NUMA placement binds
// it as it binds a dedicated worker (numa.go); the batches the clients
// lead run where the clients run.
func (w *worker) runCombining() {
	defer w.s.wg.Done()
	w.cpus.Store(w.s.c.bindToNode(w.s.c.workerNode(w.dev.idx)))
	w.s.placed.Done()
	for range w.c.kick {
		w.lead(true)
	}
}
