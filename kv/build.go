package kv

import (
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
)

// parts is what one replayed metadata log (or one range of a checkpoint)
// holds for the index, split by index shard: entries in slot form, and
// the tails of keys longer than inlineKey in one byte buffer per shard
// (a slot's arena reference is then an offset into it). Nothing in it is
// a Go pointer per key, so a recovery of millions of keys gives the
// garbage collector nothing to do, and the shards are built in parallel
// from it, each sized once.
type parts struct {
	slots [][]slot
	tails [][]byte
}

func newParts(shards int) *parts {
	return &parts{slots: make([][]slot, shards), tails: make([][]byte, shards)}
}

// add files key's version l under its shard.
func (p *parts) add(x *index, key []byte, l loc) {
	h := keyHash(key)
	i := x.shardOf(h)
	e := slot{h: tag(h), klen: uint16(len(key))}
	e.setLoc(l)
	if len(key) <= inlineKey {
		copy(e.key[:], key)
	} else {
		copy(e.key[:keyPrefix], key)
		binary.LittleEndian.PutUint64(e.key[keyPrefix:], uint64(len(p.tails[i])))
		p.tails[i] = append(p.tails[i], key[keyPrefix:]...)
	}
	p.slots[i] = append(p.slots[i], e)
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
			var buf []byte
			for i := p; i < ns; i += par {
				t := &x.shards[i].t
				n := 0
				for _, src := range srcs {
					n += len(src.slots[i])
				}
				t.reserve(n)
				for _, src := range srcs {
					for k := range src.slots[i] {
						e := &src.slots[i][k]
						key := src.key(i, e, buf)
						if len(key) > inlineKey {
							buf = key
						}
						if j := t.find(e.h, key); j < 0 {
							t.insert(e.h, key, e.loc())
						} else if e.serial > t.slots[j].serial {
							t.set(j, e.loc())
						}
					}
					src.slots[i], src.tails[i] = nil, nil
				}
				t.shrink()
				a.account(t, x.order != nil, buf)
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

// buildAcc is what one build goroutine found in its shards.
type buildAcc struct {
	live  [][]int64  // per device, per segment: live bytes
	maxS  [][]uint64 // newest serial
	keys  int64      // live keys (tombstones not counted)
	order []string   // the keys, with an ordered index
}

// account adds table t's entries to the segments' live bytes and newest
// serials, the live key count and, with an ordered index, the keys.
func (a *buildAcc) account(t *table, ordered bool, buf []byte) {
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
			a.order = append(a.order, string(t.keyOf(j, buf)))
		}
	}
}

// setupWorkers makes the workers and gives each the logs it continues:
// the metadata chain it owns and the data segment of its last marker.
// Every other data segment is sealed.
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
		for _, g := range d.segs {
			if g.kind != kindFree && !cont[g] {
				g.sealed = true
				g.tail.Store(int64(g.size))
			}
		}
	}
}
