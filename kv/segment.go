package kv

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// segment is the DRAM state of one segment file.
type segment struct {
	dev    *device
	idx    int
	r      *persist.Region
	mem    []byte
	size   int
	kind   uint8 // kindFree, kindData, kindMeta
	owner  int   // worker on the device that appends to it
	epoch  atomic.Uint64
	sealed bool // no longer appended to (set by its worker, read by GC under dev.mu)
	// zeroed: the body is known to be zeros (a segment file created by
	// this Open and never formatted), so a metadata log may start on it
	// without zeroing it first. Read and cleared by the worker that
	// formats it (it took the segment from the pool under dev.mu).
	zeroed bool
	// ext: the bytes from 0 allocated and faulted in (grow.go); the
	// whole segment for one that is not a sparse file.
	ext       atomic.Int64
	extMu     sync.Mutex
	extQueued atomic.Bool
	tail      atomic.Int64  // bytes used (log end), for Stats and GC
	live      atomic.Int64  // bytes of the latest versions it holds (data segments)
	maxSerial atomic.Uint64 // newest entry (GC's age)
	readers   atomic.Int32  // gets in flight on it
	retired   atomic.Bool   // GC moved its entries: no new reader may start

	// Poisoned media (media.go's poison notes): bad is what the region
	// knew unreadable at Open; poisoned is set then, or when a read of
	// it faults. A poisoned segment is never reused, cleaned, freed or
	// continued by a worker.
	bad      []persist.Range
	poisoned atomic.Bool
	// damaged: GC found a live record here that fails its check (gc.go's
	// quarantine): the segment is kept, never cleaned or freed, so that
	// its key reads ErrCorrupt rather than vanishing.
	damaged atomic.Bool
	// blank: the header line was all zeros at Open (never formatted, or
	// damaged: zeroedHeader decides); headerLost: it was damaged (media.go).
	blank      bool
	headerLost atomic.Bool
}

// pin registers a reader of the record at l: false when the segment was
// retired or reused since l was read from the index (the caller looks
// again). The cleaner sets retired before it waits for readers to drain,
// so a reader that pinned before that is waited for and one after it sees
// the flag (both sides use sequentially consistent atomics).
func (g *segment) pin(epoch uint64) bool {
	if g.headerLost.Load() {
		return true // never reused: the read answers ErrCorrupt (media.go)
	}
	g.readers.Add(1)
	if g.retired.Load() || g.epoch.Load() != epoch {
		g.readers.Add(-1)
		return false
	}
	return true
}

func (g *segment) unpin() {
	if !g.headerLost.Load() {
		g.readers.Add(-1)
	}
}

// sealedMeta: g is a sealed metadata segment (read under its device's
// lock: its worker formats and seals segments while the cleaner looks).
func (g *segment) sealedMeta() bool {
	g.dev.mu.Lock()
	defer g.dev.mu.Unlock()
	return g.kind == kindMeta && g.sealed
}

// device is one PMem device: its segments and its pool of free ones.
type device struct {
	idx  int
	dm   deviceMedia
	segs []*segment

	mu   sync.Mutex
	free []int // free segment indices
	// limit is the most segments the device may have (DeviceSize);
	// grows: its media can add segment files (grow.go).
	limit int
	grows bool
	// idFiles: the segment files its kv.id says it has had (grow.go).
	idFiles int
}

// list is the device's segments now (segments are only ever added).
func (d *device) list() []*segment {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.segs
}

// take hands out a free segment when more than reserve are free.
func (d *device) take(reserve int) (*segment, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.free) <= reserve {
		return nil, false
	}
	g := d.segs[d.free[0]]
	d.free = d.free[1:]
	return g, true
}

// takeOrGrow is take; with the pool at the reserve or below it asks the
// grower for a segment file (and counts a write that must wait for it).
func (s *Store) takeOrGrow(d *device, reserve int) (*segment, bool) {
	g, ok := d.take(reserve)
	d.mu.Lock()
	low, can := len(d.free) <= s.lowWater(), d.canGrow()
	d.mu.Unlock()
	if low && can {
		s.kickGrow()
		if !ok {
			s.grow.growWaits.Add(1)
		}
	}
	return g, ok
}

func (d *device) give(g *segment) {
	d.mu.Lock()
	d.free = append(d.free, g.idx)
	d.mu.Unlock()
}

func (d *device) freeCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.free)
}

