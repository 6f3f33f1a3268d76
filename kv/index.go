package kv

import (
	"hash/maphash"
	"math"
	"sync"
	"unsafe"

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
func (l loc) ttl() bool     { return l.vlen&ttlBit != 0 } // the record ends with a deadline
func (l loc) valueLen() int { return int(l.vlen & vlenMask) }
func (l loc) size() int64   { return l.dataSize() + entrySize }

// dataSize is the bytes of the record in its data segment (its live bytes).
func (l loc) dataSize() int64 { return int64(recSize(int(l.klen), l.valueLen())) }

// newer reports whether a wins over b: the higher serial. A version moved
// by GC keeps its serial; between two copies of one version the index
// keeps the one it has, but a tombstone wins a tie: an expired version
// turned into a tombstone keeps its serial too (expire.go).
func (a loc) newer(b loc) bool {
	return a.serial > b.serial || a.serial == b.serial && a.vlen&tombBit > b.vlen&tombBit
}

var hashSeed = maphash.MakeSeed()

func keyHash(key []byte) uint64 { return maphash.Bytes(hashSeed, key) }

// upd is one index update: a key (with its hash) and its new version.
// The key is the caller's: the index copies it.
type upd struct {
	h   uint64
	key []byte
	l   loc
}

// index is the DRAM index: hash shards (flat tables, table.go),
// per-worker merge logs in front of them (merge.go), and an optional
// ordered index of the keys for Scan.
type index struct {
	s      *Store
	shards []shard
	merge  []*mergeLog // per worker; nil with DirectIndex
	order  *btree.BTreeG[string]
	omu    sync.RWMutex
}

type shard struct {
	mu sync.RWMutex
	t  table
	_  [(128 - (unsafe.Sizeof(sync.RWMutex{})+unsafe.Sizeof(table{}))%128) % 128]byte // keep shards' locks on separate lines (a multiple of 128 bytes)
}

func newIndex(s *Store, shards, workers int, direct, ordered bool) *index {
	x := &index{s: s, shards: make([]shard, shards)}
	for i := range x.shards {
		if s == nil {
			break // a bare index (tests)
		}
		if n := s.c.shardNode(i); n >= 0 {
			x.shards[i].t.bind, x.shards[i].t.node = true, n
		}
	}
	if !direct {
		x.merge = make([]*mergeLog, workers)
		for i := range x.merge {
			x.merge[i] = &mergeLog{}
		}
	}
	if ordered {
		x.order = btree.NewBTreeGOptions(func(a, b string) bool { return a < b }, btree.Options{NoLocks: true})
	}
	return x
}

// shardOf picks a hash's shard from its high half (the slot tag and the
// probe start are the low half).
func (x *index) shardOf(h uint64) int { return int((h >> 32) * uint64(len(x.shards)) >> 32) }

// prefetch starts loading the slot where key hash h lives (see
// table.prefetch).
func (x *index) prefetch(h uint64) { x.shards[x.shardOf(h)].t.prefetch(tag(h)) }

// lookup returns the latest committed version of key: the newest of the
// merge logs' (checked through their bloom filters) and the shard's.
func (x *index) lookup(key []byte) (loc, bool) { return x.lookupHash(keyHash(key), key) }

// lookupHash is lookup of key whose hash is h.
func (x *index) lookupHash(h uint64, key []byte) (loc, bool) {
	var best loc
	found := false
	for _, ml := range x.merge {
		if l, ok := ml.find(h, key); ok && (!found || l.newer(best)) {
			best, found = l, true
		}
	}
	sh := &x.shards[x.shardOf(h)]
	sh.mu.RLock()
	i := sh.t.find(tag(h), key)
	var l loc
	if i >= 0 {
		l = sh.t.at(i).loc()
	}
	sh.mu.RUnlock()
	if i >= 0 && (!found || l.newer(best)) {
		best, found = l, true
	}
	return best, found
}

// latest reports whether serial is key's latest version: no merge log
// holds a newer one, and the shard's entry of key (hinted by slot, where
// a put left it) or a merge log's holds exactly serial. It is the token
// path's validation: without merge logs and with a hint still right, one
// slot is read, no probe.
func (x *index) latest(key []byte, h uint64, hint uint32, serial uint64) bool {
	inMerge := false
	for _, ml := range x.merge {
		if l, ok := ml.find(h, key); ok {
			if l.serial > serial {
				return false
			}
			inMerge = inMerge || l.serial == serial
		}
	}
	sh := &x.shards[x.shardOf(h)]
	t := tag(h)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	i := int(hint)
	if !sh.t.valid(i) || !sh.t.matches(sh.t.at(i), t, key) {
		if i = sh.t.find(t, key); i < 0 {
			return inMerge // (a key GC dropped is in neither)
		}
	}
	if s := sh.t.at(i).serial; s != serial {
		return inMerge && s < serial
	}
	return true
}

// apply installs u unless the index holds a newer version; the live bytes
// of the segments follow. It returns u's slot (a token's hint).
func (x *index) apply(u *upd) uint32 {
	sh := &x.shards[x.shardOf(u.h)]
	t := tag(u.h)
	sh.mu.Lock()
	i := sh.t.find(t, u.key)
	if i < 0 {
		i = sh.t.insert(t, u.key, u.l)
		x.ordered(u.key)
		sh.mu.Unlock()
		return uint32(i)
	}
	cur := sh.t.at(i).loc()
	if cur == u.l {
		sh.mu.Unlock()
		return uint32(i)
	}
	if !u.l.newer(cur) {
		sh.mu.Unlock()
		x.s.dead(u.l)
		return uint32(i)
	}
	sh.t.set(i, u.l)
	sh.mu.Unlock()
	x.s.dead(cur)
	return uint32(i)
}

// swap replaces old with l for key only if old is still the indexed
// version (GC's move); it reports whether it did.
func (x *index) swap(key []byte, old, l loc) bool {
	h := keyHash(key)
	sh := &x.shards[x.shardOf(h)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := sh.t.find(tag(h), key)
	if i < 0 || sh.t.at(i).loc() != old {
		return false
	}
	sh.t.set(i, l)
	return true
}

// drop removes key if old is still its indexed version (GC dropping a
// tombstone nobody needs).
func (x *index) drop(key []byte, old loc) bool {
	h := keyHash(key)
	sh := &x.shards[x.shardOf(h)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := sh.t.find(tag(h), key)
	if i < 0 || sh.t.at(i).loc() != old {
		return false
	}
	sh.t.remove(i)
	if x.order != nil {
		x.omu.Lock()
		x.order.Delete(string(key))
		x.omu.Unlock()
	}
	return true
}

// ordered adds a new key to the ordered index. It runs under the key's
// shard lock, so that the B-tree holds exactly the shards' keys (a drop
// and an insert of one key cannot cross).
func (x *index) ordered(key []byte) {
	if x.order == nil {
		return
	}
	x.omu.Lock()
	x.order.Set(string(key))
	x.omu.Unlock()
}

// publish makes a worker's committed batch visible: through its merge log,
// or straight into the shards with DirectIndex. hints receives each
// update's slot (direct index only).
func (x *index) publish(w int, ups []upd, hints []uint32) {
	if x.merge == nil {
		for i := range ups {
			hints[i] = x.apply(&ups[i])
		}
		return
	}
	// Wake the merger when the log gets long, or when it was empty (the
	// merger then bounds how long an update waits: mergeDelay); not after
	// every batch, which would cost a goroutine wake-up per batch.
	if n := x.merge[w].add(ups); n >= mergeKick || n == len(ups) {
		x.s.kickMerger()
	}
}

// reserve sizes the shards for n keys in all (a key's shard is uniform
// over the shards: each is sized for its share and a margin of 4 standard
// deviations).
func (x *index) reserve(n int) {
	per := float64(n) / float64(len(x.shards))
	per += 4*math.Sqrt(per) + 1
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.Lock()
		sh.t.reserve(int(per))
		sh.mu.Unlock()
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

// each calls fn for every shard entry (merge logs must be drained first),
// under the shard's read lock: key is valid only during the call, and fn
// must not call the index.
func (x *index) each(fn func(key []byte, l loc)) {
	var buf []byte
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		t := &sh.t
		for j := range t.slotCount() {
			if s := t.at(j); s.h != 0 {
				k := t.keyOf(j, buf)
				if len(k) > inlineKey {
					buf = k
				}
				fn(k, s.loc())
			}
		}
		sh.mu.RUnlock()
	}
}

// scanChunks calls fn with the keys of [from, to) (to nil: no upper
// bound) in key order, a chunk at a time (the first of firstChunk keys,
// each next one twice as long up to scanChunk: a short scan takes few
// keys), the ordered index's lock not held while fn runs, until fn
// returns false.
func (x *index) scanChunks(from, to []byte, fn func(keys []string) bool) {
	next := string(from)
	keys := make([]string, 0, scanChunk)
	for size := firstChunk; ; size = min(2*size, scanChunk) {
		keys = keys[:0]
		x.omu.RLock()
		x.order.Ascend(next, func(k string) bool {
			if to != nil && k >= string(to) {
				return false
			}
			keys = append(keys, k)
			return len(keys) < size
		})
		x.omu.RUnlock()
		if len(keys) > 0 && !fn(keys) {
			return
		}
		if len(keys) < size {
			return
		}
		next = keys[len(keys)-1] + "\x00" // the smallest key after it
	}
}

// A scan takes keys from the ordered index firstChunk, then up to
// scanChunk at a time (with WorkerReads, a chunk's reads are sent to the
// workers together).
const (
	firstChunk = 8
	scanChunk  = 64
)

// counts returns the shard entries, the tombstones among them, their key
// bytes and the DRAM the shards hold.
func (x *index) counts() (entries, tombs int, keyB, dram int64) {
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.RLock()
		entries += sh.t.n
		tombs += sh.t.tombs
		keyB += sh.t.keyB
		dram += sh.t.bytes()
		sh.mu.RUnlock()
	}
	return
}

// count is the number of shard entries.
func (x *index) count() int {
	n, _, _, _ := x.counts()
	return n
}
