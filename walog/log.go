package walog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
)

// A Log is an append-only log of small entries in an area of a
// persist.Region. Its methods may be called from many goroutines at once:
// Append, AppendBatch, Reset, Truncate and Close are serialized by the
// log's lock, and the log's order is the order in which they took it.
//
// The log keeps the region's Bytes() for its lifetime: close the log
// before its region, and do not grow the region while the log is open.
// (Operations on a log whose region was closed or remapped return an
// error wrapping persist.ErrClosed or ErrInvalid, but only when the region
// is not closed while they run: Region.Close must not run concurrently
// with anything else on the region.)
type Log struct {
	mu sync.Mutex

	r       *persist.Region
	mem     []byte
	format  Format
	variant variant

	base, start, end int // header, first entry, end of the area (region offsets)
	alignMask        int
	maxEntry         int
	maxBatch         int
	noChecksum       bool
	chunk            int
	wrap             bool
	checkpoint       func(*Log) error

	pass  uint64 // from the header
	v     uint64 // RAWL validity sense: pass&1
	clean byte   // fill byte of free space: 0, or 0xff for RAWL when v is 0
	gap   byte   // fill byte of alignment gaps: 0, or for RAWL ^clean
	hi    int    // prepared end (region offset): every byte written lies below it
	floor uint64 // entries with a smaller sequence number are discarded

	dirtyFrom, dirtyTo int // the header's dirty range (region offsets; 0: none)

	tail        int    // where the next entry goes
	count       int    // entries in the log
	first, last uint64 // their first and last sequence numbers
	next        uint64 // next sequence number of a standalone log

	set    *Set // nil for a standalone log
	member int

	stage    []byte // see emit.go
	eLo, eN  int
	lastLine int

	epoch   uint64 // changes on Reset and Truncate (iterators check it)
	wraps   int
	closed  bool
	release func() // of the area's claim on the region
	err     error  // a write failed: the log refuses further writes
	report  Report
}

// Stats describes a log at one moment.
type Stats struct {
	Format   Format
	Entries  int    // entries in the log
	FirstSeq uint64 // sequence number of the first entry (0 when empty)
	NextSeq  uint64 // sequence number the next Append gets
	Used     int    // bytes from the first entry to the tail
	Capacity int    // bytes for entries (the area minus the header)
	MaxEntry int
	Align    int
	MaxBatch int
	Checksum bool   // entries carry a CRC-32C (not Options.NoChecksum)
	Pass     uint64 // passes over the log (RAWL's sense flips)
	Wraps    int    // times the log wrapped since Create or Open
}

// errEnd is what the decoders return at clean bytes: the end of the log.
var errEnd = errors.New("walog: end of log")

