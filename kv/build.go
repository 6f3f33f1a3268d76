package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/braid-pm/braid/asm"
)

// parts is what one replayed metadata log (or one range of a checkpoint)
// holds for the index, split by index shard: entries in slot form, in
// blocks of partBlock (no copying as they grow), and the tails of keys
// longer than inlineKey in one byte buffer per shard (a slot's arena
// reference is then an offset into it). Nothing in it is a Go pointer per
// key, so a recovery of millions of keys gives the garbage collector
// nothing to do, and the shards are built in parallel from it, each sized
// once.
type parts struct {
	blocks [][][]slot
	n      []int
	tails  [][]byte
}

const partBlock = 64 // slots: 4 KiB

func newParts(shards int) *parts {
	return &parts{blocks: make([][][]slot, shards), n: make([]int, shards), tails: make([][]byte, shards)}
}

// add files key's version l under its shard.
func (p *parts) add(x *index, key []byte, l loc) {
	h := keyHash(key)
	i := x.shardOf(h)
	bs := p.blocks[i]
	if k := len(bs) - 1; k < 0 || len(bs[k]) == partBlock {
		bs = append(bs, make([]slot, 0, partBlock))
		p.blocks[i] = bs
	}
	b := &bs[len(bs)-1]
	*b = (*b)[:len(*b)+1]
	e := &(*b)[len(*b)-1]
	e.h, e.klen = tag(h), uint16(len(key))
	e.setLoc(l)
	if len(key) <= inlineKey {
		copy(e.key[:], key)
	} else {
		copy(e.key[:keyPrefix], key)
		binary.LittleEndian.PutUint64(e.key[keyPrefix:], uint64(len(p.tails[i])))
		p.tails[i] = append(p.tails[i], key[keyPrefix:]...)
	}
	p.n[i]++
}

// key returns the key of entry e of shard i (buf: scratch for a long one).
func (p *parts) key(i int, e *slot, buf []byte) []byte {
	if int(e.klen) <= inlineKey {
		return e.key[:e.klen]
	}
	off := binary.LittleEndian.Uint64(e.key[keyPrefix:])
	buf = append(buf[:0], e.key[:keyPrefix]...)
	return append(buf, p.tails[i][off:off+uint64(e.klen)-keyPrefix]...)
}

// partition files a checkpoint's entries by shard, in up to GOMAXPROCS
// ranges of its buckets at once (on sem, counted in wg); the ranges keep
// the file's order. An entry whose segment was cleaned since is stale:
// GC re-appended it after the checkpoint, the replay has it.
func (s *Store) partition(ck *ckView, sem chan struct{}, wg *sync.WaitGroup) []*parts {
	nb := 1 << ck.bits
	n := min(cap(sem), max(1, ck.count/4096), nb)
	out := make([]*parts, n)
	for k := range n {
		out[k] = newParts(len(s.idx.shards))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for p := ck.span(k*nb/n, (k+1)*nb/n); len(p) > 0; {
				key, l, rest, _ := nextCkEntry(p) // (checked whole by decodeCheckpoint)
				p = rest
				if s.ckLive(l) {
					out[k].add(s.idx, key, l)
				}
			}
		}()
	}
	return out
}

// ckLive: a checkpoint's entry l still names its record — its data
// segment has l's epoch, or lost its header to zeroing under the entry
// (its key then reads ErrCorrupt, media.go).
func (s *Store) ckLive(l loc) bool {
	return s.dataSeg(int(l.dev), int(l.seg), l.epoch) != nil || s.zeroedRef(int(l.dev), int(l.seg)) != nil
}

// build fills the index from srcs (the checkpoint's entries and the
// replayed ones), highest serial per key: one goroutine per group of
// shards, each shard sized once for what it receives. The segments' live
// bytes and newest serials, the key count and the ordered index follow.
func (s *Store) build(srcs []*parts) {
	x := s.idx
	ns := len(x.shards)
	nodes, plan := s.buildPlan(min(runtime.GOMAXPROCS(0), ns), ns)
	par := len(plan)
	accs := make([]buildAcc, par)
	var wg sync.WaitGroup
	for p := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bound, it stays locked: the runtime ends the thread
			// when the goroutine ends, so no other goroutine inherits
			// its affinity.
			s.c.bindToNode(nodes[p])
			a := &accs[p]
			a.live = make([][]int64, len(s.devs))
			a.maxS = make([][]uint64, len(s.devs))
			for d, dev := range s.devs {
				a.live[d] = make([]int64, len(dev.segs))
				a.maxS[d] = make([]uint64, len(dev.segs))
			}
			for _, i := range plan[p] {
				buildShard(&x.shards[i].t, i, srcs)
				a.account(&x.shards[i].t, i, x.order != nil)
			}
			if x.order != nil {
				a.keyList = x.sortedKeys(a.order)
				a.order = nil
			}
		}()
	}
	wg.Wait()
	lists := make([][]string, 0, par)
	for p := range accs {
		a := &accs[p]
		s.rep.Keys += a.keys
		for d, dev := range s.devs {
			for j, g := range dev.segs {
				g.live.Add(a.live[d][j])
				g.maxSerial.Store(max(g.maxSerial.Load(), a.maxS[d][j]))
			}
		}
		lists = append(lists, a.keyList)
	}
	if x.order != nil {
		x.loadOrder(lists)
	}
}

