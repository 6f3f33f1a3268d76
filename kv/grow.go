package kv

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/persist"
)

// Sized to the data. A segment file is created sparse (its size set, no
// block allocated), and a device starts with the few segments its workers
// need (MinSegments). Two kinds of growth then follow the data, both done
// ahead of need by one background goroutine (the grower), so that the
// write path keeps SKYE's pre-allocated, pre-faulted log space:
//
//   - within a segment, the blocks of each log are allocated (fallocate)
//     and faulted in (MADV_POPULATE_WRITE) in windows of growAhead bytes:
//     when a writer's log end comes within half a window of what is
//     ready, it asks the grower for the next window; only when the
//     grower fell behind does the writer extend the segment itself
//     (Stats.ExtendWaits);
//   - a device gets a new segment file when its free pool falls to its
//     workers' count, up to DeviceSize (a limit, not an allocation),
//     after a statfs check (ErrNoSpace naming the sizes, the free space
//     and DeviceSize). A write that finds no free segment while its device
//     can still grow waits for the grower as it waits for the cleaner
//     (room.go; Stats.GrowWaits).
//
// A segment file is made under a temporary name, sized, synced and then
// renamed into the sequence (the directory synced): a crash while a
// segment is added leaves either no new segment or a whole, empty one,
// and Open removes a leftover temporary file (fileDevice.grow).
//
// So a store takes its segments' used blocks plus a window per log (two
// per worker) and a page per segment header. A freed segment keeps its
// blocks for its next use as a data log; reused for metadata, its body is
// punched out (zeroBody).

// growAheadMax is the window of blocks kept allocated and faulted ahead
// of each log's end (smaller for smaller segments).
const growAheadMax = 1 << 20

// growState is the grower's: its queue of segments to extend, its kick
// (a device's pool is low), and what it counted.
type growState struct {
	ahead int
	q     chan *segment
	kick  chan struct{}

	extendWaits atomic.Uint64 // extensions a writer made itself
	growWaits   atomic.Uint64 // writes that waited for a new segment
	grown       atomic.Uint64 // segment files created since Open

	mu  sync.Mutex
	err error // why the last growth was refused (ErrNoSpace), nil after a success

	idMu  sync.Mutex // kv.id's writers: the grower, and GC's needs-checkpoint mark
	addMu sync.Mutex // segment files are added one at a time (the grower, GC)
}

// idOf is device d's identity line, saying it has had files segment files.
func (s *Store) idOf(d *device, files int) []byte {
	if !d.grows {
		files = 0
	}
	return idLine(idInfo{storeID: s.storeID, dev: d.idx, devs: len(s.devs), segSize: s.c.SegmentSize, files: files, needsCkpt: s.needsCkpt})
}

// writeID rewrites d's kv.id for files segment files (durably: before a
// segment it counts is used).
func (s *Store) writeID(d *device, files int) error {
	s.grow.idMu.Lock()
	defer s.grow.idMu.Unlock()
	if err := d.dm.setID(s.idOf(d, files)); err != nil {
		return err
	}
	d.idFiles = files
	return nil
}

// extender is a device whose segments are sparse files: extend allocates
// and faults in n bytes at off of segment g.
type extender interface {
	extend(g *segment, off, n int64) error
}

func (s *Store) initGrowth() {
	s.grow.ahead = int(min(s.c.SegmentSize, growAheadMax))
	s.grow.q = make(chan *segment, 256)
	s.grow.kick = make(chan struct{}, 1)
}

// ready makes sure the bytes of g up to end may be written: already
// allocated and faulted (the grower is asked for the next window when
// this one is half used), or extended now by the caller. Nil for a
// segment that is not sparse.
func (s *Store) ready(g *segment, end int) error {
	have := int(g.ext.Load())
	if end <= have {
		if have-end < s.grow.ahead/2 && have < g.size {
			s.wantExtend(g)
		}
		return nil
	}
	s.grow.extendWaits.Add(1)
	return s.extend(g, end)
}

// wantExtend queues g for the grower (once until it is served).
func (s *Store) wantExtend(g *segment) {
	if !g.extQueued.CompareAndSwap(false, true) {
		return
	}
	select {
	case s.grow.q <- g:
	default:
		g.extQueued.Store(false) // the queue is full: the writer extends
	}
}

// extend allocates and faults in g up to end and a window past it.
func (s *Store) extend(g *segment, end int) error {
	x, ok := g.dev.dm.(extender)
	if !ok || g.r == nil {
		return nil
	}
	g.extMu.Lock()
	defer g.extMu.Unlock()
	have := int(g.ext.Load())
	if end <= have {
		return nil
	}
	to := min(g.size, (end+4095)&^4095+s.grow.ahead)
	if err := x.extend(g, int64(have), int64(to-have)); err != nil {
		return fullErr(fmt.Sprintf("device %s: segment %d", g.dev.dm.name(), g.idx), err)
	}
	g.ext.Store(int64(to))
	return nil
}

// grower serves the extension queue and grows the devices whose pool is
// low. It runs while the store is open for writing.
func (s *Store) grower() {
	defer s.bg.Done()
	for {
		select {
		case <-s.stop:
			return
		case g := <-s.grow.q:
			g.extQueued.Store(false)
			if !g.poisoned.Load() {
				_ = s.extend(g, int(g.tail.Load())+s.grow.ahead/2) // a failure: the writer meets it itself
			}
		case <-s.grow.kick:
			for _, d := range s.devs {
				s.growDevice(d)
			}
		}
	}
}

// kickGrow asks the grower to look at the devices' pools.
func (s *Store) kickGrow() {
	select {
	case s.grow.kick <- struct{}{}:
	default:
	}
}