// format makes free segment g a segment of kind k owned by owner with a
// new epoch. A metadata segment's body is zeroed first (its end is the
// first zero entry) unless it is known to be zeros already (a new file:
// on a fresh store every first metadata log, whose zeroing was 64 MiB of
// device writes per worker before the first put). The header is committed
// last, so a crash leaves the segment free.
func (s *Store) format(g *segment, kind uint8, owner int) error {
	if err := s.ready(g, bodyOff+2*entrySize); err != nil {
		return err
	}
	if kind == kindMeta && !g.zeroed {
		if err := s.zeroBody(g); err != nil {
			return fmt.Errorf("kv: zero metadata segment: %w", err)
		}
	}
	g.zeroed = false
	k := &dataKind
	if kind == kindMeta {
		k = &metaKind
	}
	epoch := s.epoch.Add(1)
	h := segHeader{kind: kind, size: int64(g.size), owner: owner, epoch: epoch, storeID: s.storeID}
	f := h.fields()
	if err := k.Commit(g.r, g.mem[:pmheader.Size], &f); err != nil {
		return err
	}
	g.dev.mu.Lock()
	g.kind, g.owner, g.sealed = kind, owner, false
	g.epoch.Store(epoch)
	g.dev.mu.Unlock()
	g.tail.Store(bodyOff)
	g.live.Store(0)
	g.maxSerial.Store(0)
	g.retired.Store(false)
	s.stats.mediaBytes.Add(pmheader.Size)
	return nil
}

// release frees g: its magic is cleared durably (the epoch stays in the
// header fields, so epochs never repeat) and it goes back to the pool.
func (s *Store) release(g *segment) error {
	k := &dataKind
	if g.kind == kindMeta {
		k = &metaKind
	}
	if err := k.Invalidate(g.r, g.mem[:pmheader.Size]); err != nil {
		return err
	}
	g.dev.mu.Lock()
	g.kind, g.sealed = kindFree, false
	g.dev.mu.Unlock()
	g.tail.Store(0)
	g.live.Store(0)
	g.dev.give(g)
	s.stats.segmentsFreed.Add(1)
	s.room.signal()
	return nil
}

// logWriter appends to one segment through a DRAM staging buffer that
// mirrors the log from the start of its last, partial 256-byte unit: each
// emit streams whole units (the partial one again, completed, the zeros
// after the tail included), so the media never sees a write smaller than
// its unit, and the bytes already durable are rewritten unchanged.
type logWriter struct {
	g     *segment
	tail  int    // log end (offset in the segment)
	start int    // offset of buf[0]: tail's unit start at the last emit
	buf   []byte // staged bytes from start
}

func (l *logWriter) reset(g *segment, tail int) {
	l.g, l.tail = g, tail
	l.start = tail &^ (unit - 1)
	if l.buf == nil {
		l.buf = make([]byte, 0, 64<<10)
	}
	l.buf = l.buf[:0]
	if g != nil {
		g.tail.Store(int64(tail))
		l.buf = append(l.buf, g.mem[l.start:tail]...)
	}
}

func (l *logWriter) room(n int) bool { return l.g != nil && l.tail+n <= l.g.size }

// stage returns n bytes at the log end to fill (zeroed).
func (l *logWriter) stage(n int) ([]byte, int) {
	off := l.tail
	at := len(l.buf)
	l.buf = append(l.buf, make([]byte, n)...)
	l.tail += n
	return l.buf[at : at+n], off
}

// emit streams the staged units to the segment without a fence and keeps
// the new partial unit staged. It returns the bytes written.
func (l *logWriter) emit() (int, error) {
	if l.g == nil || l.pending() == 0 {
		return 0, nil
	}
	end := min((l.tail+unit-1)&^(unit-1), l.g.size)
	n := end - l.start
	if len(l.buf) < n {
		l.buf = append(l.buf, make([]byte, n-len(l.buf))...) // zeros after the tail
	}
	if err := l.g.r.Copy(l.g.mem[l.start:end], l.buf[:n], persist.NoDrain|persist.NonTemporal); err != nil {
		return 0, err
	}
	l.g.tail.Store(int64(l.tail))
	ns := l.tail &^ (unit - 1)
	keep := copy(l.buf, l.buf[ns-l.start:l.tail-l.start])
	l.buf = l.buf[:keep]
	l.start = ns
	return n, nil
}

// pending is the bytes staged since the last emit.
func (l *logWriter) pending() int {
	if l.g == nil {
		return 0
	}
	return l.tail - int(l.g.tail.Load())
}

// regions are the device's segment regions, for naming a fault's place.
func (d *device) regions() []*persist.Region {
	rs := make([]*persist.Region, 0, len(d.segs))
	for _, g := range d.segs {
		rs = append(rs, g.r)
	}
	return rs
}
