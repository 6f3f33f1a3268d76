package kv

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/braid-pm/braid/internal/pmheader"
)

// Free segments kept back on each device: a put needs more than
// reservePut free, a delete more than reserveDel, so that deletes and the
// cleaner's moves still find room when puts get ErrFull.
const (
	reservePut = 2
	reserveDel = 1
)

// GC runs one cleaning pass now: it picks sealed data segments by
// cost-benefit score, moves their live entries, and frees them once no
// reader can use them; metadata segments that no retained checkpoint
// needs are freed too.
func (s *Store) GC() (GCReport, error) {
	if s.closed.Load() {
		return GCReport{}, ErrClosed
	}
	if err := s.writable(); err != nil {
		return GCReport{}, err
	}
	return s.gc(true)
}

type victim struct {
	g     *segment
	score float64
	live  []krec
}

// gc is one pass; all cleans every segment with garbage that fits, else
// only those whose score makes them worth it.
func (s *Store) gc(all bool) (rep GCReport, err error) {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	t0 := time.Now()
	pass := s.passBegin()
	defer func() {
		rep.Elapsed = time.Since(t0)
		s.stats.gcPasses.Add(1)
		s.passEnd(pass, all, rep.SegmentsFreed, err)
	}()
	vs, err := s.pick(all, &rep)
	if err != nil {
		return rep, err
	}
	if s.needCheckpoints(vs) {
		// Tombstones and metadata segments are freed only behind the
		// oldest retained checkpoint: bring both checkpoints forward.
		for range keepCheckpoints {
			if err := s.Checkpoint(); err != nil {
				return rep, err
			}
		}
		rep.Candidates = 0
		if vs, err = s.pick(all, &rep); err != nil {
			return rep, err
		}
	}
	s.growForMoves(vs) // (grow.go)
	if err := s.enter(); err != nil {
		return rep, err
	}
	defer s.ops.RUnlock()
	floor := s.floor()
	for i, v := range vs {
		if err := s.clean(v, floor, &rep); err != nil {
			return rep, err
		}
		s.progress("gc", "segments", int64(i+1), int64(len(vs)))
	}
	n, err := s.freeMeta()
	rep.SegmentsFreed += n
	return rep, err
}

// pick chooses the victims of a pass.
func (s *Store) pick(all bool, rep *GCReport) ([]*victim, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.ops.RUnlock()
	if testBeforeVictims != nil {
		testBeforeVictims(s)
	}
	return s.victims(all, rep), nil
}

// testBeforeVictims, when set (tests), runs in a GC pass before it picks
// its victims.
var testBeforeVictims func(s *Store)

// needCheckpoints: a victim holds a tombstone, or a sealed metadata
// segment exists, that the oldest retained checkpoint does not cover.
func (s *Store) needCheckpoints(vs []*victim) bool {
	floor := s.floor()
	for _, v := range vs {
		for _, r := range v.live {
			if r.l.tomb() && r.l.serial >= floor {
				return true
			}
		}
	}
	for _, d := range s.devs {
		for _, g := range d.list() {
			if g.sealedMeta() && !s.metaFreeable(g) {
				return true
			}
		}
	}
	return false
}

// floor is the oldest retained checkpoint's floor: a tombstone below it
// is in both checkpoints' view, and no version it deletes is replayed.
func (s *Store) floor() uint64 {
	oldest, n := s.oldestCheckpoint()
	if n < keepCheckpoints {
		return 0
	}
	return oldest.floor
}

// oldestCheckpoint returns the oldest retained checkpoint and how many
// are retained, under ckMu: the checkpointer appends to s.ckpts while a
// GC pass reads it.
func (s *Store) oldestCheckpoint() (ckptInfo, int) {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	if len(s.ckpts) == 0 {
		return ckptInfo{}, 0
	}
	return s.ckpts[0], len(s.ckpts)
}