// lowWater is the free pool below which a device grows: every worker can
// switch a log, beyond the reserve.
func (s *Store) lowWater() int { return reservePut + s.c.workers }

// canGrow: d may still get a segment file (read under d.mu or by the
// grower).
func (d *device) canGrow() bool { return d.grows && len(d.segs) < d.limit }

// growDevice adds segment files to d while its pool is low and it is
// under its limit, and readies the first window of the pool's next
// segments.
func (s *Store) growDevice(d *device) {
	s.grow.addMu.Lock()
	defer s.grow.addMu.Unlock()
	for {
		d.mu.Lock()
		low, can := len(d.free) <= s.lowWater(), d.canGrow()
		n := len(d.segs)
		d.mu.Unlock()
		if !low || !can {
			break
		}
		if err := s.addSegment(d, n); err != nil {
			s.grow.mu.Lock()
			s.grow.err = err
			s.grow.mu.Unlock()
			s.room.signal() // a waiting write gives up with it (room.go)
			return
		}
		s.grow.mu.Lock()
		s.grow.err = nil
		s.grow.mu.Unlock()
		s.room.signal()
	}
	d.mu.Lock()
	next := make([]*segment, 0, s.c.workers)
	for _, i := range d.free[:min(len(d.free), s.c.workers)] {
		next = append(next, d.segs[i])
	}
	d.mu.Unlock()
	for _, g := range next {
		_ = s.extend(g, bodyOff+entrySize)
	}
}

// addSegment creates segment file n of d (after the statfs check) and
// puts it in the pool. The device's segment list changes only with every
// operation held off (s.ops) and under d.mu: readers index it under either.
func (s *Store) addSegment(d *device, n int) error {
	limit := int64(d.limit) * s.c.SegmentSize
	if err := checkSpace(d.dm, n, s.c.SegmentSize, limit); err != nil {
		return err
	}
	regions, err := d.dm.grow(n+1, s.c.SegmentSize)
	if err != nil {
		return err
	}
	if err := s.writeID(d, n+1); err != nil {
		return fmt.Errorf("kv: device %s: write identity: %w", d.dm.name(), err)
	}
	r := regions[n]
	g := &segment{dev: d, idx: n, r: r, mem: r.Bytes(), size: r.Size(), zeroed: true}
	s.ops.Lock()
	d.mu.Lock()
	d.segs = append(d.segs, g)
	d.free = append(d.free, n)
	d.mu.Unlock()
	s.ops.Unlock()
	s.grow.grown.Add(1)
	return nil
}

// growErr is why the last growth was refused, nil if it was not.
func (s *Store) growErr() error {
	s.grow.mu.Lock()
	defer s.grow.mu.Unlock()
	return s.grow.err
}

// primeGrowth, before the workers start, queues the windows past every
// log's end and kicks the devices' growth. It reports whether the store
// needs a grower: some device's segments are sparse files.
func (s *Store) primeGrowth() bool {
	need := false
	for _, d := range s.devs {
		_, sparse := d.dm.(extender)
		need = need || sparse || d.grows
	}
	if !need {
		return false
	}
	for _, w := range s.workers {
		for _, g := range []*segment{w.d.g, w.m.g} {
			if g != nil {
				s.wantExtend(g)
			}
		}
	}
	s.kickGrow()
	return true
}

// puncher is a device that can turn a range of a segment back into a
// hole (zeros, no blocks), durably.
type puncher interface {
	punch(g *segment, off, n int64) error
}

// zeroBody zeroes a reused metadata segment's body (its log ends at its
// first zero entry). A sparse segment's body past its first page is
// punched out, which gives its blocks back (the grower allocates them
// again as the log grows); else it is written with zeros.
func (s *Store) zeroBody(g *segment) error {
	const page = 4096
	if p, ok := g.dev.dm.(puncher); ok && g.size > page {
		if err := g.r.Set(g.mem[bodyOff:page], 0, persist.NoDrain); err != nil {
			return err
		}
		g.extMu.Lock()
		err := p.punch(g, page, int64(g.size-page))
		if err == nil {
			g.ext.Store(page)
		}
		g.extMu.Unlock()
		s.stats.mediaBytes.Add(page - bodyOff)
		if err == nil {
			return nil
		}
	}
	if err := s.ready(g, g.size); err != nil {
		return err
	}
	if err := g.r.Set(g.mem[bodyOff:], 0, persist.NoDrain); err != nil {
		return err
	}
	s.stats.mediaBytes.Add(uint64(g.size - bodyOff))
	return nil
}

// blockCounter is a device that can say how many bytes its segment files
// take (allocated blocks); without it a segment in use counts whole.
type blockCounter interface {
	blocks(segs []*segment) int64
}

// growForMoves grows the victims' devices before a cleaning pass moves
// their live entries (pick counted the segments a device may grow by as
// room), so that the moves find free segments: the pool holds twice the
// bytes to move, as pick's room assumes. A device that cannot grow (its
// limit, or no free space) is left as it is.
func (s *Store) growForMoves(vs []*victim) {
	need := map[*device]int64{}
	for _, v := range vs {
		for _, r := range v.live {
			need[v.g.dev] += r.l.size()
		}
	}
	half := int64(s.c.SegmentSize-bodyOff) / 2
	s.grow.addMu.Lock()
	defer s.grow.addMu.Unlock()
	for d, n := range need {
		want := int((n+half-1)/half) + s.lowWater()
		for {
			d.mu.Lock()
			free, can, idx := len(d.free), d.canGrow(), len(d.segs)
			d.mu.Unlock()
			if free >= want || !can || s.addSegment(d, idx) != nil {
				break
			}
		}
	}
}
