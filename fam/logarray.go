package fam

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// LogArray is the log-based way to update small objects in place, the
// baseline FAM is measured against (the paper's section 3.4.2): each
// Update appends a redo record (object index + new bytes) to a
// popcount-validated log and fences, then writes the bytes in place and
// fences again — two barriers. OpenLog replays the valid records.
//
// Layout from the array's offset: the 64-byte header, then Lanes logs of
// LaneBytes each, then the objects, packed at a stride of Size() rounded up
// to 8 bytes. A lane log is a generation word (its first cache line) and
// then fixed-size records:
//
//	word 0   len u16 | popcount u16 | generation u32
//	word 1   object index
//	...      the object's bytes, zero-padded to len
//
// len is 16 + the padded object size, rounded up to 32 or 64 bytes, or to
// whole cache lines above 64, so a record never straddles more lines than
// it must; the popcount counts the one bits of words 1..len/8-1. A record
// is valid when its generation is the lane's and its popcount matches:
// records are only ever written over zeroed log space, so a torn record has
// fewer one bits than it claims (the paper's PopLog, §3.3.1). When a lane
// is full it is reset: its generation is incremented and made durable first, which
// invalidates every record in it at once, and then it is zeroed. OpenLog
// replays each lane's valid records in order (idempotent redo); a lane that
// holds only zeros after its last valid record is appended to from there,
// any other (a torn record, an older generation's leftovers) is reset.
//
// Object i always logs to lane i % Lanes, so the records of one object are
// in one log in update order. Updates of objects in different lanes run in
// parallel, updates within a lane one at a time (a mutex per lane). As for
// Array, an object must have one writer at a time and a Read of an object
// must not overlap an Update of the same object. A LogArray claims its
// whole area (header, lanes and objects; it does not use walog) on the
// region until Close, as an Array does; finish every operation on it
// before Close.
type LogArray struct {
	r         *persist.Region
	off       int
	logs      int // lane 0
	first     int // object 0
	end       int
	size      int
	count     int
	ostride   int
	rec       int // record bytes
	laneBytes int
	lanes     []lane
	replayed  int
	lost      int  // lanes and records recovery could not read (poisoned media)
	ro        bool // the region is read-only

	closed  atomic.Bool
	release func() // of the area's claim on the region
}

type lane struct {
	mu    sync.Mutex
	pos   int    // next record, from the lane's start
	media error  // the lane's log is on poisoned media: its updates fail with it
	gen   uint32 // non-zero
	_     [64 - 8 - 8 - 16 - 4]byte
}

// LogOptions say where a LogArray is, what it holds and how its redo logs
// are laid out. A nil *LogOptions means the defaults: offset 0, 4 lanes of
// 64 KiB and, for CreateLog, no objects (an error: CreateLog needs
// ObjectSize and Count).
type LogOptions struct {
	// Offset is where the array starts in the region, a multiple of 64
	// (CreateLog and OpenLog).
	Offset int
	// ObjectSize is the bytes of each object, a multiple of 4 from 4 to
	// MaxSize (CreateLog; OpenLog reads it from the header).
	ObjectSize int
	// Count is the number of objects, at least 1 (CreateLog; OpenLog reads
	// it from the header).
	Count int
	// Lanes is the number of redo logs: object i logs to lane i % Lanes,
	// and updates in different lanes run in parallel. 0 means 4; at most
	// 1024 (CreateLog; OpenLog reads it from the header).
	Lanes int
	// LaneBytes is the size of each lane's log, a multiple of 64 with room
	// for its 64-byte generation line and at least one record. A full lane
	// is reset (zeroed) inside the Update that finds it full. 0 means
	// 64 KiB; at most 1 GiB (CreateLog; OpenLog reads it from the header).
	LaneBytes int
}

const (
	defaultLanes     = 4
	defaultLaneBytes = 64 << 10
	maxLanes         = 1024
	maxLaneBytes     = 1 << 30
	laneHead         = 64 // the generation line
)

