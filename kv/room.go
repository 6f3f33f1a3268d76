package kv

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Backpressure. A write whose worker finds its log full and no free
// segment on its device (beyond the operation's reserve) fails in the
// worker at once with a roomError: the worker never waits, because the
// cleaner's moves and frees of its segments are requests to that same
// worker. The write's caller — the client goroutine for Put, Delete and
// Apply, a goroutine of its own for PutAsync — then releases the
// operations lock (so that the cleaner's checkpoints and Close can run),
// tries every other worker once (another may have room in its log, or its
// device a free segment), and else waits for the cleaner: the cleaner
// runs full passes while anyone waits, and every freed segment and every
// finished pass wakes the waiters to try again. The write takes a new
// serial number for each try (it was acknowledged by none, so it is
// ordered where it finally commits). It gives up with ErrFull when
//
//   - a full pass that began after the write first failed freed nothing
//     (or failed), or
//   - no device's sealed data segments hold a segment's worth of garbage
//     (live data fills the device: cleaning could never free a segment), or
//   - it waited Options.FullWait in all.
//
// Nothing is written by a failed try, so ErrFull loses nothing and the
// store stays readable; deletes, then GC, make room again.

// roomError: the worker's log is full and its device has no free segment
// for it. It wraps ErrFull; it is final once why says why the wait gave up.
type roomError struct {
	dev    string
	worker int // on its device
	gid    int // in Store.workers
	log    string
	why    string
}

func (e *roomError) Error() string {
	msg := fmt.Sprintf("%v: device %s has no free segment for worker %d's %s log", ErrFull, e.dev, e.worker, e.log)
	if e.why != "" {
		msg += " (" + e.why + ")"
	}
	return msg
}

func (e *roomError) Unwrap() error { return ErrFull }

func asRoom(err error) *roomError {
	if err == nil {
		return nil // (before re is declared: errors.As makes it escape, an allocation per write)
	}
	var re *roomError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// roomState is what the waiters watch: an event count (a segment freed,
// a pass ended) with a channel closed at each event, and the cleaner's
// passes.
type roomState struct {
	mu      sync.Mutex
	ch      chan struct{}
	events  uint64
	passes  uint64 // passes begun
	failed  uint64 // the last full pass that freed nothing
	failErr error  // ... and its error, if it failed
	waiters atomic.Int32
}

// signal wakes every waiter.
func (r *roomState) signal() {
	r.mu.Lock()
	r.events++
	if r.ch != nil {
		close(r.ch)
		r.ch = nil
	}
	r.mu.Unlock()
}

func (s *Store) passBegin() uint64 {
	s.room.mu.Lock()
	defer s.room.mu.Unlock()
	s.room.passes++
	return s.room.passes
}

// passEnd records the end of pass n; a full pass (all) that freed nothing
// is the waiters' sign to give up.
func (s *Store) passEnd(n uint64, all bool, freed int, err error) {
	if all && (freed == 0 || err != nil) {
		s.room.mu.Lock()
		s.room.failed, s.room.failErr = n, err
		s.room.mu.Unlock()
	}
	s.room.signal()
}

// roomWait is one write's waiting: when it began, what it has tried.
type roomWait struct {
	started bool
	start   time.Time
	since   uint64 // passes begun before the write first failed
	seen    uint64 // events when this round of tries began
	first   int    // the worker that failed first
	tries   int    // workers tried this round
}

// done ends the write's waiting.
func (rw *roomWait) done(s *Store) {
	if rw.started {
		s.room.waiters.Add(-1)
	}
}

// route is the worker a write of serial goes to: the router's pick, or while
// retrying, the next worker of this round.
func (s *Store) route(rw *roomWait, serial uint64) *worker {
	if !rw.started {
		return s.writer(serial)
	}
	return s.workers[(rw.first+rw.tries)%len(s.workers)]
}

// awaitRoom is called after a try failed with e: nil to try again (route
// picks where), or the final error.
func (s *Store) awaitRoom(rw *roomWait, e *roomError) error {
	if s.c.FullWait < 0 {
		return s.awaitGrowth(e)
	}
	if !rw.started {
		rw.started, rw.start, rw.first = true, time.Now(), e.gid
		s.room.waiters.Add(1)
		s.stats.roomWaits.Add(1)
		s.room.mu.Lock()
		rw.since, rw.seen = s.room.passes, s.room.events
		s.room.mu.Unlock()
	}
	if rw.tries++; rw.tries < len(s.workers) {
		return nil
	}
	for {
		s.room.mu.Lock()
		if s.room.events != rw.seen {
			// Something was freed since this round began: a new round.
			rw.seen, rw.tries = s.room.events, 0
			s.room.mu.Unlock()
			return nil
		}
		if s.room.ch == nil {
			s.room.ch = make(chan struct{})
		}
		ch, failed, ferr := s.room.ch, s.room.failed > rw.since, s.room.failErr
		s.room.mu.Unlock()
		can, gerr := s.growing()
		growing := can && gerr == nil
		switch {
		case s.closed.Load():
			return ErrClosed
		case growing:
			// The grower is adding a segment (grow.go): wait for it.
		case failed && ferr != nil:
			e.why = fmt.Sprintf("the cleaner failed: %v", ferr)
			return noSpace(e, gerr)
		case failed:
			e.why = "a cleaning pass freed no segment: live data fills the device"
			return noSpace(e, gerr)
		}
		if !growing && !s.anyRoom() {
			e.why = fmt.Sprintf("live data fills the devices: their sealed data segments hold less than a segment (%d bytes) of garbage each", s.c.SegmentSize-bodyOff)
			return noSpace(e, gerr)
		}
		left := s.c.FullWait - time.Since(rw.start)
		if left <= 0 {
			e.why = fmt.Sprintf("the cleaner freed no room in %v (Options.FullWait)", s.c.FullWait)
			return noSpace(e, gerr)
		}
		s.kickCleaner()
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		case <-s.stop:
		}
		t.Stop()
	}
}

