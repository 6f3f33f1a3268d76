package kv

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/braid-pm/braid/persist"
)

// chainPos is where one metadata log (a chain of metadata segments of one
// worker on one device) stands: the checkpoint's replay start, and the
// data segment its entries commit records of at that point.
type chainPos struct {
	dev, owner int
	metaSeg    int
	metaEpoch  uint64
	off        int
	dataSeg    int
	dataEpoch  uint64
	dataOff    int
}

// chain is one metadata log found at recovery.
type chain struct {
	dev, owner int
	segs       []*segment // by epoch
	start      chainPos
	hasStart   bool

	// results of the replay
	out       *parts
	entries   int64
	scanned   int64
	valueB    int64
	maxSerial uint64
	torn      int
	tornEnt   int
	corrupt   int
	stale     int
	zeroed    bool // the tail repair wrote zeros (a fence is due)
	media     int  // entries lost to poisoned media
	err       error
	meta      *segment // last metadata segment and its end
	metaEnd   int
	data      *segment // data segment of the last marker (nil: none valid)
	dataEnd   int
}

// krec is an index entry outside the index: a checkpoint's, a GC
// victim's.
type krec struct {
	key []byte
	l   loc
}

// testBeforeReplay, when set (tests), runs before the metadata logs are
// replayed.
var testBeforeReplay func(s *Store)

// recover rebuilds the index: the newest valid checkpoint, then every
// metadata log after it in parallel, highest serial per key.
func (s *Store) recover() error {
	t0 := time.Now()
	nw := len(s.devs) * s.c.workers
	s.idx = newIndex(s, s.c.Shards, nw, s.c.DirectIndex, s.c.OrderedIndex)
	ck, err := s.loadCheckpoint()
	if err != nil {
		return err
	}
	s.rep.CheckpointTime = time.Since(t0)
	if ck != nil {
		s.progress("recover", "checkpoint", s.rep.CheckpointKeys, s.rep.CheckpointKeys)
	}
	chains := s.chains(ck)
	if testBeforeReplay != nil {
		testBeforeReplay(s)
	}
	t1 := time.Now()
	ckParts, err := s.replayAll(ck, chains)
	if err != nil {
		return err
	}
	s.rep.ParseTime = time.Since(t1)
	t2 := time.Now()
	maxSerial := uint64(0)
	if ck != nil {
		maxSerial = ck.maxSerial
	}
	if ck != nil && s.c.lazy {
		s.base = ck // probed by lookups instead of loaded (reader.go)
	}
	for _, ch := range chains {
		if ch.err != nil {
			return ch.err
		}
		maxSerial = max(maxSerial, ch.maxSerial)
		s.account(ch)
	}
	srcs := ckParts
	for _, ch := range chains {
		srcs = append(srcs, ch.out)
		ch.out = nil
	}
	s.progress("recover", "index", 0, int64(len(s.idx.shards)))
	s.build(srcs)
	s.progress("recover", "index", int64(len(s.idx.shards)), int64(len(s.idx.shards)))
	s.loadDeadlines()
	s.settleZeroed()
	s.rep.IndexTime = time.Since(t2)
	if !s.broken.noSerialRestore {
		s.serial.Store(maxSerial)
	}
	s.rep.MaxSerial = maxSerial
	s.setupWorkers(chains)
	s.ckLogAt.Store(-(s.rep.BytesScanned + s.rep.ValueBytes)) // the tail counts toward the next checkpoint
	if ck != nil {
		s.ckBytes.Store(int64(len(ck.ents)))
	}
	r := &s.rep
	r.Total = time.Since(t0) + r.ReadTime
	if sec := r.Total.Seconds(); sec > 0 {
		r.GBs = float64(r.BytesScanned+r.ValueBytes) / sec / 1e9
		r.KeysPerSec = float64(r.Keys) / sec
	}
	return nil
}