// Validate reports the first problem with the options for CreateLog, as
// Options.Validate does, and lanes out of range wrapping ErrInvalid.
func (o *LogOptions) Validate() error {
	var v LogOptions
	if o != nil {
		v = *o
	}
	if err := checkOffset(v.Offset); err != nil {
		return err
	}
	if err := checkLanes(v.ObjectSize, &v); err != nil {
		return err
	}
	lanes, lb := v.resolve()
	if lb > (math.MaxInt-headerSize)/lanes {
		// Only where an int is 32 bits: 1024 lanes of 1 GiB is 2^40.
		return fmt.Errorf("%w: %d lanes of %d bytes exceed the %d-bit address space", ErrInvalid, lanes, lb, bits.UintSize)
	}
	return checkCount(v.Count, headerSize+lanes*lb, objStride(v.ObjectSize), v.ObjectSize)
}

// checkLanes checks the object size and the lanes of o.
func checkLanes(size int, o *LogOptions) error {
	if err := checkSize(size); err != nil {
		return err
	}
	l, lb := o.resolve()
	switch {
	case l < 1 || l > maxLanes:
		return fmt.Errorf("%w: Lanes %d, want 1 to %d", ErrInvalid, l, maxLanes)
	case lb%64 != 0 || lb < laneHead+recordLen(size) || lb > maxLaneBytes:
		return fmt.Errorf("%w: LaneBytes %d, want a multiple of 64 from %d to %d for %d-byte objects",
			ErrInvalid, lb, laneHead+recordLen(size), maxLaneBytes, size)
	}
	return nil
}

func (o *LogOptions) resolve() (lanes, laneBytes int) {
	lanes, laneBytes = defaultLanes, defaultLaneBytes
	if o != nil {
		if o.Lanes != 0 {
			lanes = o.Lanes
		}
		if o.LaneBytes != 0 {
			laneBytes = o.LaneBytes
		}
	}
	return lanes, laneBytes
}

// recordLen is the bytes of one redo record for objects of size bytes.
func recordLen(size int) int {
	n := 16 + (size+7)&^7
	if n <= 64 {
		return 1 << bits.Len(uint(n-1)) // 32 or 64
	}
	return (n + 63) &^ 63
}

func objStride(size int) int { return (size + 7) &^ 7 }

// LogFootprint returns the bytes a LogArray of these options occupies from
// its offset: the 64-byte header, Lanes logs of LaneBytes, and Count
// objects at a stride of ObjectSize rounded up to 8. It returns the error
// of opts.Validate.
func LogFootprint(opts *LogOptions) (int, error) {
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	lanes, lb := opts.resolve()
	return headerSize + lanes*lb + opts.Count*objStride(opts.ObjectSize), nil
}

// CreateLog formats a LogArray of opts.Count objects of opts.ObjectSize
// bytes at opts.Offset of r, with opts.Lanes redo logs of opts.LaneBytes.
// Every object reads as zeros. As with Create, what was there is lost, and
// when CreateLog returns nil the array is durable; a crash during it
// leaves either the complete array or ErrNoArray. A read-only or closed
// region is ErrReadOnly or persist.ErrClosed, and nothing is written; bad
// options are the errors of LogOptions.Validate. CreateLog, like OpenLog,
// claims the array's bytes (LogFootprint) until Close: an open structure
// over any of them is an error wrapping persist.ErrBusy, and nothing is
// written.
func CreateLog(r *persist.Region, opts *LogOptions) (a *LogArray, err error) {
	err = guard(r, func() error {
		a, err = createLog(r, opts)
		return err
	})
	return a, err
}

