package kv

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/tidwall/btree"
)

// loc is where the latest version of a key lives: an index entry, and the
// body of a Token.
type loc struct {
	serial uint64
	epoch  uint64 // of the data segment: a reused segment never matches
	seg    uint32
	off    uint32
	vlen   uint32 // tombBit set for a tombstone
	crc    uint32
	dev    uint16
	klen   uint16
}

func (l loc) tomb() bool    { return l.vlen&tombBit != 0 }
func (l loc) valueLen() int { return int(l.vlen & vlenMask) }
func (l loc) size() int64   { return int64(recSize(int(l.klen), l.valueLen()) + entrySize) }

// newer reports whether a wins over b: the higher serial. A version moved
// by GC keeps its serial; between two copies of one version the index
// keeps the one it has.
func (a loc) newer(b loc) bool { return a.serial > b.serial }

var hashSeed = maphash.MakeSeed()

// index is the DRAM index: hash shards, per-worker merge logs in front of
// them, and an optional ordered index for Scan.
type index struct {
	s      *Store
	shards []shard
	merge  []*mergeLog // per worker; nil with DirectIndex
	order  *btree.BTreeG[oitem]
	omu    sync.RWMutex
}

type shard struct {
	mu sync.RWMutex
	m  map[string]loc
	_  [40]byte // keep shards' locks on separate lines
}

type oitem struct {
	key string
	l   loc
}

func newIndex(s *Store, shards, workers int, direct, ordered bool) *index {
	x := &index{s: s, shards: make([]shard, shards)}
	for i := range x.shards {
		x.shards[i].m = make(map[string]loc)
	}
	if !direct {
		x.merge = make([]*mergeLog, workers)
		for i := range x.merge {
			x.merge[i] = &mergeLog{}
		}
	}
	if ordered {
		x.order = btree.NewBTreeGOptions(func(a, b oitem) bool { return a.key < b.key }, btree.Options{NoLocks: true})
	}
	return x
}

func (x *index) shard(key []byte) *shard {
	return &x.shards[maphash.Bytes(hashSeed, key)%uint64(len(x.shards))]
}

// lookup returns the latest committed version of key: the newest of the
// merge logs' (checked through their bloom filters) and the shard's.
func (x *index) lookup(key []byte) (loc, bool) {
	var best loc
	found := false
	for _, ml := range x.merge {
		if l, ok := ml.find(key); ok && (!found || l.newer(best)) {
			best, found = l, true
		}
	}
	sh := x.shard(key)
	sh.mu.RLock()
	l, ok := sh.m[string(key)]
	sh.mu.RUnlock()
	if ok && (!found || l.newer(best)) {
		best, found = l, true
	}
	return best, found
}

// latestSerial is the serial of key's latest version, 0 when unknown.
func (x *index) latestSerial(key []byte) uint64 {
	l, ok := x.lookup(key)
	if !ok {
		return 0
	}
	return l.serial
}

// apply installs l for key unless the index holds a newer version; the
// live bytes of the segments follow.
func (x *index) apply(key string, l loc) {
	sh := x.shard([]byte(key))
	sh.mu.Lock()
	cur, ok := sh.m[key]
	if ok && cur == l {
		sh.mu.Unlock()
		return
	}
	if ok && !l.newer(cur) {
		sh.mu.Unlock()
		x.s.dead(l)
		return
	}
	sh.m[key] = l
	sh.mu.Unlock()
	if ok {
		x.s.dead(cur)
	}
	x.ordered(key, l)
}

// swap replaces old with l for key only if old is still the indexed
// version (GC's move); it reports whether it did.
func (x *index) swap(key string, old, l loc) bool {
	sh := x.shard([]byte(key))
	sh.mu.Lock()
	cur, ok := sh.m[key]
	if !ok || cur != old {
		sh.mu.Unlock()
		return false
	}
	sh.m[key] = l
	sh.mu.Unlock()
	x.ordered(key, l)
	return true
}

// drop removes key if old is still its indexed version (GC dropping a
// tombstone nobody needs).
func (x *index) drop(key string, old loc) bool {
	sh := x.shard([]byte(key))
	sh.mu.Lock()
	cur, ok := sh.m[key]
	if !ok || cur != old {
		sh.mu.Unlock()
		return false
	}
	delete(sh.m, key)
	sh.mu.Unlock()
	if x.order != nil {
		x.omu.Lock()
		if it, ok := x.order.Get(oitem{key: key}); ok && it.l == old {
			x.order.Delete(oitem{key: key})
		}
		x.omu.Unlock()
	}
	return true
}