// replayAll files the checkpoint's entries by shard (unless the open is
// lazy: reader.go) and replays every chain in parallel (at most
// GOMAXPROCS at once), then makes the zeroed torn tails durable with one
// fence. A chain's failure is in its err.
func (s *Store) replayAll(ck *ckView, chains []*chain) ([]*parts, error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var ckParts []*parts
	if ck != nil && !s.c.lazy {
		ckParts = s.partition(ck, sem, &wg)
	}
	var replayed int64 // (progress.go)
	for _, ch := range chains {
		ch.out = newParts(len(s.idx.shards))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// Under the guard: a fault no region listed (a segment file
			// truncated under its mapping, poison not yet known) fails
			// Open with ErrMedia naming the place, not the process.
			if err := persist.Guard(func() error { s.replay(ch); return nil }, s.devs[ch.dev].regions()...); err != nil {
				ch.err = fmt.Errorf("kv: recovery of device %s, worker %d's logs: %w", s.devs[ch.dev].dm.name(), ch.owner, err)
			}
			s.progressAdd("recover", "logs", &replayed, int64(len(chains)))
		}()
	}
	wg.Wait()
	for _, ch := range chains {
		if ch.zeroed {
			if err := ch.meta.r.Drain(); err != nil {
				return nil, err
			}
			break
		}
	}
	return ckParts, nil
}

// account adds what the replay of ch found to the recovery report.
func (s *Store) account(ch *chain) {
	r := &s.rep
	r.BytesScanned += ch.scanned
	r.ValueBytes += ch.valueB
	r.Entries += ch.entries
	r.Torn += ch.torn
	r.TornEntries += ch.tornEnt
	r.CorruptValues += ch.corrupt
	r.Stale += ch.stale
	r.MediaLost += ch.media
	if dataPastEnd(ch) {
		r.DataPastEnd++
	}
	dr := &r.Devices[ch.dev]
	dr.BytesScanned += ch.scanned
	dr.Entries += ch.entries
	dr.Torn += ch.torn
}

// chains groups the metadata segments by owner, in epoch order, with the
// checkpoint's starting positions.
func (s *Store) chains(ck *ckView) []*chain {
	s.rep.Devices = make([]DeviceRecovery, len(s.devs))
	byKey := map[[2]int]*chain{}
	var out []*chain
	for _, d := range s.devs {
		s.rep.Devices[d.idx].Dir = d.dm.name()
		for _, g := range d.segs {
			if g.kind != kindMeta {
				continue
			}
			k := [2]int{d.idx, g.owner}
			ch := byKey[k]
			if ch == nil {
				ch = &chain{dev: d.idx, owner: g.owner}
				byKey[k] = ch
				out = append(out, ch)
			}
			ch.segs = append(ch.segs, g)
		}
	}
	for _, ch := range out {
		slices.SortFunc(ch.segs, func(a, b *segment) int { return cmp.Compare(a.epoch.Load(), b.epoch.Load()) })
		if ck == nil {
			continue
		}
		for _, p := range ck.chains {
			if p.dev == ch.dev && p.owner == ch.owner {
				ch.start, ch.hasStart = p, true
			}
		}
	}
	return out
}

// replay parses one metadata log from its start position.
func (s *Store) replay(ch *chain) {
	var data *segment
	segs := ch.segs
	first := bodyOff
	if ch.hasStart {
		i := slices.IndexFunc(segs, func(g *segment) bool { return g.idx == ch.start.metaSeg && g.epoch.Load() == ch.start.metaEpoch })
		if i < 0 && s.lostSegment(ch.dev, ch.start.metaSeg) {
			// The checkpoint's segment lost its header to poison: replay
			// the chain's later segments (media.go).
			i = slices.IndexFunc(segs, func(g *segment) bool { return g.epoch.Load() > ch.start.metaEpoch })
			if i < 0 {
				i = len(segs)
			}
			segs, first = segs[i:], bodyOff
			ch.hasStart = false
			for i, g := range segs {
				data = s.replaySeg(ch, g, bodyOff, data, i == len(segs)-1)
			}
			return
		}
		if i < 0 {
			ch.err = fmt.Errorf("%w: checkpoint position in metadata segment %d (epoch %d) of device %d, which holds no such segment", ErrCorrupt, ch.start.metaSeg, ch.start.metaEpoch, ch.dev)
			return
		}
		segs, first = segs[i:], ch.start.off
		data = s.dataSeg(ch.dev, ch.start.dataSeg, ch.start.dataEpoch)
		ch.data, ch.dataEnd = data, ch.start.dataOff
	}
	for i, g := range segs {
		off := first
		if i > 0 {
			off = bodyOff
		}
		last := i == len(segs)-1
		data = s.replaySeg(ch, g, off, data, last)
	}
}