func createLog(r *persist.Region, opts *LogOptions) (_ *LogArray, err error) {
	var o LogOptions
	if opts != nil {
		o = *opts
	}
	off, size, count := o.Offset, o.ObjectSize, o.Count
	hb, err := logKind.Place(r, off)
	if err != nil {
		return nil, err
	}
	need, err := LogFootprint(&o)
	if err != nil {
		return nil, err
	}
	if need > r.Size()-off {
		return nil, fmt.Errorf("%w: %d objects of %d bytes and their logs need %d bytes from offset %d, the region has %d",
			ErrTooSmall, count, size, need, off, r.Size()-off)
	}
	lanes, lb := o.resolve()
	rel, err := logKind.Claim(r, off, need)
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	if err := logKind.Invalidate(r, hb); err != nil {
		return nil, err
	}
	a := newLogArray(r, off, size, count, lanes, lb, rel)
	mem := r.Bytes()
	if err := r.Set(mem[a.logs:a.end], 0, persist.NoDrain); err != nil {
		return nil, err
	}
	for l := range a.lanes {
		g := mem[a.laneOff(l):]
		persist.Store64(g, 1)
		if err := r.Flush(g[:8]); err != nil {
			return nil, err
		}
		a.lanes[l].gen, a.lanes[l].pos = 1, laneHead
	}
	if err := r.Drain(); err != nil {
		return nil, err
	}
	h := pmheader.Fields{Size: uint32(size), Stride: uint32(a.ostride), Count: uint64(count), Aux: uint64(lanes) | uint64(lb)<<32}
	if err := logKind.Commit(r, hb, &h); err != nil {
		return nil, err
	}
	return a, nil
}

func newLogArray(r *persist.Region, off, size, count, lanes, lb int, release func()) *LogArray {
	logs := off + headerSize
	first := logs + lanes*lb
	return &LogArray{
		r: r, off: off, logs: logs, first: first, end: first + count*objStride(size),
		size: size, count: count, ostride: objStride(size), rec: recordLen(size),
		laneBytes: lb, lanes: make([]lane, lanes), ro: errors.Is(r.Writable(), persist.ErrReadOnly),
		release: release,
	}
}

// Close closes the array and releases its area's claim on the region, as
// Array.Close does: it writes nothing, a second Close returns ErrClosed, as
// does every operation after Close, and it must not run concurrently with
// another method of the array.
func (a *LogArray) Close() error {
	if a.closed.Swap(true) {
		return ErrClosed
	}
	a.release()
	return nil
}

func (a *LogArray) laneOff(l int) int { return a.logs + l*a.laneBytes }

