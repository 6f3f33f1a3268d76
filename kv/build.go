package kv

import (
	"hash/maphash"
	"runtime"
	"sync"
)

// build fills the index from the checkpoint's entries and the replayed
// records, highest serial per key, one goroutine per group of shards.
func (s *Store) build(ck *checkpoint, chains []*chain) {
	x := s.idx
	ns := len(x.shards)
	par := min(runtime.GOMAXPROCS(0), ns)
	// Size the shards for what comes, so that they are not grown (and
	// rehashed) entry by entry.
	total := 0
	if ck != nil {
		total += len(ck.recs)
	}
	for _, ch := range chains {
		total += len(ch.recs)
	}
	for i := range x.shards {
		x.shards[i].m = make(map[string]loc, total/ns+total/ns/8+8)
	}
	var wg sync.WaitGroup
	for p := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			put := func(k string, l loc) {
				i := int(maphash.String(hashSeed, k) % uint64(ns))
				if i%par != p {
					return
				}
				m := x.shards[i].m
				if cur, ok := m[k]; !ok || l.newer(cur) {
					m[k] = l
				}
			}
			if ck != nil {
				for _, r := range ck.recs {
					// An entry whose segment was cleaned since is stale: GC
					// re-appended it after the checkpoint, the replay has it.
					if s.dataSeg(int(r.l.dev), int(r.l.seg), r.l.epoch) != nil {
						put(r.key, r.l)
					}
				}
			}
			for _, ch := range chains {
				for _, r := range ch.recs {
					put(r.key, r.l)
				}
			}
		}()
	}
	wg.Wait()
	var keys int64
	x.each(func(k string, l loc) {
		g := s.devs[l.dev].segs[l.seg]
		g.live.Add(l.size())
		g.maxSerial.Store(max(g.maxSerial.Load(), l.serial))
		if !l.tomb() {
			keys++
		}
		x.ordered(k, l)
	})
	s.rep.Keys = keys
	for _, ch := range chains {
		ch.recs = nil
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
