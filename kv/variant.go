package kv

import (
	"runtime"
	"sync/atomic"
)

// Hooks for the tests that prove the store: how it starts its goroutines,
// and the deliberately broken variant that only a concurrent crash model
// catches. Nothing here is an Option users see.

// threads lets a test schedule the store's goroutines: the concurrent
// crash tests start the workers, the merger, the cleaner, the expirer and
// the checkpointer as persist/crash threads (Run.Go) and yield with
// Run.Yield, so that the simulator's seeded scheduler interleaves them
// with the clients and each goroutine's fences make only its own flushes
// durable. Nil: plain goroutines and runtime.Gosched.
type threads struct {
	spawn func(fn func())
	yield func()
}

// spawn starts fn as one of the store's goroutines.
func (s *Store) spawn(fn func()) {
	if h := s.c.threads; h != nil {
		h.spawn(fn)
		return
	}
	go fn()
}

// yield lets the goroutines that are ready run first.
func (s *Store) yield() {
	if h := s.c.threads; h != nil {
		h.yield()
		return
	}
	runtime.Gosched()
}

// commitFence is a batch's fence: its writer's own, except in the broken
// variant sharedFence, where a writer that finds another writer's fence
// announced and not yet done waits for that fence and skips its own —
// right where a fence orders every core's flushes, wrong on a machine
// where a fence orders only its own core's (SFENCE): the flushes of the
// writer that skipped are not known to be durable when it acknowledges.
// Crash tests whose store writes from one goroutine at a time pass it;
// only the concurrent model (persist/crash's threads) catches it.
func (s *Store) commitFence(w *worker) error {
	if !s.broken.sharedFence {
		return s.fence(w.m.g, w.d.g)
	}
	sh := &s.shared
	if started := sh.started.Load(); started > sh.done.Load() {
		for sh.done.Load() < started {
			s.yield()
		}
		return nil
	}
	n := sh.started.Add(1)
	err := s.fence(w.m.g, w.d.g)
	for d := sh.done.Load(); d < n && !sh.done.CompareAndSwap(d, n); d = sh.done.Load() {
	}
	return err
}

// sharedFences is sharedFence's bookkeeping: fences announced, and the
// newest done.
type sharedFences struct{ started, done atomic.Uint64 }
