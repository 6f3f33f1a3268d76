package kv

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// The hash shards are flat open-addressing tables: a power-of-two array
// of 64-byte slots (one cache line each), linear probing, backward-shift
// deletion (no tombstone slots). A slot holds the index entry and, for a
// key of up to inlineKey bytes, the key itself, so that a lookup touches
// one line; a longer key keeps its first keyPrefix bytes in the slot and
// the rest of it in the table's key arena (big byte chunks). Nothing in a
// table is a Go pointer but the arena's chunks: the garbage collector has
// a few slices to look at per shard instead of a string per key.

const (
	inlineKey = 24 // keys up to this long live in their slot
	keyPrefix = 16 // a longer key: its first bytes in the slot, then its arena reference
	maxLoad   = 3  // a table grows past maxLoad/4 full
	minSlots  = 16
)

// slot is one index entry: the key's hash tag (0: an empty slot), the
// fields of its loc, and its key (or its prefix and arena reference).
type slot struct {
	h      uint32
	klen   uint16
	dev    uint16
	serial uint64
	epoch  uint64
	seg    uint32
	off    uint32
	vlen   uint32
	crc    uint32
	key    [inlineKey]byte
}

var _ [64 - unsafe.Sizeof(slot{})]byte // a slot is one cache line

func (s *slot) loc() loc {
	return loc{serial: s.serial, epoch: s.epoch, seg: s.seg, off: s.off, vlen: s.vlen, crc: s.crc, dev: s.dev, klen: s.klen}
}

func (s *slot) setLoc(l loc) {
	s.serial, s.epoch, s.seg, s.off, s.vlen, s.crc, s.dev = l.serial, l.epoch, l.seg, l.off, l.vlen, l.crc, l.dev
}

// tag is the slot tag of a key hash: its low 32 bits, never 0.
func tag(h uint64) uint32 {
	if t := uint32(h); t != 0 {
		return t
	}
	return 1
}

// table is one shard's entries. Its methods run under the shard's lock.
type table struct {
	slots []slot
	view  atomic.Pointer[[]slot] // slots, for prefetch without the lock
	mem   *slotMem               // owns slots when they are mapped (slots_linux.go)
	node  int                    // with bind, the NUMA node its mapped slots are bound to (numa.go)
	bind  bool
	n     int   // entries
	tombs int   // entries that are tombstones
	ttls  int   // entries with a deadline (expire.go)
	keyB  int64 // bytes of the entries' keys
	arena arena
}

// arena holds the tails of keys longer than inlineKey: append-only chunks;
// a dropped key's bytes stay until the arena is compacted.
type arena struct {
	chunks  [][]byte
	used    int64 // bytes of live keys' tails
	garbage int64 // bytes of dropped keys' tails
}

const arenaChunk = 256 << 10

// add stores b and returns its reference: chunk << 32 | offset.
func (a *arena) add(b []byte) uint64 {
	k := len(a.chunks) - 1
	if k < 0 || len(a.chunks[k])+len(b) > cap(a.chunks[k]) {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, len(b))))
		k++
	}
	off := len(a.chunks[k])
	a.chunks[k] = append(a.chunks[k], b...)
	a.used += int64(len(b))
	return uint64(k)<<32 | uint64(off)
}

func (a *arena) get(ref uint64, n int) []byte {
	c := a.chunks[ref>>32]
	off := int(uint32(ref))
	return c[off : off+n : off+n]
}

// tail is the arena part of a long key (after its prefix).
func (t *table) tail(s *slot) []byte {
	return t.arena.get(binary.LittleEndian.Uint64(s.key[keyPrefix:]), int(s.klen)-keyPrefix)
}

// keyOf returns slot i's key; buf is scratch for a long key (the result
// may alias the slot: valid until the table changes).
func (t *table) keyOf(i int, buf []byte) []byte {
	s := &t.slots[i]
	if int(s.klen) <= inlineKey {
		return s.key[:s.klen]
	}
	buf = append(buf[:0], s.key[:keyPrefix]...)
	return append(buf, t.tail(s)...)
}

// matches reports whether slot s holds key (whose tag is h).
func (t *table) matches(s *slot, h uint32, key []byte) bool {
	if s.h != h || int(s.klen) != len(key) {
		return false
	}
	if len(key) <= inlineKey {
		return string(s.key[:len(key)]) == string(key)
	}
	return string(s.key[:keyPrefix]) == string(key[:keyPrefix]) && bytes.Equal(t.tail(s), key[keyPrefix:])
}