// dataSeg returns the data segment idx of device dev if it still has the
// epoch a marker or checkpoint names (else its records are gone: stale).
func (s *Store) dataSeg(dev, idx int, epoch uint64) *segment {
	d := s.devs[dev]
	if idx < 0 || idx >= len(d.segs) {
		return nil
	}
	if g := d.segs[idx]; g.kind == kindData && g.epoch.Load() == epoch {
		return g
	}
	return nil
}

// replaySeg replays metadata segment g of ch from off: each marker
// switches the data segment its entries commit into, each record entry is
// checked and filed (replayRecord), and the first entry that fails its
// check ends the log (checkEnd tells a tear from damage). data is the
// data segment the chain's previous segment ended on; last says g is the
// chain's last segment, whose tail is repaired. It returns the data
// segment g ends on.
func (s *Store) replaySeg(ch *chain, g *segment, off int, data *segment, last bool) *segment {
	dataEnd := bodyOff
	if data != nil && ch.data == data {
		dataEnd = ch.dataEnd
	}
	start := off
	seed := entrySeed(g.epoch.Load())
	var metaMapped, dataMapped int // how far populate has mapped the segments
	var mapped *segment
	dataLost, gap := false, false
	var zeroedData *segment // the marker's data segment, its header zeroed (media.go)
	var zeroedEpoch uint64
	for ; off+entrySize <= g.size; off += entrySize {
		if off >= metaMapped {
			metaMapped = s.populate(g, off)
		}
		if len(g.bad) > 0 && overlaps(g.bad, off, entrySize) {
			ch.media++ // unreadable: skipped, counted (media.go)
			gap = true
			continue
		}
		e, st := decodeEntrySeeded(g.mem[off:off+entrySize], seed)
		if st != entryOK {
			if err := s.checkEnd(ch, g, off, st == entryEnd, last, seed); err != nil {
				ch.err = err
				return nil
			}
			break
		}
		if e.marker() {
			if nd := s.dataSeg(ch.dev, int(e.off), e.serial); nd != data || data == nil {
				data, dataEnd = nd, bodyOff
				zeroedData = nil
				if nd == nil {
					zeroedData, zeroedEpoch = s.zeroedRef(ch.dev, int(e.off)), e.serial
				}
				dataLost = nd == nil && s.lostSegment(ch.dev, int(e.off))
			}
			if data != nil {
				dataEnd = max(dataEnd, min(int(e.vlen), data.size))
			}
			continue
		}
		if gap { // a marker may have been lost with the gap (media.go)
			gap = false
			if nd := s.resync(ch, data, &e); nd != data {
				data, dataEnd, dataLost = nd, bodyOff, false
			}
		}
		ch.entries++
		ch.maxSerial = max(ch.maxSerial, e.serial)
		if data == nil && zeroedData != nil {
			s.keepZeroed(ch, zeroedData, zeroedEpoch, &e)
			continue
		}
		if data == nil && dataLost {
			ch.media++ // its data segment's header is unreadable (media.go)
			continue
		}
		if data == nil {
			ch.stale++
			continue
		}
		s.replayRecord(ch, data, &e, &dataEnd, &mapped, &dataMapped)
	}
	ch.scanned += int64(off - start)
	if last {
		s.repairTail(ch, g, off)
		ch.meta, ch.metaEnd = g, off
	}
	ch.data, ch.dataEnd = data, dataEnd
	return data
}

// replayRecord checks the record that entry e commits in data (bounds,
// media, CRC) and files it for the index; a record that fails is counted,
// never filed. dataEnd grows past it; mapped and dataMapped are how far
// populate has mapped data.
func (s *Store) replayRecord(ch *chain, data *segment, e *entry, dataEnd *int, mapped **segment, dataMapped *int) {
	n := e.klen + int(e.vlen)
	if int(e.off) < bodyOff || int(e.off)+n > data.size {
		ch.corrupt++
		return
	}
	*dataEnd = max(*dataEnd, int(e.off)+recSize(e.klen, int(e.vlen)))
	if data != *mapped || int(e.off)+n > *dataMapped || int(e.off) < *dataMapped-populateChunk {
		*mapped, *dataMapped = data, s.populate(data, int(e.off))
	}
	if len(data.bad) > 0 && overlaps(data.bad, int(e.off), n) {
		ch.media++
		return
	}
	rec := data.mem[e.off : int(e.off)+n]
	data.r.ReadSeq(rec) // declared to an emulated device (Options.Emulate)
	ch.valueB += int64(n)
	if persist.CRC32C(rec[:s.crcLen(n, e.ttl)]) != e.crc && !s.broken.noValueCRC {
		ch.corrupt++ // a torn batch's value, or damage: never a value
		return
	}
	l := loc{serial: e.serial, epoch: data.epoch.Load(), seg: uint32(data.idx), off: e.off, vlen: e.vlen, crc: e.crc, dev: uint16(ch.dev), klen: uint16(e.klen)}
	if e.tomb {
		l.vlen |= tombBit
	}
	if e.ttl {
		l.vlen |= ttlBit
	}
	ch.out.add(s.idx, rec[:e.klen], l)
}

