package kv

import (
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

// partition files a checkpoint's entries by shard, in GOMAXPROCS ranges
// at once (on sem, counted in wg); an entry whose segment was cleaned
// since is stale: GC re-appended it after the checkpoint, the replay has
// it.
func (s *Store) partition(recs []krec, sem chan struct{}, wg *sync.WaitGroup) []*parts {
	n := min(cap(sem), max(1, len(recs)/4096))
	out := make([]*parts, n)
	for k := range n {
		out[k] = newParts(len(s.idx.shards))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, r := range recs[k*len(recs)/n : (k+1)*len(recs)/n] {
				if s.dataSeg(int(r.l.dev), int(r.l.seg), r.l.epoch) != nil {
					out[k].add(s.idx, r.key, r.l)
				}
			}
		}()
	}
	return out
}

// build fills the index from srcs (the checkpoint's entries and the
// replayed ones), highest serial per key: one goroutine per group of
// shards, each shard sized once for what it receives. The segments' live
// bytes and newest serials, the key count and the ordered index follow.
func (s *Store) build(srcs []*parts) {
	x := s.idx
	ns := len(x.shards)
	par := min(runtime.GOMAXPROCS(0), ns)
	accs := make([]buildAcc, par)
	var wg sync.WaitGroup
	for p := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &accs[p]
			a.live = make([][]int64, len(s.devs))
			a.maxS = make([][]uint64, len(s.devs))
			for d, dev := range s.devs {
				a.live[d] = make([]int64, len(dev.segs))
				a.maxS[d] = make([]uint64, len(dev.segs))
			}
			for i := p; i < ns; i += par {
				buildShard(&x.shards[i].t, i, srcs)
				a.account(&x.shards[i].t, x.order != nil)
			}
		}()
	}
	wg.Wait()
	var order []string
	for p := range accs {
		a := &accs[p]
		s.rep.Keys += a.keys
		for d, dev := range s.devs {
			for j, g := range dev.segs {
				g.live.Add(a.live[d][j])
				g.maxSerial.Store(max(g.maxSerial.Load(), a.maxS[d][j]))
			}
		}
		order = append(order, a.order...)
	}
	if x.order != nil {
		slices.Sort(order)
		for _, k := range order {
			x.order.Load(k) // bulk load: sorted
		}
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
				} else if e.serial > t.slots[at].serial {
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
	live  [][]int64  // per device, per segment: live bytes
	maxS  [][]uint64 // newest serial
	keys  int64      // live keys (tombstones not counted)
	order []string   // the keys, with an ordered index
}

// account adds table t's entries to the segments' live bytes and newest
// serials, the live key count and, with an ordered index, the keys.
func (a *buildAcc) account(t *table, ordered bool) {
	var buf []byte
	for j := range t.slots {
		e := &t.slots[j]
		if e.h == 0 {
			continue
		}
		l := e.loc()
		a.live[l.dev][l.seg] += l.size()
		a.maxS[l.dev][l.seg] = max(a.maxS[l.dev][l.seg], l.serial)
		if !l.tomb() {
			a.keys++
		}
		if ordered {
			k := t.keyOf(j, buf)
			if len(k) > inlineKey {
				buf = k
			}
			a.order = append(a.order, string(k))
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
			w := &worker{s: s, dev: d, id: k, gid: len(s.workers), q: make(chan *request, s.c.QueueDepth)}
			for _, ch := range chains {
				if ch.dev != d.idx || ch.owner != k || ch.meta == nil {
					continue
				}
				w.m.reset(ch.meta, ch.metaEnd)
				cont[ch.meta] = true
				if ch.data != nil && ch.data.owner == k {
					w.d.reset(ch.data, ch.dataEnd)
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