// find returns the slot of key, or -1.
func (t *table) find(h uint32, key []byte) int {
	if len(t.slots) == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.h == 0 {
			return -1
		}
		if t.matches(s, h, key) {
			return i
		}
	}
}

// insert adds key (absent) with l and returns its slot.
func (t *table) insert(h uint32, key []byte, l loc) int {
	if (t.n+1)*4 > len(t.slots)*maxLoad {
		t.resize(max(minSlots, 2*len(t.slots)))
	}
	mask := len(t.slots) - 1
	i := int(h) & mask
	for t.slots[i].h != 0 {
		i = (i + 1) & mask
	}
	s := &t.slots[i]
	s.h, s.klen = h, uint16(len(key))
	s.setLoc(l)
	if len(key) <= inlineKey {
		copy(s.key[:], key)
	} else {
		copy(s.key[:keyPrefix], key)
		binary.LittleEndian.PutUint64(s.key[keyPrefix:], t.arena.add(key[keyPrefix:]))
	}
	t.n++
	t.keyB += int64(len(key))
	if l.tomb() {
		t.tombs++
	}
	if l.ttl() {
		t.ttls++
	}
	return i
}

// set replaces slot i's version with l.
func (t *table) set(i int, l loc) {
	s := &t.slots[i]
	if s.vlen&tombBit != 0 {
		t.tombs--
	}
	if l.tomb() {
		t.tombs++
	}
	if s.vlen&ttlBit != 0 {
		t.ttls--
	}
	if l.ttl() {
		t.ttls++
	}
	s.setLoc(l)
}

// remove deletes slot i, shifting back the entries of its probe run.
func (t *table) remove(i int) {
	s := &t.slots[i]
	if s.vlen&tombBit != 0 {
		t.tombs--
	}
	if s.vlen&ttlBit != 0 {
		t.ttls--
	}
	if int(s.klen) > inlineKey {
		t.arena.used -= int64(s.klen) - keyPrefix
		t.arena.garbage += int64(s.klen) - keyPrefix
	}
	t.n--
	t.keyB -= int64(s.klen)
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].h != 0; j = (j + 1) & mask {
		// The entry at j may move to the hole at i when its home is not
		// in the cyclic range (i, j].
		home := int(t.slots[j].h) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	if t.arena.garbage > arenaChunk && t.arena.garbage > t.arena.used {
		t.compact()
	}
}

// resize rehashes every entry into n slots (a power of two).
func (t *table) resize(n int) {
	old, oldMem := t.slots, t.mem
	t.slots, t.mem = allocSlots(n, t.bind, t.node)
	v := t.slots
	t.view.Store(&v)
	defer oldMem.free()
	mask := n - 1
	const ahead = 8 // the destination slot this many old slots on is prefetched
	for k := range old {
		if k+ahead < len(old) && old[k+ahead].h != 0 {
			asm.Prefetch(unsafe.Pointer(&t.slots[int(old[k+ahead].h)&mask]))
		}
		if old[k].h == 0 {
			continue
		}
		i := int(old[k].h) & mask
		for t.slots[i].h != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = old[k]
	}
}

// prefetch starts loading the home slot of tag h into the cache: a
// worker calls it for every update of a batch when it stages the batch,
// so that the misses overlap each other and the batch's media writes
// instead of stalling one by one when the batch is published. It reads
// the slots through view (the table may be resized meanwhile: a stale
// view only prefetches a line that is no longer used).
func (t *table) prefetch(h uint32) {
	if v := t.view.Load(); v != nil {
		s := *v
		asm.Prefetch(unsafe.Pointer(&s[int(h)&(len(s)-1)]))
	}
}

// reserve sizes the table for n entries (it only grows it).
func (t *table) reserve(n int) {
	size := minSlots
	for size*maxLoad < n*4 {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

// shrink halves the table while it stays under a quarter full (recovery
// sizes tables for every replayed entry, duplicates included).
func (t *table) shrink() {
	size := len(t.slots)
	for size > minSlots && t.n*4 < size {
		size /= 2
	}
	if size < len(t.slots) {
		t.resize(size)
	}
}

// compact copies the live long keys' tails into a new arena.
func (t *table) compact() {
	var a arena
	for i := range t.slots {
		s := &t.slots[i]
		if s.h != 0 && int(s.klen) > inlineKey {
			binary.LittleEndian.PutUint64(s.key[keyPrefix:], a.add(t.tail(s)))
		}
	}
	t.arena = a
}

// bytes is the DRAM the table holds.
func (t *table) bytes() int64 {
	n := int64(len(t.slots)) * int64(unsafe.Sizeof(slot{}))
	for _, c := range t.arena.chunks {
		n += int64(cap(c))
	}
	return n
}
