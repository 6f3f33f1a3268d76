package fptree

import (
	"runtime"
	"sync/atomic"
)

// variant selects a deliberately broken persistence protocol, which the
// crash tests show the simulator catches (export_test.go sets it).
type variant uint8

const (
	correct variant = iota
	// bitmapFirst commits an insert's bitmap bit before its slot is
	// durable: one fence, the slot and the bit persisted together.
	bitmapFirst
	// splitUnlogged does not make the split micro log durable before
	// the new leaf is linked: the log, the link and the old leaf's new
	// bitmap are persisted by one fence.
	splitUnlogged
	// splitLeafUndrained does not fence the new leaf of a split before
	// the micro log is written: the leaf and the log are made durable by
	// the log's one fence.
	splitLeafUndrained
	// splitLinkWithClear does not fence the link and the old leaf's cut
	// before the log is cleared: the three words are made durable by one
	// fence.
	splitLinkWithClear
	// splitClearUnflushed stores the cleared split log but does not
	// flush it: the split returns with the log set on the media.
	splitClearUnflushed
	// freeUnlogged frees a leaf without its micro log: the unlink alone,
	// one fence. Its three words may reach the media apart, which Open's
	// cross-check of the back links takes for damage (TestFreeLogNeeded).
	freeUnlogged
	// unlinkUnflushed stores a free's unlink but does not flush it: the
	// leaf joins the free leaves while the media still links it.
	unlinkUnflushed
	// redoClearFirst clears the split log in recovery with the same fence
	// that makes the redone link and cut durable.
	redoClearFirst
	// redoNoMark does not raise the mark (layout.go) when recovery
	// redoes a split: the split's new leaf, linked, is past the mark when
	// the crash kept the log but not the mark.
	redoNoMark
	// walkUnlinkUnflushed does not flush recovery's unlink of an empty
	// leaf: the leaf is free in DRAM while the media still links it.
	walkUnlinkUnflushed
	// poisonAsEnd takes a leaf whose first line faults (poisoned media)
	// for the end of the chain: the keys after it are silently absent,
	// the damage mistaken for "empty".
	poisonAsEnd
	// resumeUnlinked goes on past a leaf whose first line faults at any
	// leaf whose prev names it, linked or not: the stale copy an
	// interrupted split left in a free leaf is taken for the chain.
	resumeUnlinked
	// sharedStageFence lets an insert that finds another writer's insert
	// announced and not yet fenced wait for that writer's staging fence
	// instead of fencing its own slot: right where a fence orders every
	// core's flushes, wrong where SFENCE orders its own core's only — the
	// slot and the bitmap bit that commits it may then reach the media
	// apart. One writer never finds another's insert: only the concurrent
	// model (persist/crash's threads) catches it (TestCrashConcurrentBroken).
	sharedStageFence
)

// announce notes an insert whose staging fence is to come (the variant
// sharedStageFence only).
func (t *Tree) announce() {
	if t.variant == sharedStageFence {
		t.shared.pending.Add(1)
	}
}

// stageFence is an insert's fence between its slot and its commit. In
// sharedStageFence, a writer that finds another insert announced leaves
// the fence to it: it withdraws (the last one announced always fences, so
// that two writers never wait for each other) and waits until a staging
// fence is done after its own flush.
func (t *Tree) stageFence() error {
	if t.variant != sharedStageFence {
		return t.r.Drain()
	}
	sh := &t.shared
	d := sh.done.Load()
	for p := sh.pending.Load(); p > 1; p = sh.pending.Load() {
		if sh.pending.CompareAndSwap(p, p-1) {
			for sh.done.Load() == d {
				runtime.Gosched()
			}
			return nil
		}
	}
	err := t.r.Drain()
	sh.done.Add(1)
	sh.pending.Add(-1)
	return err
}

// sharedFences is sharedStageFence's bookkeeping: the inserts announced
// and not yet fenced, and the staging fences done.
type sharedFences struct {
	pending atomic.Int32
	done    atomic.Uint64
}