// Create formats a new, empty log in the area Options.Offset/Size of r
// (by default the whole region) and returns it open. Whatever the area
// held is discarded: the header is invalidated first, so a crash during
// Create leaves either no log (Open returns ErrNoLog) or the new empty log.
// PopLog and Classic zero the first Options.Chunk bytes; RAWL zeroes the
// whole area once. A closed or read-only region is an error wrapping
// persist.ErrClosed or persist.ErrReadOnly; an area that an open log or
// other structure has claimed on r (persist.Region.Claim), one wrapping
// persist.ErrBusy: Create, like Open, claims the area until Close.
func Create(r *persist.Region, opts *Options) (*Log, error) {
	o := opts
	if o == nil {
		o = &Options{}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	g, err := createGeometry(r, o, o.Offset, o.Size)
	if err != nil {
		return nil, err
	}
	return create(r, o, header{geometry: g})
}

func create(r *persist.Region, o *Options, h header) (l *Log, err error) {
	h.pass, h.floor, h.hi = 1, 1, HeaderSize
	l = newLog(r, o, h)
	if err := l.claim(); err != nil {
		return nil, err
	}
	defer l.releaseOnError(&err)
	if persist.Load64(l.mem[l.base:]) != 0 {
		if err := l.storeRaw(0, 0); err != nil {
			return nil, err
		}
	}
	prep := l.start + l.chunk
	if l.format == RAWL {
		prep = l.end
	}
	// Zeroes (only where the area is not zero already), header, and the
	// magic last, alone.
	if err := l.zeroAhead(l.start, prep); err != nil {
		return nil, err
	}
	l.hi = min(l.start+l.chunk, l.end)
	h.hi = l.hi - l.base
	var b [HeaderSize]byte
	h.encode(b[:])
	if err := r.Copy(l.mem[l.base+8:l.base+HeaderSize], b[8:], 0); err != nil {
		return nil, err
	}
	if err := l.storeRaw(0, magic); err != nil {
		return nil, err
	}
	l.loadMirror(l.tail)
	l.report = Report{Format: l.format, Member: -1, Tail: l.tail, NextSeq: l.nextSeq()}
	if h.setCount > 0 {
		l.report.Member, l.report.Members = int(h.setIndex), int(h.setCount)
	}
	return l, nil
}

// Open opens the log at Options.Offset of r and recovers it: it finds the
// valid entries, completes a Reset a crash interrupted, and makes clean
// (zero, or invalid for RAWL) every byte past the last valid entry that a
// crashed append may have written, so that a later append torn by another
// crash cannot be completed by stale bytes. Report says what it found.
//
// A region whose header is not a walog header is ErrBadFormat (ErrNoLog
// when empty); a header that fails its checksums or holds impossible
// fields is ErrCorrupt. An append torn by a crash is not an error: it ends
// the log, and Report().Stop describes it. Damage a crash cannot cause —
// an entry whose bits were flipped in place, or data after the end of the
// log beyond what the append a crash interrupted could have written — is
// ErrCorrupt, and Open writes nothing; Options.Salvage opens such a log
// anyway, cut before the damage (see recover.go for the rule).
//
// On a read-only region Open succeeds when recovery has nothing to write
// (the log was closed cleanly): the log can be read, and every write
// returns an error wrapping persist.ErrReadOnly. When recovery must write,
// Open fails with that error.
func Open(r *persist.Region, opts *Options) (*Log, error) {
	o := opts
	if o == nil {
		o = &Options{}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := checkRegion(r); err != nil {
		return nil, err
	}
	h, err := readHeader(r, o.Offset)
	if err != nil {
		return nil, err
	}
	if h.setCount != 0 {
		return nil, fmt.Errorf("%w: the log at offset %d is member %d of a set of %d: open it with OpenSet", ErrBadFormat, h.base, h.setIndex, h.setCount)
	}
	if err := h.match(o); err != nil {
		return nil, err
	}
	l := newLog(r, o, h)
	if err := l.claim(); err != nil {
		return nil, err
	}
	if err := l.recover(0, o.Salvage); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// claim claims the log's area on its region (persist.Region.Claim): a
// second Log, Set member or other structure opened on the same bytes
// while this one is open is an error wrapping persist.ErrBusy, instead of
// two writers overwriting each other's acknowledged entries.
func (l *Log) claim() error {
	rel, err := l.r.Claim(l.base, l.end-l.base, fmt.Sprintf("walog %s log", l.format))
	if err != nil {
		return fmt.Errorf("walog: %w", err)
	}
	l.release = rel
	return nil
}

func (l *Log) releaseOnError(err *error) {
	if *err != nil {
		l.release()
	}
}

func newLog(r *persist.Region, o *Options, h header) *Log {
	l := &Log{
		r: r, mem: r.Bytes(), format: h.format, variant: o.variant,
		base: h.base, start: h.start(), end: h.end(),
		alignMask: h.align - 1, maxEntry: h.maxEntry,
		maxBatch: h.maxBatch, noChecksum: h.noChecksum,
		chunk: chunkSize(o, h.size-HeaderSize),
		wrap:  o.Wrap, checkpoint: o.Checkpoint,
		hi: h.base + h.hi, floor: h.floor, next: h.floor,
	}
	l.tail = l.start
	if h.dirtyFrom != 0 {
		l.dirtyFrom = h.base + h.dirtyFrom
	}
	if h.dirtyTo != 0 {
		l.dirtyTo = h.base + h.dirtyTo
	}
	l.setPass(h.pass)
	return l
}

func (l *Log) setPass(p uint64) {
	l.pass = p
	if l.format == RAWL {
		l.v = p & 1
		l.clean = byte(0xff * (1 - l.v))
		l.gap = ^l.clean
	}
}

// cleanWord is an 8-byte word of free space.
func (l *Log) cleanWord() uint64 { return uint64(l.clean) * 0x0101010101010101 }

func (l *Log) alignUp(x int) int { return (x + l.alignMask) &^ l.alignMask }

// Append adds p (1 to MaxEntry bytes) to the log and returns its sequence
// number. When Append returns nil, the entry is durable: recovery returns
// it, and every entry appended before it. The log copies p; the caller may
// reuse it.
func (l *Log) Append(p []byte) (uint64, error) {
	if len(p) == 0 || len(p) > l.maxEntry {
		return 0, l.checkEntry(p)
	}
	l.mu.Lock()
	seq, err := l.append1(p)
	l.mu.Unlock()
	return seq, err
}

func (l *Log) append1(p []byte) (seq uint64, err error) {
	if err = l.usable(); err != nil {
		return 0, err
	}
	fp := l.format.footprint(len(p))
	if l.tail+fp > l.hi {
		if err := l.makeRoom(fp); err != nil {
			return 0, err
		}
	}
	if l.set == nil && l.next < maxSeq {
		seq = l.next // takeSeqs(1), inline
		l.next++
	} else if seq, err = l.takeSeqs(1); err != nil {
		return 0, err
	}
	if l.stage == nil {
		l.allocStage()
	}
	off := l.tail
	t := l.alignUp(off + fp)
	switch l.format {
	case PopLog:
		if err = l.writePop(seq, p, false); err == nil {
			err = l.flushStage(t, true)
		}
	case RAWL:
		if err = l.writeRAWL(seq, p, false); err == nil {
			err = l.flushStage(t, true)
		}
	case Classic:
		var w0 uint64
		if w0, err = l.writeClassic(seq, p, false); err == nil {
			err = l.flushStage(t, true)
		}
		if err == nil {
			l.stageCommit(off+fp-8, w0)
			err = l.commitLastLine()
		}
	}
	if err != nil {
		return 0, l.fail(err)
	}
	l.appended(off, t, seq, 1)
	if invariants.Enabled {
		l.checkEntryAt(off, seq, p)
	}
	return seq, nil
}

// AppendBatch adds the entries in order with one barrier (two for
// Classic) and returns the sequence number of the first; the others follow
// it one by one. When it returns nil every entry is durable. After a crash
// during AppendBatch, recovery returns a prefix of the batch (possibly
// empty) after the entries appended before it. Each entry must be 1 to
// MaxEntry bytes, and the batch must occupy at most MaxBatch bytes of the
// log (ErrTooLarge); otherwise nothing is appended. An empty batch is
// ErrEmpty.
func (l *Log) AppendBatch(entries [][]byte) (uint64, error) {
	if len(entries) == 0 {
		return 0, fmt.Errorf("%w: empty batch", ErrEmpty)
	}
	need := 0
	for i, p := range entries {
		if err := l.checkEntry(p); err != nil {
			return 0, fmt.Errorf("batch entry %d: %w", i, err)
		}
		if i > 0 {
			need = l.alignUp(need)
		}
		need += l.format.footprint(len(p))
		if need > l.maxBatch {
			return 0, fmt.Errorf("%w: a batch of %d entries needs more than the log's MaxBatch of %d bytes", ErrTooLarge, len(entries), l.maxBatch)
		}
	}
	l.mu.Lock()
	seq, err := l.appendBatch(entries, need)
	l.mu.Unlock()
	return seq, err
}

func (l *Log) appendBatch(entries [][]byte, need int) (uint64, error) {
	if err := l.usable(); err != nil {
		return 0, err
	}
	if l.tail+need > l.hi {
		if err := l.makeRoom(need); err != nil {
			return 0, err
		}
	}
	seq0, err := l.takeSeqs(len(entries))
	if err != nil {
		return 0, err
	}
	if l.stage == nil {
		l.allocStage()
	}
	off0 := l.tail
	off := off0
	last := len(entries) - 1
	for i, p := range entries {
		if err = l.skipTo(off); err != nil {
			break
		}
		seq := seq0 + uint64(i)
		switch l.format {
		case PopLog:
			err = l.writePop(seq, p, i < last)
		case RAWL:
			err = l.writeRAWL(seq, p, i < last)
		case Classic:
			_, err = l.writeClassic(seq, p, i < last)
		}
		if err != nil {
			break
		}
		off = l.alignUp(off + l.format.footprint(len(p)))
	}
	end := off0 + need
	t := l.alignUp(end)
	switch {
	case err != nil:
	case l.format == Classic && l.eLo+l.eN == end && l.eLo <= off0:
		// The whole batch is still in the stage: write it (barrier 1),
		// put the commit words into the staged copy and stream it again
		// (barrier 2). Rewriting lines with what they hold changes
		// nothing; streaming them beats a store and a flush per commit
		// word into lines the first write evicted.
		var m int
		if m, err = l.writeStage(t, true); err != nil {
			break
		}
		pos := off0
		for _, p := range entries {
			fp := l.format.footprint(len(p))
			w0 := binary.LittleEndian.Uint64(l.stage[pos-l.eLo:])
			binary.LittleEndian.PutUint64(l.stage[pos+fp-8-l.eLo:], classicCommit(w0))
			pos = l.alignUp(pos + fp)
		}
		if err = l.r.Copy(l.mem[l.eLo:l.eLo+m], l.stage[:m], persist.NonTemporal); err == nil {
			l.keepLast(end, t)
		}
	default:
		err = l.flushStage(t, true)
		if err == nil && l.format == Classic {
			// A batch longer than the stage: the commit words in the last
			// line go into the staged copy of that line, the others are
			// stored and flushed; one fence for all. Each commit word
			// repeats its entry's first word, durable since barrier 1.
			pos := off0
			for _, p := range entries {
				fp := l.format.footprint(len(p))
				c := pos + fp - 8
				w0 := binary.LittleEndian.Uint64(l.mem[pos:])
				if c >= l.lastLine {
					l.stageCommit(c, w0)
				} else {
					persist.Store64(l.mem[c:], classicCommit(w0))
					if err = l.r.Flush(l.mem[c : c+8]); err != nil {
						break
					}
				}
				pos = l.alignUp(pos + fp)
			}
			if err == nil {
				err = l.commitLastLine()
			}
		}
	}
	if err != nil {
		return 0, l.fail(err)
	}
	l.appended(off0, t, seq0, len(entries))
	if invariants.Enabled {
		pos := off0
		for i, p := range entries {
			l.checkEntryAt(pos, seq0+uint64(i), p)
			pos = l.alignUp(pos + l.format.footprint(len(p)))
		}
	}
	return seq0, nil
}

// stageCommit puts the commit word of the Classic entry whose first word
// is w0 into the staged last line.
func (l *Log) stageCommit(at int, w0 uint64) {
	binary.LittleEndian.PutUint64(l.stage[at-l.lastLine:], classicCommit(w0))
}

// commitLastLine streams the staged last line (with its commit words) and
// fences: Classic's second barrier.
func (l *Log) commitLastLine() error {
	return l.r.Copy(l.mem[l.lastLine:l.lastLine+64], l.stage[:64], persist.NonTemporal)
}

func (l *Log) appended(off, t int, seq uint64, k int) {
	l.tail = t
	if l.count == 0 {
		l.first = seq
	}
	l.count += k
	l.last = seq + uint64(k) - 1
}

func (l *Log) checkEntry(p []byte) error {
	switch {
	case len(p) == 0:
		return fmt.Errorf("%w (entries are 1 to %d bytes)", ErrEmpty, l.maxEntry)
	case len(p) > l.maxEntry:
		return fmt.Errorf("%w: %d bytes, the log's MaxEntry is %d", ErrTooLarge, len(p), l.maxEntry)
	}
	return nil
}

// usable returns the reason the log cannot be written, or nil: in the
// common case after a few loads, without calls.
func (l *Log) usable() error {
	if l.closed || l.err != nil || l.r.Writable() != nil || unsafe.SliceData(l.r.Bytes()) != unsafe.SliceData(l.mem) {
		return l.unusable()
	}
	return nil
}

func (l *Log) unusable() error {
	switch {
	case l.closed:
		return ErrClosed
	case l.err != nil:
		return l.err
	}
	return l.regionOK(l.r.Writable())
}

// regionOK checks the region under the log: err is what Writable or
// Readable said.
func (l *Log) regionOK(err error) error {
	if err != nil {
		return fmt.Errorf("walog: the log's region: %w", err)
	}
	if unsafe.SliceData(l.r.Bytes()) != unsafe.SliceData(l.mem) {
		return fmt.Errorf("%w: the log's region was grown or remapped under it: open the log again", ErrInvalid)
	}
	return nil
}

// fail makes a write error sticky: after a failed write the stage and the
// media may disagree, so the log refuses further writes (Open it again).
func (l *Log) fail(err error) error {
	if l.err == nil {
		l.err = fmt.Errorf("walog: log unusable after a failed write (open it again): %w", err)
	}
	return err
}

// takeSeqs hands out k consecutive sequence numbers.
func (l *Log) takeSeqs(k int) (uint64, error) {
	var s uint64
	if l.set != nil {
		s = l.set.next.Add(uint64(k)) - uint64(k)
	} else {
		s = l.next
	}
	if s+uint64(k) > maxSeq {
		return 0, fmt.Errorf("%w: the log has used up its sequence numbers (%d)", ErrFull, uint64(maxSeq))
	}
	if l.set == nil {
		l.next += uint64(k)
	}
	return s, nil
}

// nextSeq is the sequence number the next append would get.
func (l *Log) nextSeq() uint64 {
	if l.set != nil {
		return l.set.next.Load()
	}
	return l.next
}

// makeRoom finds space for need bytes at the tail: it prepares more of the
// log, or wraps it, or fails with ErrFull.
func (l *Log) makeRoom(need int) error {
	if l.tail+need > l.end {
		if need > l.end-l.start {
			return fmt.Errorf("%w: a batch of %d bytes does not fit in the log's %d", ErrTooLarge, need, l.end-l.start)
		}
		if !l.wrap {
			return fmt.Errorf("%w: %d bytes needed, %d left of %d (%d entries)", ErrFull, need, l.end-l.tail, l.end-l.start, l.count)
		}
		if l.checkpoint != nil {
			if err := l.checkpoint(l); err != nil {
				return fmt.Errorf("walog: checkpoint before wrapping the log: %w", err)
			}
		}
		if err := l.reset(); err != nil {
			return l.fail(err)
		}
		l.wraps++
	}
	if l.tail+need > l.hi {
		if err := l.advance(l.tail + need); err != nil {
			return l.fail(err)
		}
	}
	return nil
}

// advance moves the prepared end past to, by at least a chunk. PopLog and
// Classic zero the new part first, in its own barrier: recovery scans up
// to the prepared end, and stale entries there (of an earlier pass) must
// be gone before the scan can reach them.
func (l *Log) advance(to int) error {
	hi := min(l.end, (max(to, l.hi+l.chunk)+HeaderSize-1)&^(HeaderSize-1))
	if l.format.zeroed() {
		if err := l.zeroAhead(l.hi, hi); err != nil {
			return err
		}
	}
	if err := l.storeWord(offHi, uint64(hi-l.base)); err != nil {
		return err
	}
	l.hi = hi
	return nil
}

// storeWord writes one changing word of the header, a checked word, with a
// failure-atomic store and persists it.
func (l *Log) storeWord(off int, v uint64) error {
	return l.storeRaw(off, checkedWord(v))
}

// storeRaw writes the header word at off with a failure-atomic store and
// persists it.
func (l *Log) storeRaw(off int, w uint64) error {
	b := l.mem[l.base+off : l.base+off+8]
	persist.Store64(b, w)
	return l.r.Persist(b)
}

// Reset discards every entry. When it returns nil the log is empty and
// stays empty after a crash; a crash during Reset leaves the log either
// whole or empty. Sequence numbers go on from where they were. PopLog and
// Classic zero one chunk; RAWL either invalidates the used part or, when
// the rest of the pass is shorter, fills it and flips the validity sense.
func (l *Log) Reset() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if err := l.reset(); err != nil {
		return l.fail(err)
	}
	return nil
}

// reset commits the discard by raising the floor above every entry (one
// 8-byte store), then cleans up; recovery redoes the cleanup when it finds
// entries below the floor.
func (l *Log) reset() error {
	if l.count == 0 {
		l.epoch++
		return nil
	}
	floor := l.nextSeq()
	if err := l.storeWord(offFloor, floor); err != nil {
		return err
	}
	l.floor = floor
	return l.cleanup(l.tail)
}

// cleanup empties a log whose entries are all below the floor. What it
// leaves half done at a crash lies in the dirty range it records first
// (the used part of the log), so that Open takes it for leftovers, not
// for damage. For RAWL, every word below from must carry the current
// validity bit when it flips the sense: true of the log's own entries and
// gaps below the tail; recovery, which cannot vouch for what it found,
// passes the start of the log, and every block is checked.
func (l *Log) cleanup(from int) error {
	if err := l.setDirty(l.start, max(l.hi, l.tail)); err != nil {
		return err
	}
	switch {
	case l.format.zeroed():
		// Zero the first chunk, then lower the prepared end to it: the
		// old entries beyond it are out of reach of recovery, which never
		// reads past the prepared end.
		z := l.start + l.chunk
		if err := l.zeroAhead(l.start, z); err != nil {
			return err
		}
		if err := l.storeWord(offHi, uint64(z-l.base)); err != nil {
			return err
		}
		l.hi = z
	case l.end-l.tail <= l.hi-l.start:
		// Fill the rest of the pass with words valid in it, fence, then
		// flip the sense: every word of the log is now invalid for the new
		// pass. The fence first: a flip that reached the media before the
		// fill would leave words of the pass before valid again. Then, in
		// a barrier of its own, lower the prepared end: lowered in the old
		// pass, it would leave valid-looking words beyond it.
		if _, err := l.rewrite(min(from, l.tail), l.end, ^l.clean, l.isValidSense); err != nil {
			return err
		}
		if err := l.storeWord(offPass, l.pass+1); err != nil {
			return err
		}
		l.setPass(l.pass + 1)
		if err := l.storeWord(offHi, HeaderSize); err != nil {
			return err
		}
		l.hi = l.start
	default:
		// Invalidate the used part instead; the pass goes on.
		if _, err := l.scrub(l.start, l.hi); err != nil {
			return err
		}
	}
	if err := l.clearDirty(); err != nil {
		return err
	}
	l.tail, l.count = l.start, 0
	l.loadMirror(l.start)
	l.epoch++
	return nil
}

// Truncate discards the entries with sequence numbers seq and above,
// keeping those before; the next Append of a standalone log gets the
// first discarded number. When it returns nil the entries are gone for
// good; a crash during Truncate leaves them all or none of them. An entry
// that no longer passes its check (damage since Open) is an error
// wrapping ErrCorrupt.
func (l *Log) Truncate(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if l.count == 0 || seq > l.last {
		return nil
	}
	off, kept := l.start, 0
	var cut, prev uint64
	for off < l.tail {
		e, err := l.decode(off, l.tail)
		if err != nil {
			return fmt.Errorf("walog: truncate: entry %d of the log no longer passes its check: %w", kept, err)
		}
		if e.seq >= seq {
			cut = e.seq
			break
		}
		prev = e.seq
		off = l.alignUp(off + e.fp)
		kept++
	}
	// Record the discarded bytes as the dirty range, then the commit: one
	// clean word where the first discarded entry starts ends the log
	// there. Then the rest of the discarded bytes go clean.
	if err := l.setDirty(off, l.tail); err != nil {
		return l.fail(err)
	}
	persist.Store64(l.mem[off:], l.cleanWord())
	if err := l.r.Persist(l.mem[off : off+8]); err != nil {
		return l.fail(err)
	}
	if _, err := l.scrub(off+8, l.tail); err != nil {
		return l.fail(err)
	}
	if err := l.clearDirty(); err != nil {
		return l.fail(err)
	}
	l.tail, l.count, l.last = off, kept, prev
	if l.set == nil {
		l.next = cut
	}
	l.loadMirror(off)
	l.epoch++
	return nil
}

// Close closes the log and releases its area's claim on the region; the
// region stays open (close the log first, then the region). Everything
// appended is durable already, and Close writes nothing. A second Close
// returns ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.closed = true
	l.release()
	return nil
}

// Format returns the log's format.
func (l *Log) Format() Format { return l.format }

// MaxEntry returns the longest entry the log takes, in bytes.
func (l *Log) MaxEntry() int { return l.maxEntry }

// Member returns the log's index in its Set, or -1 for a standalone log.
func (l *Log) Member() int {
	if l.set == nil {
		return -1
	}
	return l.member
}

// Report returns what Open found (for a log from Create: an empty report).
func (l *Log) Report() Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.report
}

// Stats describes the log now.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{
		Format: l.format, Entries: l.count, NextSeq: l.nextSeq(),
		Used: l.tail - l.start, Capacity: l.end - l.start,
		MaxEntry: l.maxEntry, Align: l.alignMask + 1, MaxBatch: l.maxBatch,
		Checksum: !l.noChecksum, Pass: l.pass, Wraps: l.wraps,
	}
	if l.count > 0 {
		s.FirstSeq = l.first
	}
	return s
}

func (l *Log) String() string {
	s := l.Stats()
	return fmt.Sprintf("walog %s at offset %d: %d entries, %d of %d bytes used, next seq %d", s.Format, l.base, s.Entries, s.Used, s.Capacity, s.NextSeq)
}