// victims scores the sealed data segments (cost-benefit: (1-u)·age/(1+u),
// u the live fraction, age in serials since its newest entry) and picks
// those whose live entries fit in the free segments.
func (s *Store) victims(all bool, rep *GCReport) []*victim {
	now := s.serial.Load()
	var vs []*victim
	byseg := map[*segment]*victim{}
	for _, d := range s.devs {
		d.mu.Lock()
		for _, g := range d.segs {
			if g.kind != kindData || !g.sealed || g.poisoned.Load() || g.damaged.Load() {
				continue
			}
			rep.Candidates++
			body := float64(g.size - bodyOff)
			u := min(float64(g.live.Load())/body, 1)
			if u >= 1 || !all && u > 0.8 {
				continue
			}
			age := float64(now-g.maxSerial.Load()) + 1
			v := &victim{g: g, score: (1 - u) * age / (1 + u)}
			vs = append(vs, v)
			byseg[g] = v
		}
		d.mu.Unlock()
	}
	if len(vs) == 0 {
		return nil
	}
	// A worker seals a segment after it published the segment's last
	// entries, which with merge logs may still wait there: drained now,
	// after the victims were seen sealed, every entry of theirs is in the
	// shards that each reads (drained before, a segment sealed in
	// between lost its newest entries to the free).
	s.drainMerge()
	segs := make([][]*segment, len(s.devs)) // (a device may grow meanwhile: grow.go)
	for i, d := range s.devs {
		segs[i] = d.list()
	}
	s.idx.each(func(k []byte, l loc) {
		if int(l.seg) >= len(segs[l.dev]) {
			return // a segment added since: not a victim
		}
		g := segs[l.dev][l.seg]
		if v := byseg[g]; v != nil && g.epoch.Load() == l.epoch {
			v.live = append(v.live, krec{key: clone(k), l: l})
		}
	})
	slices.SortFunc(vs, func(a, b *victim) int { return cmp.Compare(b.score, a.score) })
	// Keep the victims whose live bytes fit in each device's free room.
	room := map[*device]int64{}
	for _, d := range s.devs {
		d.mu.Lock()
		free := len(d.free) + d.limit - len(d.segs) // (with the segments it may grow by: grow.go)
		d.mu.Unlock()
		room[d] = int64(free) * int64(s.c.SegmentSize-bodyOff) / 2
	}
	out := vs[:0]
	for _, v := range vs {
		var need int64
		for _, r := range v.live {
			need += r.l.size()
		}
		if need > room[v.g.dev] {
			continue
		}
		room[v.g.dev] -= need
		out = append(out, v)
	}
	return out
}

// clean moves a victim's live entries through its owner worker (same
// serial, new place, the index switched only if the entry is still the
// latest), drops tombstones below floor, then frees the victim once no
// reader holds it.
func (s *Store) clean(v *victim, floor uint64, rep *GCReport) error {
	w := s.owner(v.g)
	if s.broken.freeBeforeSwitch {
		if err := dataKind.Invalidate(v.g.r, v.g.mem[:pmheader.Size]); err != nil {
			return err
		}
	}
	var reqs []*request
	for _, r := range v.live {
		if r.l.tomb() && r.l.serial < floor {
			if s.idx.drop(r.key, r.l) {
				s.dead(r.l)
				rep.TombstonesDropped++
			}
			continue
		}
		q := s.getReq()
		q.kind, q.key, q.l = opMove, r.key, r.l
		w.send(q)
		reqs = append(reqs, q)
	}
	var err error
	for _, q := range reqs {
		w.await(q)
		if q.err != nil && err == nil {
			err = q.err
		}
		if q.moved {
			rep.Moved++
			rep.MovedBytes += q.l.size()
			s.stats.gcMoved.Add(1)
		}
		s.putReq(q)
	}
	if err != nil {
		return fmt.Errorf("kv: clean device %d segment %d: %w", v.g.dev.idx, v.g.idx, err)
	}
	if v.g.damaged.Load() || v.g.poisoned.Load() {
		rep.Quarantined++ // its damaged records stay where Get and Check find them
		return nil
	}
	rep.Cleaned++
	if err := s.free(v.g); err != nil {
		return err
	}
	rep.SegmentsFreed++
	return nil
}

