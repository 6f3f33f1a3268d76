package kv

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/bits-and-blooms/bloom/v3"
)

// mergeLog is one worker's log of index updates not yet merged: chunks
// of records, each with a bloom filter that lookups test before they
// scan it. The worker appends after each batch's fence; the merger
// applies whole chunks to the shards and only then removes them, so a
// lookup always finds an update in one place or the other.
type mergeLog struct {
	dmu    sync.Mutex // one drain at a time
	mu     sync.RWMutex
	chunks []*mchunk
	n      int
}

const chunkCap = 512

// mrec is one update in a merge log chunk; its key is in the chunk's
// key bytes.
type mrec struct {
	h    uint64
	l    loc
	koff uint32
}

type mchunk struct {
	recs   []mrec
	keys   []byte
	filter *bloom.BloomFilter
}

func newChunk() *mchunk {
	return &mchunk{recs: make([]mrec, 0, chunkCap), filter: bloom.NewWithEstimates(chunkCap, 0.01)}
}

func (c *mchunk) key(i int) []byte {
	r := &c.recs[i]
	return c.keys[r.koff : r.koff+uint32(r.l.klen)]
}

// testPauseMerger, when set (tests), keeps the background merger from
// draining (explicit drains still run), so that a test can hold updates in
// the merge logs.
var testPauseMerger atomic.Bool

// Merger wake-ups: at this many pending updates in one merge log, and
// at most mergeDelay after the first.
const (
	mergeKick  = chunkCap / 2
	mergeDelay = time.Millisecond
)

// add appends a batch's updates and returns the log's length.
func (m *mergeLog) add(ups []upd) int {
	m.mu.Lock()
	for i := range ups {
		var c *mchunk
		if k := len(m.chunks); k > 0 && len(m.chunks[k-1].recs) < chunkCap {
			c = m.chunks[k-1]
		} else {
			c = newChunk()
			m.chunks = append(m.chunks, c)
		}
		c.recs = append(c.recs, mrec{h: ups[i].h, l: ups[i].l, koff: uint32(len(c.keys))})
		c.keys = append(c.keys, ups[i].key...)
		c.filter.Add(ups[i].key)
	}
	m.n += len(ups)
	n := m.n
	m.mu.Unlock()
	return n
}

func (m *mergeLog) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.n
}

// find returns the newest version of key (hash h) in the log.
func (m *mergeLog) find(h uint64, key []byte) (loc, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var best loc
	found := false
	for _, c := range m.chunks {
		if !c.filter.Test(key) {
			continue
		}
		for i := len(c.recs) - 1; i >= 0; i-- {
			r := &c.recs[i]
			if r.h == h && string(c.key(i)) == string(key) && (!found || r.l.newer(best)) {
				best, found = r.l, true
			}
		}
	}
	return best, found
}

// drain applies every chunk present now to the shards, then removes them.
func (m *mergeLog) drain(x *index) int {
	m.dmu.Lock()
	defer m.dmu.Unlock()
	m.mu.Lock()
	chunks := m.chunks
	if k := len(chunks); k > 0 {
		// Seal the last chunk: the worker starts a new one.
		m.chunks = append([]*mchunk(nil), chunks...)
		m.chunks = append(m.chunks, newChunk())
	}
	m.mu.Unlock()
	n := 0
	for _, c := range chunks {
		for i := range c.recs {
			x.apply(&upd{h: c.recs[i].h, key: c.key(i), l: c.recs[i].l})
		}
		n += len(c.recs)
	}
	m.mu.Lock()
	m.chunks = m.chunks[len(chunks):]
	m.n -= n
	m.mu.Unlock()
	return n
}