// dataPastEnd: the unit of ch's data log that holds its end has bytes
// after it. Every append streams whole units, zeros after the tail, so
// after a fenced batch they are zeros: bytes there are records a batch
// wrote after the last entry the metadata log still has — a torn,
// unacknowledged batch's, or ones whose entries damage wiped out (what
// nothing else tells from the end of a crashed store's log). Reported,
// not repaired: the next append rewrites the unit.
func dataPastEnd(ch *chain) bool {
	g, end := ch.data, ch.dataEnd
	if g == nil || end%unit == 0 || end >= g.size || len(g.bad) > 0 && overlaps(g.bad, end, unit) {
		return false
	}
	return !allZero(g.mem[end:min(g.size, (end+unit)&^(unit-1))])
}

// keepZeroed indexes entry e, whose record lies in data segment g (of
// epoch) whose header was zeroed: its key then reads ErrCorrupt, not an
// older version or nothing (media.go). The record is still there: a key
// whose record fails its checksum (or does not fit) is dropped as corrupt.
func (s *Store) keepZeroed(ch *chain, g *segment, epoch uint64, e *entry) {
	n := e.klen + int(e.vlen)
	if int(e.off) < bodyOff || int(e.off)+n > g.size {
		ch.corrupt++
		return
	}
	rec := g.mem[e.off : int(e.off)+n]
	if persist.CRC32C(rec) != e.crc {
		ch.corrupt++
		return
	}
	l := loc{serial: e.serial, epoch: epoch, seg: uint32(g.idx), off: e.off, vlen: e.vlen, crc: e.crc, dev: uint16(ch.dev), klen: uint16(e.klen)}
	if e.tomb {
		l.vlen |= tombBit
	}
	ch.out.add(s.idx, rec[:e.klen], l)
}

// checkEnd decides what the zero (end) or damaged (!end) entry at off of
// metadata segment g is: the end of the log, or the tear a crash left of
// an unacknowledged batch, only when nothing proves otherwise; damage,
// which fails Open, when something does. A segment that is not the last
// of its log is full (a worker moves on only then) and durable (the next
// segment's header commit fenced it), so any end or damage before its
// last entry slot is damage (a poisoned segment, taken as full, aside).
// In the last segment, a valid batch start (layout.go) after off proves
// that a fence followed the entry at off: it was durable, so damage.
// Recovery never zeroes what it cannot prove torn.
func (s *Store) checkEnd(ch *chain, g *segment, off int, end, last bool, seed uint32) error {
	what := "fails its checksum"
	if end {
		what = "is zeros"
	}
	if !last {
		if end && g.poisoned.Load() {
			return nil
		}
		return fmt.Errorf("%w: device %d metadata segment %d offset %d: entry %s before the end of its log (a later segment follows)", ErrCorrupt, ch.dev, g.idx, off, what)
	}
	if q := s.batchAfter(g, off+entrySize, seed); q >= 0 {
		return fmt.Errorf("%w: device %d metadata segment %d offset %d: entry %s before the end of its log (a later batch starts at offset %d)", ErrCorrupt, ch.dev, g.idx, off, what, q)
	}
	return nil
}