// OpenLog opens the LogArray at opts.Offset of r (the other options are
// read from the header; nil means offset 0) and recovers it: the valid
// records of every lane are replayed in order and made durable; then each
// lane that holds anything but zeros after its last valid record (a torn
// record, an older generation's leftovers) is reset, and the others are
// appended to after their records. Afterwards every object holds the value
// of its last completed Update, or of the Update running at the crash.
// Recovery is idempotent, so a crash during OpenLog is recovered by the
// next one. Errors and the claim as for Open (ErrBadFormat for an Array's
// header, among others); a complete record naming an object that does not
// exist or does not belong to its lane is ErrCorrupt.
//
// In a read-only region OpenLog writes nothing: it opens an array none of
// whose records needs replaying, leaving lanes that a writable OpenLog
// would reset as they are (Update then returns an error wrapping
// persist.ErrReadOnly), and returns an error wrapping persist.ErrReadOnly
// when an in-place write must be redone before the object can be read.
func OpenLog(r *persist.Region, opts *LogOptions) (a *LogArray, err error) {
	err = guard(r, func() error {
		a, err = openLog(r, opts)
		return err
	})
	if err == nil && opts != nil {
		err = matchObjects(opts.ObjectSize, opts.Count, a.size, a.count)
		switch {
		case err != nil:
		case opts.Lanes != 0 && opts.Lanes != len(a.lanes):
			err = fmt.Errorf("%w: LogOptions.Lanes %d, the array has %d lanes", ErrInvalid, opts.Lanes, len(a.lanes))
		case opts.LaneBytes != 0 && opts.LaneBytes != a.laneBytes:
			err = fmt.Errorf("%w: LogOptions.LaneBytes %d, the array's lanes are %d bytes", ErrInvalid, opts.LaneBytes, a.laneBytes)
		}
		if err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, err
}

func openLog(r *persist.Region, opts *LogOptions) (_ *LogArray, err error) {
	var off int
	if opts != nil {
		off = opts.Offset
	}
	hb, err := logKind.Place(r, off)
	if err != nil {
		return nil, err
	}
	h, err := logKind.Decode(hb)
	if err != nil {
		return nil, err
	}
	size := int(h.Size)
	lanes, lb := int(uint32(h.Aux)), int(h.Aux>>32)
	if err := checkLanes(size, &LogOptions{Lanes: lanes, LaneBytes: lb}); err != nil || lanes == 0 || lb == 0 {
		return nil, fmt.Errorf("%w: header says %d-byte objects, %d lanes of %d bytes", ErrCorrupt, size, lanes, lb)
	}
	if int(h.Stride) != objStride(size) {
		return nil, fmt.Errorf("%w: header says a stride of %d bytes, %d-byte objects take %d", ErrCorrupt, h.Stride, size, objStride(size))
	}
	if lb > (r.Size()-off-headerSize)/lanes {
		// Checked before the product, which can overflow a 32-bit int.
		return nil, fmt.Errorf("%w: header says %d lanes of %d bytes, more than the %d bytes from offset %d",
			ErrTooSmall, lanes, lb, r.Size()-off, off)
	}
	count, err := logKind.Extent(r, off, lanes*lb, h)
	if err != nil {
		return nil, err
	}
	rel, err := logKind.Claim(r, off, headerSize+lanes*lb+count*objStride(size))
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	a := newLogArray(r, off, size, count, lanes, lb, rel)
	if err := a.recover(); err != nil {
		return nil, err
	}
	return a, nil
}

// recover replays every lane and fences. A lane whose space after its
// last valid record is all zeros is appended to from there; any other lane
// (a torn record, records of an older generation) is reset, unless the
// region is read-only. In a read-only region the first record that needs
// replaying ends it, before any store.
func (a *LogArray) recover() error {
	mem := a.r.Bytes()
	ends := make([]int, len(a.lanes))
	for l := range a.lanes {
		if err := a.replayLane(mem, l, &ends[l]); err != nil {
			return err
		}
	}
	// The replayed values must be durable before a reset invalidates the
	// records that carry them.
	if a.replayed > 0 {
		if err := a.r.Drain(); err != nil {
			return err
		}
	}
	for l := range a.lanes {
		lo := a.laneOff(l)
		if a.lanes[l].media != nil {
			continue
		}
		err := guard(a.r, func() error {
			if !a.ro && !zero(mem[lo+ends[l]:lo+a.laneBytes]) {
				return a.reset(mem, l)
			}
			return nil
		})
		if errors.Is(err, persist.ErrMedia) {
			a.lanes[l].media = err
			a.lost++
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// replayLane replays lane l from its first record, under persist.Guard,
// and sets *end where its valid records end. A lane on poisoned media is
// lost to recovery (its updates then fail with the media error); a record
// whose object is poisoned is skipped (the object stays unreadable).
func (a *LogArray) replayLane(mem []byte, l int, end *int) error {
	lo := a.laneOff(l)
	pos := laneHead
	for {
		err := guard(a.r, func() error { return a.replayFrom(mem, l, &pos, end) })
		var me *persist.MediaError
		switch {
		case !errors.As(err, &me):
			return err
		case me.Off >= int64(lo) && me.Off < int64(lo+a.laneBytes):
			a.lanes[l].media, a.lanes[l].pos = err, laneHead
			a.lost++
			return nil
		}
		a.lost++
		pos += a.rec
	}
}

// replayFrom replays lane l's records from *pos on (which it advances
// as it goes, so that a fault names the record it was at).
func (a *LogArray) replayFrom(mem []byte, l int, pos, end *int) error {
	lo := a.laneOff(l)
	gw := persist.Load64(mem[lo:])
	gen := uint32(gw)
	if gen == 0 || gw>>32 != 0 {
		return fmt.Errorf("%w: lane %d has generation word %#x", ErrCorrupt, l, gw)
	}
	for ; *pos+a.rec <= a.laneBytes; *pos += a.rec {
		rec := mem[lo+*pos : lo+*pos+a.rec]
		h := persist.Load64(rec)
		if h == 0 || uint32(h>>32) != gen {
			break // the end of this generation, or an older one
		}
		if int(h&0xffff) != a.rec {
			return fmt.Errorf("%w: lane %d record at %d has length %d, want %d", ErrCorrupt, l, *pos, h&0xffff, a.rec)
		}
		if popcount(rec[8:]) != int(h>>16&0xffff) {
			break // torn: the update it logs never started in place
		}
		idx := binary.LittleEndian.Uint64(rec[8:])
		if idx >= uint64(a.count) || int(idx%uint64(len(a.lanes))) != l {
			return fmt.Errorf("%w: lane %d record at %d names object %d (the array holds %d in %d lanes)",
				ErrCorrupt, l, *pos, idx, a.count, len(a.lanes))
		}
		// Redo only what is not in place already (most records were
		// applied before the crash): no needless write-back.
		o := a.first + int(idx)*a.ostride
		if !bytes.Equal(mem[o:o+a.size], rec[16:16+a.size]) {
			if a.ro {
				return fmt.Errorf("%w: lane %d record at %d redoes an unfinished update of object %d",
					ErrReadOnly, l, *pos, idx)
			}
			if err := a.r.Copy(mem[o:o+a.size], rec[16:16+a.size], persist.NoDrain); err != nil {
				return err
			}
			a.replayed++
		}
		*end = *pos + a.rec
	}
	if *end == 0 {
		*end = laneHead
	}
	a.lanes[l].gen, a.lanes[l].pos = gen, *end
	return nil
}

func zero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// reset empties lane l: the next generation is made durable (every record
// of the lane is now stale), then the records are zeroed, as the popcount
// check needs.
func (a *LogArray) reset(mem []byte, l int) error {
	ln := &a.lanes[l]
	gen := ln.gen + 1
	if gen == 0 {
		gen = 1
	}
	lo := a.laneOff(l)
	persist.Store64(mem[lo:], uint64(gen))
	if err := a.r.Persist(mem[lo : lo+8]); err != nil {
		return err
	}
	if err := a.r.Set(mem[lo+laneHead:lo+a.laneBytes], 0, 0); err != nil {
		return err
	}
	ln.gen, ln.pos = gen, laneHead
	return nil
}

// popcount counts the one bits of b (len(b) a multiple of 4).
func popcount(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) >= 4 {
		n += bits.OnesCount32(binary.LittleEndian.Uint32(b))
	}
	return n
}

// Len returns the number of objects.
func (a *LogArray) Len() int { return a.count }

// Size returns the object size in bytes.
func (a *LogArray) Size() int { return a.size }

// Replayed returns how many redo records OpenLog had to apply: valid
// records whose bytes were not (all) in place. Records already applied
// before the crash are skipped, so a second OpenLog replays nothing.
func (a *LogArray) Replayed() int { return a.replayed }

// Update makes val (exactly Size() bytes) the value of object i, durable
// when Update returns nil: the redo record is appended and fenced, then the
// bytes are written in place and fenced. If a crash interrupts it, OpenLog
// finds the object at its old or its new value, never a mix.
func (a *LogArray) Update(i int, val []byte) error {
	if err := a.r.Failed(); err != nil {
		return err // no record the region could not make durable
	}
	return guard(a.r, func() error { return a.update(i, val) })
}

func (a *LogArray) update(i int, val []byte) error {
	if a.closed.Load() {
		return ErrClosed
	}
	if uint(i) >= uint(a.count) {
		return errIndex(i, a.count)
	}
	if len(val) != a.size {
		return errLen("value", len(val), a.size)
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	if a.ro {
		return ErrReadOnly
	}
	l := i % len(a.lanes)
	ln := &a.lanes[l]
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.media != nil {
		return ln.media
	}
	if ln.pos+a.rec > a.laneBytes {
		if err := a.reset(mem, l); err != nil {
			return err
		}
	}
	lo := a.laneOff(l) + ln.pos
	rec := mem[lo : lo+a.rec]
	binary.LittleEndian.PutUint64(rec[8:], uint64(i))
	copy(rec[16:], val)
	pop := bits.OnesCount64(uint64(i)) + popcount(val)
	persist.Store64(rec, uint64(a.rec)|uint64(pop)<<16|uint64(ln.gen)<<32)
	if invariants.Enabled && popcount(rec[8:]) != pop {
		panic(fmt.Sprintf("fam: invariant: redo record at %d has popcount %d, header says %d (log space not zeroed?)", lo, popcount(rec[8:]), pop))
	}
	if err := a.r.Persist(rec); err != nil {
		return err
	}
	ln.pos += a.rec
	o := a.first + i*a.ostride
	if err := a.r.Copy(mem[o:o+a.size], val, 0); err != nil {
		return err
	}
	return nil
}

// Read copies the value of object i into dst (exactly Size() bytes). On
// poisoned media it is a *persist.MediaError and dst is zeroed.
func (a *LogArray) Read(i int, dst []byte) error {
	err := guard(a.r, func() error { return a.read(i, dst) })
	if err != nil && len(dst) == a.size && errors.Is(err, persist.ErrMedia) {
		clear(dst)
	}
	return err
}

func (a *LogArray) read(i int, dst []byte) error {
	if a.closed.Load() {
		return ErrClosed
	}
	if uint(i) >= uint(a.count) {
		return errIndex(i, a.count)
	}
	if len(dst) != a.size {
		return errLen("buffer", len(dst), a.size)
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	if err := a.lanes[i%len(a.lanes)].media; err != nil {
		// Its lane could not be replayed: an update a crash interrupted
		// in place may have left this object torn, with no record to
		// tell. Nothing unvouched for is returned as data.
		return err
	}
	o := a.first + i*a.ostride
	copy(dst, mem[o:o+a.size])
	return nil
}

// Check verifies what the lanes hold: each lane's generation word, every
// record before its append position (length, popcount, generation, an
// object of its lane), zeros after it (in a writable region: a read-only
// OpenLog leaves lanes it would reset as they are), and that each object
// whose latest record is still in its lane holds that record's bytes in
// place. It returns the first violation, wrapping ErrCorrupt. Like Read,
// it must not run concurrently with an Update. A lane or an object on
// poisoned media is a *persist.MediaError.
func (a *LogArray) Check() error { return guard(a.r, a.check) }

func (a *LogArray) check() error {
	if a.closed.Load() {
		return ErrClosed
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	for l := range a.lanes {
		if a.lanes[l].media != nil {
			return a.lanes[l].media
		}
		if err := a.checkLane(mem, l); err != nil {
			return err
		}
	}
	return nil
}

func (a *LogArray) checkLane(mem []byte, l int) error {
	ln := &a.lanes[l]
	lo := a.laneOff(l)
	if gw := persist.Load64(mem[lo:]); gw != uint64(ln.gen) {
		return fmt.Errorf("%w: lane %d has generation word %#x, the open array is at generation %d", ErrCorrupt, l, gw, ln.gen)
	}
	latest := map[int]int{} // object -> offset of its latest record
	for pos := laneHead; pos < ln.pos; pos += a.rec {
		rec := mem[lo+pos : lo+pos+a.rec]
		h := persist.Load64(rec)
		idx := binary.LittleEndian.Uint64(rec[8:])
		switch {
		case int(h&0xffff) != a.rec || uint32(h>>32) != ln.gen || popcount(rec[8:]) != int(h>>16&0xffff):
			return fmt.Errorf("%w: lane %d record at %d has header %#016x (length %d, generation %d, popcount %d of %d bits)",
				ErrCorrupt, l, pos, h, a.rec, ln.gen, h>>16&0xffff, popcount(rec[8:]))
		case idx >= uint64(a.count) || int(idx%uint64(len(a.lanes))) != l:
			return fmt.Errorf("%w: lane %d record at %d names object %d (the array holds %d in %d lanes)",
				ErrCorrupt, l, pos, idx, a.count, len(a.lanes))
		}
		latest[int(idx)] = lo + pos
	}
	if !a.ro && !zero(mem[lo+ln.pos:lo+a.laneBytes]) {
		return fmt.Errorf("%w: lane %d is not zero after its last record (at %d)", ErrCorrupt, l, ln.pos)
	}
	for i, r := range latest {
		o := a.first + i*a.ostride
		if !bytes.Equal(mem[o:o+a.size], mem[r+16:r+16+a.size]) {
			return fmt.Errorf("%w: object %d differs from its latest redo record (lane %d at %d)", ErrCorrupt, i, l, r-lo)
		}
	}
	return nil
}
