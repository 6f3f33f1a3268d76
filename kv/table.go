package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/internal/invariants"
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
//
// A table grows incrementally: past maxLoad it allocates an array twice
// the size and keeps the old one; each later insert, set or remove then
// moves at least moveStep old slots (see move) until the old array is
// empty and freed. Meanwhile a lookup probes the new array,
// then the old one: an entry lives in exactly one of them. No put pays
// for a whole shard's copy (resize remains for reserve and shrink, which
// are Open's and recovery's).
type table struct {
	slots []slot
	view  atomic.Pointer[[]slot] // slots, for prefetch without the lock
	mem   *slotMem               // owns slots when they are mapped (slots_linux.go)
	node  int                    // with bind, the NUMA node its mapped slots are bound to (numa.go)
	bind  bool
	// During growth: the array being emptied (its non-empty slots are the
	// entries not yet moved), the slot the move continues at, and how
	// many old slots remain to examine.
	old      []slot
	oldMem   *slotMem
	moveAt   int
	moveLeft int
	touchAt  int   // the next slot of the new array's lower half whose page touch writes to
	step     int   // slots moved per operation; 0: moveStep (tests set it)
	n        int   // entries
	tombs    int   // entries that are tombstones
	ttls     int   // entries with a deadline (expire.go)
	keyB     int64 // bytes of the entries' keys
	arena    arena
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
	s := t.at(i)
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

// A slot number names a slot of the current array (0 to len(slots)-1)
// or, during growth, of the old one (len(slots) + its index there).

// at returns slot i.
func (t *table) at(i int) *slot {
	if i < len(t.slots) {
		return &t.slots[i]
	}
	return &t.old[i-len(t.slots)]
}

// valid reports whether i names a slot (of either array).
func (t *table) valid(i int) bool { return i >= 0 && i < len(t.slots)+len(t.old) }

// find returns the slot of key, or -1.
func (t *table) find(h uint32, key []byte) int {
	if i := t.probe(t.slots, h, key); i >= 0 {
		return i
	}
	if i := t.probe(t.old, h, key); i >= 0 {
		return len(t.slots) + i
	}
	return -1
}

// probe returns the index of key in array a, or -1.
func (t *table) probe(a []slot, h uint32, key []byte) int {
	if len(a) == 0 {
		return -1
	}
	mask := len(a) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &a[i]
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
	if t.old != nil {
		t.move(t.moveBudget())
	}
	if (t.n+1)*4 > len(t.slots)*maxLoad {
		t.grow()
	}
	i := place(t.slots, h)
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

// place returns the empty slot of array a where tag h goes.
func place(a []slot, h uint32) int {
	mask := len(a) - 1
	i := int(h) & mask
	for a[i].h != 0 {
		i = (i + 1) & mask
	}
	return i
}

// set replaces slot i's version with l.
func (t *table) set(i int, l loc) {
	s := t.at(i)
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
	if t.old != nil {
		t.move(t.moveBudget())
	}
}

// remove deletes slot i, shifting back the entries of its probe run.
func (t *table) remove(i int) {
	s := t.at(i)
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
	if i < len(t.slots) {
		shiftBack(t.slots, i)
	} else {
		shiftBack(t.old, i-len(t.slots))
	}
	if t.old != nil {
		t.move(t.moveBudget())
	}
	if t.arena.garbage > arenaChunk && t.arena.garbage > t.arena.used {
		t.compact()
	}
}

// shiftBack empties slot i of array a, shifting back the entries of its
// probe run (backward-shift deletion).
func shiftBack(a []slot, i int) {
	mask := len(a) - 1
	for j := (i + 1) & mask; a[j].h != 0; j = (j + 1) & mask {
		// The entry at j may move to the hole at i when its home is not
		// in the cyclic range (i, j].
		home := int(a[j].h) & mask
		if (j-home)&mask >= (j-i)&mask {
			a[i] = a[j]
			i = j
		}
	}
	a[i] = slot{}
}

// moveStep is how many old slots an insert, set or remove moves on
// during growth (at least; a probe run is moved whole). Growth starts at
// maxLoad/4 of the old array and the new one holds twice as many: the
// move ends long before the new array needs to grow.
const moveStep = 16

func (t *table) moveBudget() int {
	if t.step > 0 {
		return t.step
	}
	return moveStep
}

// grow starts moving the entries into an array twice the size (after
// finishing a move still under way).
func (t *table) grow() {
	t.settle()
	if len(t.slots) == 0 || t.n == 0 {
		t.resize(max(minSlots, 2*len(t.slots)))
		return
	}
	t.old, t.oldMem = t.slots, t.mem
	t.slots, t.mem = allocSlots(2*len(t.old), t.bind, t.node)
	v := t.slots
	t.view.Store(&v)
	t.moveAt, t.moveLeft, t.touchAt = 0, len(t.old), 0
	t.touch()
}

// move moves old entries into the current array until it has examined
// at least budget old slots, or all of them; it frees the old array when
// it is empty. It moves from moveAt to the next empty slot at once: an
// entry after a cleared slot in its probe run would no longer be found,
// one before it never probes through it.
func (t *table) move(budget int) {
	t.touch()
	old := t.old
	mask := len(old) - 1
	for t.moveLeft > 0 && budget > 0 {
		i := t.moveAt
		if old[i].h == 0 {
			t.moveAt = (i + 1) & mask
			t.moveLeft--
			budget--
			continue
		}
		j := i
		for ; old[j].h != 0; j = (j + 1) & mask {
			t.slots[place(t.slots, old[j].h)] = old[j]
		}
		for ; i != j; i = (i + 1) & mask {
			old[i] = slot{}
			t.moveLeft--
			budget--
		}
		t.moveAt = j
	}
	if t.moveLeft == 0 {
		t.old = nil
		t.oldMem.freeZeroed() // (the move cleared every slot)
		t.oldMem = nil
		if invariants.Enabled {
			t.check()
		}
	}
}

// check panics unless every entry is found from its home slot and the
// counters agree with the entries (the invariants build runs it after
// each growth).
func (t *table) check() {
	n, tombs, ttls, keyB := 0, 0, 0, int64(0)
	var buf []byte
	for i := range t.slotCount() {
		s := t.at(i)
		if s.h == 0 {
			continue
		}
		k := t.keyOf(i, buf)
		if len(k) > inlineKey {
			buf = k
		}
		if at := t.find(s.h, k); at != i {
			panic(fmt.Sprintf("kv: index entry %q in slot %d of %d is found at %d", k, i, t.slotCount(), at))
		}
		n++
		keyB += int64(len(k))
		if s.vlen&tombBit != 0 {
			tombs++
		}
		if s.vlen&ttlBit != 0 {
			ttls++
		}
	}
	if n != t.n || tombs != t.tombs || ttls != t.ttls || keyB != t.keyB {
		panic(fmt.Sprintf("kv: index table holds %d entries (%d tombstones, %d with deadlines, %d key bytes), its counters say %d (%d, %d, %d)",
			n, tombs, ttls, keyB, t.n, t.tombs, t.ttls, t.keyB))
	}
}

// touch writes to the next touchPages pages of each half of the new
// array (an old slot j's entry moves near slot j or j+len(old)), ahead of
// the move. A fresh array's page first read is mapped to the zero page
// and its first write then replaces it: a page-table change that
// interrupts every other thread of the process (a TLB shootdown, costly
// in a virtual machine); a page first written is mapped once. (An atomic
// add of 0 writes and changes nothing: the slot may hold an entry.)
func (t *table) touch() {
	half := len(t.old)
	for range touchPages {
		if t.touchAt >= half {
			return
		}
		atomic.AddUint32(&t.slots[t.touchAt].h, 0)
		atomic.AddUint32(&t.slots[t.touchAt+half].h, 0)
		t.touchAt += slotsPerPage
	}
}

const (
	touchPages   = 4
	slotsPerPage = 4096 / int(unsafe.Sizeof(slot{}))
)

// settle finishes a move under way.
func (t *table) settle() {
	if t.old != nil {
		t.move(t.moveLeft)
	}
}

// resize rehashes every entry into n slots (a power of two) at once.
func (t *table) resize(n int) {
	t.settle()
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
	t.settle()
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
	t.settle()
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
	for _, arr := range [2][]slot{t.slots, t.old} {
		for i := range arr {
			s := &arr[i]
			if s.h != 0 && int(s.klen) > inlineKey {
				binary.LittleEndian.PutUint64(s.key[keyPrefix:], a.add(t.tail(s)))
			}
		}
	}
	t.arena = a
}

// slotCount is the number of slot numbers (of both arrays during growth).
func (t *table) slotCount() int { return len(t.slots) + len(t.old) }

// bytes is the DRAM the table holds.
func (t *table) bytes() int64 {
	n := int64(t.slotCount()) * int64(unsafe.Sizeof(slot{}))
	for _, c := range t.arena.chunks {
		n += int64(cap(c))
	}
	return n
}