// batchAfter returns the offset of the first valid batch start of g at
// or after from (24-byte steps), or -1. It stops at the segment's end or
// after tailReach bytes of zeros: past a log's end a segment is zeros
// (format zeroed it), but for what a torn batch left, which lies within
// tailReach of the end; so a batch start further on would have to follow
// a zeroed run of more than tailReach (128 KiB), which it does not
// look for (the limit the README's fault table states).
func (s *Store) batchAfter(g *segment, from int, seed uint32) int {
	zeros, mapped := 0, 0
	for o := from; o+entrySize <= g.size && zeros < tailReach; o += entrySize {
		if o+entrySize > mapped {
			mapped = s.populate(g, o+entrySize-1)
		}
		if len(g.bad) > 0 && overlaps(g.bad, o, entrySize) {
			continue
		}
		b := g.mem[o : o+entrySize]
		if allZero(b) {
			zeros += entrySize
			continue
		}
		zeros = 0
		if e, st := decodeEntrySeeded(b, seed); st == entryOK && e.first {
			return o
		}
	}
	return -1
}

// populateChunk is how much of a segment recovery maps at once.
const populateChunk = 1 << 20

// populate maps the chunk of g that holds offset off (real segments; a
// simulated one is DRAM) and returns where the chunk ends.
func (s *Store) populate(g *segment, off int) int {
	from := off &^ (populateChunk - 1)
	end := min(from+populateChunk, g.size)
	if s.c.media == nil {
		populate(g.mem[from:end])
	}
	return end
}

// maxUnfencedMeta bounds the metadata bytes a worker stages between two
// fences (a batch longer than that fences on the way): a torn batch can
// have left entries at most that far after the durable end of a log,
// plus the rest of the unit its last emit reached.
const maxUnfencedMeta = 128 << 10

// tailReach is how far after a log's end the tail repair looks.
const tailReach = maxUnfencedMeta + 2*unit

// repairTail zeroes whatever a torn batch left after the log's end, so
// that later appends never sit before stale entries. It reads only as far
// as a torn batch can reach (tailReach), not the rest of the segment
// (which format zeroed before the segment's header was committed). It
// counts the entry slots after the end (24-byte steps from the end, not
// windows of each unit) that hold bytes, in the units where the tear is
// certain: the end's own unit, which the last fenced write filled with
// zeros after the end, and a unit that holds an entry valid under the
// segment's epoch (one of the batch's entries that reached the media
// after a hole). Bytes elsewhere that never formed an entry of this
// segment — e.g. what a format whose zeroing was lost left of the
// segment's previous use, which fails under the new epoch forever — are
// zeroed but not reported as torn entries.
func (s *Store) repairTail(ch *chain, g *segment, end int) {
	stop := min(g.size, (end+tailReach)&^(unit-1))
	if stop <= end {
		return
	}
	seed := entrySeed(g.epoch.Load())
	base := end &^ (unit - 1)
	type unitSeen struct{ entries, valid int }
	units := make([]unitSeen, (stop-base+unit-1)/unit)
	mapped := 0 // the tail was never read: map it a chunk at a time
	for o := end; o+entrySize <= stop; o += entrySize {
		if o+entrySize > mapped {
			mapped = s.populate(g, o+entrySize-1)
		}
		if len(g.bad) > 0 && overlaps(g.bad, o, entrySize) {
			continue // unreadable (media.go)
		}
		b := g.mem[o : o+entrySize]
		if allZero(b) {
			continue
		}
		u := &units[(o-base)/unit]
		u.entries++
		if _, st := decodeEntrySeeded(b, seed); st == entryOK {
			u.valid++
		}
	}
	for i, u := range units {
		if u.entries > 0 && (u.valid > 0 || i == 0 && end%unit != 0) {
			ch.torn = 1
			ch.tornEnt += u.entries
		}
	}
	if s.c.ReadOnly {
		return // reported, left as it is: a read-only open writes nothing (readonly.go)
	}
	for u := end; u < stop; {
		next := min((u+unit)&^(unit-1), stop)
		if len(g.bad) > 0 && overlaps(g.bad, u, next-u) {
			u = next // unreadable, and never appended to again (media.go)
			continue
		}
		if !allZero(g.mem[u:next]) {
			// NoDrain: recover fences once for every log.
			if err := g.r.Set(g.mem[u:next], 0, persist.NoDrain|persist.NonTemporal); err != nil {
				ch.err = err
				return
			}
			ch.zeroed = true
		}
		u = next
	}
}

func allZero(b []byte) bool {
	le := binary.LittleEndian
	for len(b) >= 32 {
		if le.Uint64(b)|le.Uint64(b[8:])|le.Uint64(b[16:])|le.Uint64(b[24:]) != 0 {
			return false
		}
		b = b[32:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