func (x *index) ordered(key string, l loc) {
	if x.order == nil {
		return
	}
	x.omu.Lock()
	if cur, ok := x.order.Get(oitem{key: key}); !ok || l.newer(cur.l) || cur.l.serial == l.serial {
		x.order.Set(oitem{key: key, l: l})
	}
	x.omu.Unlock()
}

// publish makes a worker's committed batch visible: through its merge log,
// or straight into the shards with DirectIndex.
func (x *index) publish(w int, recs []mrec) {
	if x.merge == nil {
		for i := range recs {
			x.apply(recs[i].key, recs[i].l)
		}
		return
	}
	// Wake the merger when the log gets long, or when it was empty (the
	// merger then bounds how long an update waits: mergeDelay); not after
	// every batch, which would cost a goroutine wake-up per batch.
	if n := x.merge[w].add(recs); n >= mergeKick || n == len(recs) {
		x.s.kickMerger()
	}
}

// pending is the number of updates waiting in merge logs.
func (x *index) pending() int {
	n := 0
	for _, ml := range x.merge {
		n += ml.len()
	}
	return n
}

// each calls fn for every shard entry (merge logs must be drained first).
func (x *index) each(fn func(key string, l loc)) {
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		for k, l := range sh.m {
			fn(k, l)
		}
		sh.mu.RUnlock()
	}
}

// scan walks the ordered index over [from, to) in chunks of scanChunk
// entries: each chunk is copied under the lock and handed to fn after it
// is released (fn reads values through the workers, which take the lock
// to update the tree), so a scan costs what it returns, not the rest of
// the tree.
func (x *index) scan(from, to []byte, fn func(key string, l loc) bool) {
	const scanChunk = 64
	next := string(from)
	items := make([]oitem, 0, scanChunk)
	for {
		items = items[:0]
		x.omu.RLock()
		x.order.Ascend(oitem{key: next}, func(it oitem) bool {
			if to != nil && it.key >= string(to) {
				return false
			}
			items = append(items, it)
			return len(items) < scanChunk
		})
		x.omu.RUnlock()
		for _, it := range items {
			if !fn(it.key, it.l) {
				return
			}
		}
		if len(items) < scanChunk {
			return
		}
		next = items[len(items)-1].key + "\x00" // the smallest key after it
	}
}

// mrec is one index update in a merge log.
type mrec struct {
	key string
	l   loc
}

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

type mchunk struct {
	recs   []mrec
	filter *bloom.BloomFilter
}

func newChunk() *mchunk {
	return &mchunk{recs: make([]mrec, 0, chunkCap), filter: bloom.NewWithEstimates(chunkCap, 0.01)}
}

// Merger wake-ups: at this many pending updates in one merge log, and
// at most mergeDelay after the first.
const (
	mergeKick  = chunkCap / 2
	mergeDelay = time.Millisecond
)

// add appends a batch's updates and returns the log's length.
func (m *mergeLog) add(recs []mrec) int {
	m.mu.Lock()
	for i := range recs {
		var c *mchunk
		if k := len(m.chunks); k > 0 && len(m.chunks[k-1].recs) < chunkCap {
			c = m.chunks[k-1]
		} else {
			c = newChunk()
			m.chunks = append(m.chunks, c)
		}
		c.recs = append(c.recs, recs[i])
		c.filter.AddString(recs[i].key)
	}
	m.n += len(recs)
	n := m.n
	m.mu.Unlock()
	return n
}

func (m *mergeLog) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.n
}

func (m *mergeLog) find(key []byte) (loc, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var best loc
	found := false
	for _, c := range m.chunks {
		if !c.filter.Test(key) {
			continue
		}
		for i := len(c.recs) - 1; i >= 0; i-- {
			if c.recs[i].key == string(key) && (!found || c.recs[i].l.newer(best)) {
				best, found = c.recs[i].l, true
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
			x.apply(c.recs[i].key, c.recs[i].l)
		}
		n += len(c.recs)
	}
	m.mu.Lock()
	m.chunks = m.chunks[len(chunks):]
	m.n -= n
	m.mu.Unlock()
	return n
}

// count is the number of shard entries.
func (x *index) count() int {
	n := 0
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}
