package walog

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/braid-pm/braid/persist"
)

// A Set is N logs that share one sequence of sequence numbers, for appends
// that scale with goroutines: give each goroutine (or each worker) its own
// member, s.Log(i), and its appends never wait for another's lock or
// barrier. Members live in separate regions (one per device, say) or in
// slices of one region (Split).
//
// Every append to any member takes its sequence number from one atomic
// counter while it holds its member's lock, so numbers grow along each
// member, and an append that returned before another began has the smaller
// number: the sequence numbers order the set's entries consistently with
// real time. Recovery (OpenSet) returns every entry whose append returned,
// merged by sequence number (SetIter); an entry that was in flight in one
// member may be missing while a later-numbered entry of another member is
// present, so the recovered numbers may have gaps, at in-flight entries
// only.
type Set struct {
	next atomic.Uint64
	_    [56]byte // keep the hot counter on its own cache line

	mu     sync.Mutex // Reset and Close
	logs   []*Log
	closed bool
}

// Part is where one member of a set lives: Size bytes at Offset of Region
// (Size 0: the rest of the region for CreateSet, the size in the header
// for OpenSet).
type Part struct {
	Region *persist.Region
	Offset int
	Size   int
}

// Split cuts r into n equal parts for a set, each a multiple of 256 bytes.
func Split(r *persist.Region, n int) ([]Part, error) {
	if r == nil || n < 1 {
		return nil, fmt.Errorf("%w: split a region into %d parts", ErrInvalid, n)
	}
	if err := r.Readable(); err != nil {
		return nil, regionErr(err, "split")
	}
	size := r.Size() / n &^ (BlockSize - 1)
	if size < MinSize {
		return nil, fmt.Errorf("%w: %d parts of a %d-byte region are smaller than a log's minimum %d", ErrInvalid, n, r.Size(), MinSize)
	}
	parts := make([]Part, n)
	for i := range parts {
		parts[i] = Part{Region: r, Offset: i * size, Size: size}
	}
	return parts, nil
}

// maxMembers bounds the members of a set.
const maxMembers = 1 << 16

// CreateSet formats a new, empty set with one log per part, all with the
// options' format and geometry (Options.Offset and Size are ignored).
// CreateSet is not atomic: after a crash during it, OpenSet fails (with
// ErrNoLog or ErrBadFormat) until the set is created again.
func CreateSet(parts []Part, opts *Options) (*Set, error) {
	o, err := setOptions(parts, opts)
	if err != nil {
		return nil, err
	}
	gs := make([]geometry, len(parts))
	for i, p := range parts {
		if gs[i], err = createGeometry(p.Region, o, p.Offset, p.Size); err != nil {
			return nil, memberErr(i, err)
		}
		if p.Offset%BlockSize != 0 || p.Offset < 0 {
			return nil, fmt.Errorf("%w: set member %d: Offset %d is not a multiple of %d", ErrInvalid, i, p.Offset, BlockSize)
		}
		for j := range i {
			if parts[j].Region == p.Region && gs[j].base < gs[i].end() && gs[i].base < gs[j].end() {
				return nil, fmt.Errorf("%w: set members %d and %d overlap", ErrInvalid, j, i)
			}
		}
	}
	var id uint64
	for id == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("walog: set id: %w", err)
		}
		id = binary.LittleEndian.Uint64(b[:])
	}
	s := &Set{logs: make([]*Log, len(parts))}
	s.next.Store(1)
	for i, p := range parts {
		h := header{geometry: gs[i], setID: id, setIndex: uint32(i), setCount: uint32(len(parts))}
		var l *Log
		err := guard(func() (err error) {
			l, err = create(p.Region, o, h)
			return err
		}, p.Region)
		if err != nil {
			err = unreadable(err, "create of a log at offset %d", gs[i].base)
			s.release()
			return nil, memberErr(i, err)
		}
		l.set, l.member = s, i
		s.logs[i] = l
	}
	return s, nil
}

// OpenSet opens and recovers the set whose members are at parts, in the
// order CreateSet was given them. Each member recovers as Open does (a
// corrupt member fails OpenSet with ErrCorrupt, unless Options.Salvage);
// a Set.Reset a crash interrupted is completed in every member.
func OpenSet(parts []Part, opts *Options) (*Set, error) {
	o, err := setOptions(parts, opts)
	if err != nil {
		return nil, err
	}
	hs := make([]header, len(parts))
	fromCopy := make([]string, len(parts))
	for i, p := range parts {
		h, fc, err := readHeaderGuarded(p.Region, p.Offset, p.Size)
		fromCopy[i] = fc
		if err != nil {
			return nil, memberErr(i, err)
		}
		switch {
		case h.setCount == 0:
			return nil, fmt.Errorf("%w: set member %d: the log at offset %d is a standalone log: open it with Open", ErrBadFormat, i, p.Offset)
		case int(h.setCount) != len(parts) || int(h.setIndex) != i:
			return nil, fmt.Errorf("%w: set member %d: the log at offset %d is member %d of a set of %d", ErrBadFormat, i, p.Offset, h.setIndex, h.setCount)
		case h.setID != hs[0].setID && i > 0:
			return nil, fmt.Errorf("%w: set member %d belongs to another set (id %#x, member 0 has %#x)", ErrBadFormat, i, h.setID, hs[0].setID)
		case i > 0 && h.format != hs[0].format:
			return nil, fmt.Errorf("%w: set member %d is %s, member 0 is %s", ErrBadFormat, i, h.format, hs[0].format)
		case p.Size != 0 && p.Size != h.size:
			return nil, fmt.Errorf("%w: set member %d is %d bytes, the part says %d", ErrBadFormat, i, h.size, p.Size)
		}
		if err := h.match(o); err != nil {
			return nil, memberErr(i, err)
		}
		hs[i] = h
	}
	s := &Set{logs: make([]*Log, len(parts))}
	next := max(uint64(1), hs[0].setFloor)
	for i, p := range parts {
		l := newLog(p.Region, o, hs[i])
		l.set, l.member = s, i
		if err := l.claim(); err != nil {
			s.release()
			return nil, memberErr(i, err)
		}
		s.logs[i] = l
		if err := l.recoverGuarded(hs[0].setFloor, o.Salvage, fromCopy[i]); err != nil {
			s.release()
			return nil, memberErr(i, err)
		}
		next = max(next, l.next)
	}
	s.next.Store(next)
	for _, l := range s.logs {
		l.rec.NextSeq = next
	}
	return s, nil
}