// okey is a key of the ordered index while it is rebuilt: its first 24
// bytes as three big-endian words (zero-padded), its length (which breaks
// a tie of two padded prefixes: the shorter key first) and where it is
// (shard, slot). The sort compares integers held in the records instead
// of chasing a pointer per comparison to a string somewhere on the heap,
// and an inline key's string is made from its record, without touching
// the table again.
type okey struct {
	w           [3]uint64
	klen        uint32
	shard, slot uint32
}

// okeyOf makes key's okey.
func okeyOf(key []byte, shard, slot int) okey {
	var p [24]byte
	copy(p[:], key)
	be := binary.BigEndian
	return okey{w: [3]uint64{be.Uint64(p[:8]), be.Uint64(p[8:16]), be.Uint64(p[16:])}, klen: uint32(len(key)), shard: uint32(shard), slot: uint32(slot)}
}

// cmpOkeys orders two okeys by key; two keys longer than the prefix that
// share it compare in full, from their slots.
func (x *index) cmpOkeys(a, b *okey, buf *[2][]byte) int {
	for i := range a.w {
		if c := cmp.Compare(a.w[i], b.w[i]); c != 0 {
			return c
		}
	}
	if a.klen <= inlineKey || b.klen <= inlineKey {
		return cmp.Compare(a.klen, b.klen)
	}
	ka := x.shards[a.shard].t.keyOf(int(a.slot), buf[0])
	buf[0] = ka
	kb := x.shards[b.shard].t.keyOf(int(b.slot), buf[1])
	buf[1] = kb
	return bytes.Compare(ka, kb)
}

// keyString returns o's key as a string.
func (x *index) keyString(o *okey) string {
	if o.klen > inlineKey {
		return string(x.shards[o.shard].t.keyOf(int(o.slot), nil))
	}
	var p [24]byte
	be := binary.BigEndian
	be.PutUint64(p[:8], o.w[0])
	be.PutUint64(p[8:16], o.w[1])
	be.PutUint64(p[16:], o.w[2])
	return string(p[:o.klen])
}

// sortedKeys sorts one build goroutine's okeys and returns their strings
// in key order (each allocated after the one before it, so that
// neighbours in key order are neighbours in memory).
func (x *index) sortedKeys(ks []okey) []string {
	var buf [2][]byte
	x.radixOkeys(ks, make([]okey, len(ks)), 0, &buf)
	out := make([]string, len(ks))
	for i := range ks {
		out[i] = x.keyString(&ks[i])
	}
	return out
}

// okeyByte is byte d (0..23) of o's key prefix.
func okeyByte(o *okey, d int) byte { return byte(o.w[d>>3] >> (56 - 8*(d&7))) }

// radixOkeys sorts a by key: most significant byte first from byte d of
// the prefix (a byte all keys share costs one counting pass and no
// moves), small ranges and what the prefix leaves tied by comparison;
// tmp is scratch of a's length.
func (x *index) radixOkeys(a, tmp []okey, d int, buf *[2][]byte) {
	for {
		if len(a) <= 48 || d == 3*8 {
			slices.SortFunc(a, func(u, v okey) int { return x.cmpOkeys(&u, &v, buf) })
			return
		}
		var count [256]int
		for i := range a {
			count[okeyByte(&a[i], d)]++
		}
		if count[okeyByte(&a[0], d)] == len(a) {
			d++ // every key has this byte
			continue
		}
		var at [256]int
		sum := 0
		for b, c := range count {
			at[b] = sum
			sum += c
		}
		for i := range a {
			b := okeyByte(&a[i], d)
			tmp[at[b]] = a[i]
			at[b]++
		}
		copy(a, tmp)
		lo := 0
		for _, c := range count {
			if c > 1 {
				x.radixOkeys(a[lo:lo+c], tmp[lo:lo+c], d+1, buf)
			}
			lo += c
		}
		return
	}
}