// growing: some device is below its limit and may get a segment file
// (grow.go; the grower is kicked), and err is why the last growth was
// refused, if it was.
func (s *Store) growing() (bool, error) {
	err := s.growErr()
	for _, d := range s.devs {
		d.mu.Lock()
		can := d.canGrow()
		d.mu.Unlock()
		if can {
			s.kickGrow()
			return true, err
		}
	}
	return false, err
}

// awaitGrowth is awaitRoom without waiting for the cleaner
// (FullWait < 0): while a device may grow, the write waits for its new
// segment file (grow.go).
func (s *Store) awaitGrowth(e *roomError) error {
	for {
		s.room.mu.Lock()
		if s.room.ch == nil {
			s.room.ch = make(chan struct{})
		}
		ch := s.room.ch
		s.room.mu.Unlock()
		can, gerr := s.growing()
		if !can || gerr != nil {
			return noSpace(e, gerr)
		}
		for _, d := range s.devs {
			if d.freeCount() > reservePut {
				return nil // a segment came: try again
			}
		}
		select {
		case <-ch:
		case <-s.stop:
			return ErrClosed
		}
	}
}

// noSpace is the error of a write that gave up waiting for room: e, or
// when the device could not grow for want of free space (ErrNoSpace),
// that, with e.
func noSpace(e *roomError, gerr error) error {
	if gerr == nil {
		return e
	}
	return fmt.Errorf("%w (and %s)", gerr, strings.TrimPrefix(e.Error(), ErrFull.Error()+": "))
}

// anyRoom: some device has a free segment for a put or enough garbage
// that cleaning can free one.
func (s *Store) anyRoom() bool {
	for _, d := range s.devs {
		if d.freeCount() > reservePut || s.reclaimable(d) {
			return true
		}
	}
	return false
}

// reclaimable: d's sealed data segments hold at least a segment's worth
// of garbage, so cleaning them can free a segment.
func (s *Store) reclaimable(d *device) bool {
	body := int64(s.c.SegmentSize - bodyOff)
	var garbage int64
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range d.segs {
		if g.kind == kindData && g.sealed && !g.poisoned.Load() && !g.damaged.Load() { // (those are never cleaned)
			garbage += max(0, body-g.live.Load())
		}
	}
	return garbage >= body
}

// writeRetry runs a put or delete to completion, waiting for room as the
// package comment of room.go says; re is a first try's failure (PutAsync),
// nil for none.
// A put with dl carries that deadline; with cond it is written only if
// the index still holds *cond for key (else errRaced; expire.go).
func (s *Store) writeRetry(re *roomError, kind opKind, key, value []byte, dl uint64, cond *loc) (Token, error) {
	var rw roomWait
	defer rw.done(s)
	for {
		if re != nil {
			if err := s.awaitRoom(&rw, re); err != nil {
				return Token{}, err
			}
		}
		if err := s.failure(); err != nil {
			return Token{}, err
		}
		if err := s.enter(); err != nil {
			return Token{}, err
		}
		r := s.getReq()
		r.kind, r.key, r.value, r.dl = kind, key, value, dl
		if cond != nil {
			r.cond, r.l = true, *cond
		}
		r.serial = s.serial.Add(1)
		w := s.route(&rw, r.serial)
		w.send(r)
		w.await(r)
		tok, err := r.tok, r.err
		s.putReq(r)
		s.ops.RUnlock()
		if re = asRoom(err); re == nil {
			return tok, err
		}
	}
}

// retryAsync finishes a PutAsync whose first try found no room (its
// operations lock already released).
func (s *Store) retryAsync(re *roomError, key, value []byte, done func(Token, error)) {
	defer s.stalls.Done()
	tok, err := s.writeRetry(re, opPut, key, value, 0, nil)
	done(tok, err)
}