// free retires g (no new reader can pin it), waits for the readers that
// pinned it before, and has its owner free it.
func (s *Store) free(g *segment) error {
	g.retired.Store(true)
	for g.readers.Load() != 0 {
		time.Sleep(20 * time.Microsecond)
	}
	q := s.getReq()
	q.kind, q.g = opFree, g
	w := s.owner(g)
	w.send(q)
	w.await(q)
	err := q.err
	s.putReq(q)
	return err
}

// metaFreeable: g lies wholly before the oldest retained checkpoint's
// position of its chain, so no recovery reads it.
func (s *Store) metaFreeable(g *segment) bool {
	oldest, n := s.oldestCheckpoint()
	if n == 0 {
		return false
	}
	for _, p := range oldest.chains {
		if p.dev == g.dev.idx && p.owner == g.owner {
			return g.epoch.Load() < p.metaEpoch
		}
	}
	return false
}

func (s *Store) freeMeta() (int, error) {
	n := 0
	for _, d := range s.devs {
		for _, g := range d.segs {
			if g.sealedMeta() && !g.poisoned.Load() && s.metaFreeable(g) {
				if err := s.markNeedsCheckpoint(); err != nil {
					return n, err
				}
				if err := s.free(g); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

// markNeedsCheckpoint makes every device's kv.id say, durably, that the
// store needs a checkpoint, before the first metadata segment a
// checkpoint covered is freed: after that the logs alone no longer hold
// every key, and an Open that found no checkpoint would lose the keys
// only the checkpoint holds without a trace.
func (s *Store) markNeedsCheckpoint() error {
	if s.needsCkpt {
		return nil
	}
	s.grow.idMu.Lock() // (the grower rewrites kv.id too: grow.go)
	defer s.grow.idMu.Unlock()
	s.needsCkpt = true
	for _, d := range s.devs {
		if err := d.dm.setID(s.idOf(d, d.idFiles)); err != nil {
			s.needsCkpt = false
			return fmt.Errorf("kv: device %s: mark kv.id (a checkpoint is needed from now on): %w", d.dm.name(), err)
		}
	}
	return nil
}

// cleaner runs a pass whenever a device's free segments fall below
// GCThreshold (it is kicked when a worker takes a segment or finds none),
// and passes back to back while writes wait for room.
func (s *Store) cleaner() {
	defer s.bg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.ckick:
		}
		// While writes wait for room (room.go), full passes back to back
		// as long as they free segments; else one pass when space is low.
		for {
			need := s.room.waiters.Load() > 0
			if !need && (s.c.GCThreshold < 0 || !s.lowOnSpace()) {
				break
			}
			rep, err := s.gc(need)
			if err != nil || rep.SegmentsFreed == 0 || !need {
				break
			}
		}
	}
}

// lowOnSpace: a device's free segments, counting those it may still
// grow by (grow.go), are below GCThreshold of its limit.
func (s *Store) lowOnSpace() bool {
	for _, d := range s.devs {
		d.mu.Lock()
		free := len(d.free) + d.limit - len(d.segs)
		d.mu.Unlock()
		if float64(free) < s.c.GCThreshold*float64(d.limit) {
			return true
		}
	}
	return false
}

// quarantine is a move's answer to a live record that fails its check
// (a damaged value or key, poison, a record of another key than the
// index's): the record is not moved and its segment is kept (damaged:
// never cleaned or freed), so that the key reads the error and Check
// reports it, and the pass goes on. A damaged record must cost its key,
// not the store: failing the pass would fail every later one, and Open's
// start-up pass with them.
func (s *Store) quarantine(l loc) error {
	if int(l.dev) < len(s.devs) && int(l.seg) < len(s.devs[l.dev].segs) {
		s.devs[l.dev].segs[l.seg].damaged.Store(true)
	}
	return nil
}