func setOptions(parts []Part, opts *Options) (*Options, error) {
	o := &Options{}
	if opts != nil {
		c := *opts
		o = &c
	}
	o.Offset, o.Size = 0, 0
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(parts) < 1 || len(parts) > maxMembers {
		return nil, fmt.Errorf("%w: a set of %d parts (want 1..%d)", ErrInvalid, len(parts), maxMembers)
	}
	for i, p := range parts {
		if err := checkRegion(p.Region); err != nil {
			return nil, memberErr(i, err)
		}
		if p.Size < 0 || p.Size%BlockSize != 0 {
			return nil, fmt.Errorf("%w: set member %d: Size %d is not a multiple of %d", ErrInvalid, i, p.Size, BlockSize)
		}
	}
	return o, nil
}

// Len returns the number of members.
func (s *Set) Len() int { return len(s.logs) }

// Log returns member i (0 <= i < Len()). Its Append and AppendBatch number
// entries from the set's counter; its Reset and Truncate act on that
// member alone; with Options.Wrap a full member wraps alone (after the
// checkpoint callback, which receives it).
func (s *Set) Log(i int) *Log { return s.logs[i] }

// NextSeq returns the sequence number the next append to any member gets.
func (s *Set) NextSeq() uint64 { return s.next.Load() }

// Recovery returns what OpenSet found in each member (Log.Recovery).
func (s *Set) Recovery() []Recovery {
	r := make([]Recovery, len(s.logs))
	for i, l := range s.logs {
		r[i] = l.Recovery()
	}
	return r
}

// Reset discards every entry of every member, atomically: one 8-byte
// store in member 0's header raises the set's floor above every entry,
// then each member is emptied (OpenSet finishes that after a crash).
// Appends to members wait while it runs.
func (s *Set) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for _, l := range s.logs {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	for _, l := range s.logs {
		if err := l.usable(); err != nil {
			return memberErr(l.member, err)
		}
	}
	l0 := s.logs[0]
	if err := l0.guardWrite(func() error { return l0.storeWord(offSetFloor, s.next.Load()) }); err != nil {
		return l0.fail(err)
	}
	l0.setFloor = s.next.Load()
	for _, l := range s.logs {
		if err := l.guardWrite(l.reset); err != nil {
			return memberErr(l.member, l.fail(err))
		}
	}
	return nil
}

// Close closes every member; the regions stay open (close the set first,
// then the regions).
// release releases the claims of the members created or opened so far (a
// CreateSet or OpenSet that fails).
func (s *Set) release() {
	for _, l := range s.logs {
		if l != nil {
			l.release()
		}
	}
}

func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	for _, l := range s.logs {
		l.Close()
	}
	return nil
}

// A SetIter walks the entries of every member of a set in sequence-number
// order (a merge of the members' iterators; see Iter for what it sees).
type SetIter struct {
	its     []*Iter
	live    []bool
	cur     int
	started bool
	err     error
}

// Iter returns an iterator over the whole set.
func (s *Set) Iter() *SetIter {
	it := &SetIter{its: make([]*Iter, len(s.logs)), live: make([]bool, len(s.logs)), cur: -1}
	for i, l := range s.logs {
		it.its[i] = l.Iter()
	}
	return it
}

// Next moves to the entry with the next sequence number.
func (it *SetIter) Next() bool {
	if it.err != nil {
		return false
	}
	if !it.started {
		it.started = true
		for i, m := range it.its {
			it.live[i] = m.Next()
		}
	} else if it.cur >= 0 {
		it.live[it.cur] = it.its[it.cur].Next()
	}
	it.cur = -1
	for i, m := range it.its {
		if err := m.Err(); err != nil {
			it.err = memberErr(i, err)
			return false
		}
		if it.live[i] && (it.cur < 0 || m.Seq() < it.its[it.cur].Seq()) {
			it.cur = i
		}
	}
	return it.cur >= 0
}

// Seq returns the current entry's sequence number.
func (it *SetIter) Seq() uint64 { return it.its[it.cur].Seq() }

// Entry returns the current entry's data, valid until the next Next.
func (it *SetIter) Entry() []byte { return it.its[it.cur].Entry() }

// Member returns the member the current entry is in.
func (it *SetIter) Member() int { return it.cur }

// Err returns the error that ended the iteration, or nil.
func (it *SetIter) Err() error { return it.err }