// loadOrder fills the ordered index from lists of keys, each sorted,
// merged: the B-tree's bulk load, which compares each key with the one
// before, then reads memory in order.
func (x *index) loadOrder(lists [][]string) {
	for {
		best := -1
		for i := range lists {
			if len(lists[i]) > 0 && (best < 0 || lists[i][0] < lists[best][0]) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		x.order.Load(lists[best][0]) // bulk load: sorted
		lists[best] = lists[best][1:]
	}
}

// buildShard fills table t (shard i) from srcs, highest serial per key.
// The table is sized first, so an entry's home slot is known before its
// turn: the slot buildAhead entries ahead is prefetched, and the misses
// of a table far larger than the caches overlap instead of stalling one
// by one.
func buildShard(t *table, i int, srcs []*parts) {
	const buildAhead = 8
	n := 0
	for _, src := range srcs {
		n += src.n[i]
	}
	t.reserve(n)
	mask := len(t.slots) - 1
	var buf []byte
	for _, src := range srcs {
		for _, b := range src.blocks[i] {
			for j := range b {
				if j+buildAhead < len(b) { // (a block's first entries go unprefetched)
					asm.Prefetch(unsafe.Pointer(&t.slots[int(b[j+buildAhead].h)&mask]))
				}
				e := &b[j]
				key := src.key(i, e, buf)
				if len(key) > inlineKey {
					buf = key
				}
				if at := t.find(e.h, key); at < 0 {
					t.insert(e.h, key, e.loc())
				} else if cur := t.at(at); e.serial > cur.serial || e.serial == cur.serial && e.vlen&tombBit > cur.vlen&tombBit { // loc.newer
					t.set(at, e.loc())
				}
			}
		}
		src.blocks[i], src.tails[i] = nil, nil
	}
	t.shrink()
}

// buildAcc is what one build goroutine found in its shards.
type buildAcc struct {
	live    [][]int64  // per device, per segment: live bytes
	maxS    [][]uint64 // newest serial
	keys    int64      // live keys (tombstones not counted)
	order   []okey     // the keys, with an ordered index
	keyList []string   // ... sorted
}

// account adds table t's (shard sh's) entries to the segments' live bytes
// and newest serials, the live key count and, with an ordered index, the
// keys.
func (a *buildAcc) account(t *table, sh int, ordered bool) {
	var buf []byte
	if ordered {
		a.order = slices.Grow(a.order, t.n)
	}
	for j := range t.slots {
		e := &t.slots[j]
		if e.h == 0 {
			continue
		}
		l := e.loc()
		a.live[l.dev][l.seg] += l.dataSize()
		a.maxS[l.dev][l.seg] = max(a.maxS[l.dev][l.seg], l.serial)
		if !l.tomb() {
			a.keys++
		}
		if ordered {
			k := t.keyOf(j, buf)
			if len(k) > inlineKey {
				buf = k
			}
			a.order = append(a.order, okeyOf(k, sh, j))
		}
	}
}

// setupWorkers makes the workers and gives each the logs it continues:
// the metadata chain it owns and the data segment of its last marker.
// Every other data segment is sealed. The logs of workers this store does
// not run (it was created with more WorkersPerDevice) stay as they are,
// their ends kept in s.orphans; they continue if it runs more again.
func (s *Store) setupWorkers(chains []*chain) {
	W := s.c.workers
	cont := map[*segment]bool{}
	for _, d := range s.devs {
		for k := range W {
			w := &worker{s: s, dev: d, id: k, gid: len(s.workers), q: make(chan *request, s.c.QueueDepth), fenceAt: maxUnfencedMeta}
			if s.broken.unfencedMax > 0 {
				w.fenceAt = s.broken.unfencedMax
			}
			for _, ch := range chains {
				if ch.dev != d.idx || ch.owner != k || ch.meta == nil {
					continue
				}
				w.m.reset(ch.meta, fullIfPoisoned(ch.meta, ch.metaEnd))
				cont[ch.meta] = true
				if ch.data != nil && ch.data.owner == k {
					w.d.reset(ch.data, fullIfPoisoned(ch.data, ch.dataEnd))
					cont[ch.data] = true
				}
			}
			s.workers = append(s.workers, w)
		}
		for _, ch := range chains {
			if ch.dev == d.idx && ch.owner >= W && ch.meta != nil {
				p := chainPos{dev: ch.dev, owner: ch.owner, metaSeg: ch.meta.idx, metaEpoch: ch.meta.epoch.Load(), off: ch.metaEnd}
				if ch.data != nil {
					p.dataSeg, p.dataEpoch, p.dataOff = ch.data.idx, ch.data.epoch.Load(), ch.dataEnd
				}
				s.orphans = append(s.orphans, p)
			}
		}
		for _, g := range d.segs {
			if g.kind != kindFree && !cont[g] {
				g.sealed = true
				g.tail.Store(int64(g.size))
			}
		}
	}
}
