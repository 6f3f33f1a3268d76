package raftstore

import (
	"errors"
	"fmt"
	"sort"

	"github.com/braid-pm/braid/walog"
	"github.com/hashicorp/raft"
)

// FirstIndex returns the first index of the log, 0 when it is empty.
func (s *Store) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	if len(s.ents) == 0 {
		return 0, nil
	}
	return s.ents[0].index, nil
}

// LastIndex returns the last index of the log, 0 when it is empty.
func (s *Store) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	if len(s.ents) == 0 {
		return 0, nil
	}
	return s.ents[len(s.ents)-1].index, nil
}

// find returns the position of index in ents, or -1.
func (s *Store) find(index uint64) int {
	n := len(s.ents)
	if n == 0 || index < s.ents[0].index || index > s.ents[n-1].index {
		return -1
	}
	if s.ents[n-1].index-s.ents[0].index == uint64(n-1) {
		return int(index - s.ents[0].index) // no gaps
	}
	i := sort.Search(n, func(i int) bool { return s.ents[i].index >= index })
	if s.ents[i].index != index {
		return -1
	}
	return i
}

// GetLog reads the entry at index into out; raft.ErrLogNotFound when the
// log does not hold it. The record is checked (walog's popcount and
// CRC-32C, then its index); one that fails is ErrCorrupt.
func (s *Store) GetLog(index uint64, out *raft.Log) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	i := s.find(index)
	if i < 0 {
		return raft.ErrLogNotFound
	}
	e := s.ents[i]
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer s.bufs.Put(bp)
	seq, b, err := s.segs[e.seg].log.ReadAt(e.off, *bp)
	if err != nil {
		return fmt.Errorf("raftstore: GetLog(%d): segment %d: %w", index, e.seg, err)
	}
	*bp = b
	if seq != e.seq {
		return fmt.Errorf("%w: GetLog(%d): segment %d holds sequence number %d at offset %d, not %d", ErrCorrupt, index, e.seg, seq, e.off, e.seq)
	}
	if got, err := recordIndex(b); err != nil || got != index {
		return fmt.Errorf("%w: GetLog(%d): the record at offset %d of segment %d holds index %d (%v)", ErrCorrupt, index, e.off, e.seg, got, err)
	}
	return decode(b, out)
}

// StoreLog appends one entry; see StoreLogs.
func (s *Store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends the entries, whose indexes must grow from one to the
// next and, when the log holds entries, start above its last (raft
// appends after its last entry, deleting conflicting ones first; gaps are
// accepted). When it returns nil every entry is durable. A crash during
// it leaves a prefix of the entries (possibly none): one walog batch (one
// barrier) holds as many as a segment's batch limit allows, and the
// batches go in order.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.checkAppend(logs); err != nil {
		return err
	}
	if len(s.ents) == 0 && logs[0].Index < s.m.floor {
		// Every segment is empty (the prefix deletion that raised the
		// floor reset them): the floor may come down.
		if err := s.updateMeta(func(m *meta) { m.floor = 0 }); err != nil {
			return s.fail(err)
		}
	}
	s.scratch, s.batch = s.scratch[:0], s.batch[:0]
	for _, l := range logs {
		s.scratch = encode(s.scratch, l)
	}
	at := 0
	for _, l := range logs {
		n := recordSize(l)
		s.batch = append(s.batch, s.scratch[at:at+n:at+n])
		at += n
	}
	return s.appendAll(logs)
}

// MaxData is the most bytes of data and extensions one entry may hold
// (StoreLogs refuses a larger one): a quarter of a segment, at most
// 4 MiB, less a record's header.
func (s *Store) MaxData() int { return s.geo.maxEntry() - recOverhead }

// checkAppend checks the entries' indexes and sizes.
func (s *Store) checkAppend(logs []*raft.Log) error {
	last, have := uint64(0), len(s.ents) > 0
	if have {
		last = s.ents[len(s.ents)-1].index
	}
	limit := s.geo.maxEntry()
	for i, l := range logs {
		if l == nil {
			return fmt.Errorf("%w: StoreLogs: entry %d is nil", ErrInvalid, i)
		}
		if have && l.Index <= last {
			return fmt.Errorf("%w: StoreLogs: entry %d has index %d, not above the last index %d (indexes must grow; delete a conflicting suffix first)", ErrInvalid, i, l.Index, last)
		}
		if n := recordSize(l); n > limit {
			return fmt.Errorf("%w: StoreLogs: entry of index %d holds %d bytes of data and extensions; at most %d fit a record in segments of %d bytes", ErrInvalid, l.Index, n-recOverhead, limit-recOverhead, s.geo.segSize)
		}
		last, have = l.Index, true
	}
	return nil
}

// appendAll appends s.batch (the records of logs) in walog batches that
// fit a segment's MaxBatch, moving to a fresh segment when the active one
// is full.
func (s *Store) appendAll(logs []*raft.Log) error {
	maxBatch := s.geo.segOptions(0).MaxBatch
	for i := 0; i < len(logs); {
		sg := &s.segs[s.active]
		j, need := i, 0
		for j < len(logs) && need+sg.log.Span(len(s.batch[j])) <= maxBatch {
			need += sg.log.Span(len(s.batch[j]))
			j++
		}
		off := sg.log.Tail()
		seq, err := sg.log.AppendBatch(s.batch[i:j])
		if errors.Is(err, walog.ErrFull) && sg.n > 0 {
			if err := s.nextSegment(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return s.fail(fmt.Errorf("raftstore: StoreLogs: segment %d: %w", s.active, err))
		}
		if sg.n == 0 {
			sg.first = logs[i].Index
		}
		for k := i; k < j; k++ {
			s.ents = append(s.ents, loc{index: logs[k].Index, seq: seq + uint64(k-i), off: off, seg: s.active})
			off += sg.log.Span(len(s.batch[k]))
		}
		sg.n += j - i
		sg.live += j - i
		i = j
	}
	return nil
}

// nextSegment makes a segment without live entries the active one,
// resetting it if it holds deleted ones.
func (s *Store) nextSegment() error {
	for k := 1; k < len(s.segs); k++ {
		i := (s.active + k) % len(s.segs)
		if s.segs[i].live > 0 {
			continue
		}
		if s.segs[i].n > 0 {
			if err := s.resetSegment(i); err != nil {
				return s.fail(err)
			}
		}
		s.active = i
		return nil
	}
	return fmt.Errorf("%w: every segment holds live entries (%d entries, %d..%d, in %d segments of %d bytes): compact the log (snapshots) or make the store larger",
		ErrFull, len(s.ents), s.ents[0].index, s.ents[len(s.ents)-1].index, len(s.segs), s.geo.segSize)
}

// DeleteRange deletes the entries from min to max, inclusive. raft deletes
// a prefix (compaction after a snapshot) or a suffix (entries that
// conflict with the leader's); a range strictly inside the log would
// leave a hole and is ErrInvalid. When it returns nil the entries are
// gone for good. A crash during a prefix deletion leaves the log whole or
// without the prefix (one 8-byte floor, failure-atomic in the meta
// object); during a suffix deletion, the log cut somewhere from min on
// (segments are emptied newest first), so always a prefix of the log.
func (s *Store) DeleteRange(min, max uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	n := len(s.ents)
	if n == 0 || max < min || max < s.ents[0].index || min > s.ents[n-1].index {
		return nil
	}
	first, last := s.ents[0].index, s.ents[n-1].index
	switch {
	case min <= first:
		return s.deletePrefix(max)
	case max >= last:
		return s.deleteSuffix(min)
	}
	return fmt.Errorf("%w: DeleteRange(%d, %d) would leave a hole in the log %d..%d: only a prefix or a suffix can be deleted", ErrInvalid, min, max, first, last)
}

// deletePrefix raises the floor above max (the commit), then resets the
// segments left without live entries.
func (s *Store) deletePrefix(max uint64) error {
	q := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].index > max })
	floor := s.ents[q-1].index + 1
	if s.v != variantVolatileFloor {
		if err := s.updateMeta(func(m *meta) { m.floor = floor }); err != nil {
			return s.fail(err)
		}
	}
	for _, e := range s.ents[:q] {
		s.segs[e.seg].live--
	}
	s.ents = s.ents[q:]
	for i := range s.segs {
		if s.segs[i].n > 0 && s.segs[i].live == 0 {
			if err := s.resetSegment(i); err != nil {
				return s.fail(err)
			}
		}
	}
	return nil
}

// deleteSuffix empties the segments after the one holding min, newest
// first, then truncates that one.
func (s *Store) deleteSuffix(min uint64) error {
	p := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].index >= min })
	cut := s.ents[p]
	var later []int
	for k := len(s.ents) - 1; k >= p; k-- {
		if g := s.ents[k].seg; g != cut.seg && (len(later) == 0 || later[len(later)-1] != g) {
			later = append(later, g)
		}
	}
	if s.v == variantTruncateFirst {
		if err := s.segs[cut.seg].log.TruncateAt(cut.off, cut.seq); err != nil {
			return s.fail(fmt.Errorf("raftstore: truncate segment %d: %w", cut.seg, err))
		}
	}
	for _, g := range later {
		if err := s.resetSegment(g); err != nil {
			return s.fail(err)
		}
	}
	if s.v != variantTruncateFirst {
		if err := s.segs[cut.seg].log.TruncateAt(cut.off, cut.seq); err != nil {
			return s.fail(fmt.Errorf("raftstore: truncate segment %d: %w", cut.seg, err))
		}
	}
	for _, e := range s.ents[p:] {
		if e.seg == cut.seg {
			s.segs[e.seg].n--
			s.segs[e.seg].live--
		}
	}
	s.ents = s.ents[:p]
	s.active = cut.seg
	return nil
}

// writable says whether the log takes writes.
func (s *Store) writable() error {
	switch {
	case s.closed:
		return ErrClosed
	case s.err != nil:
		return fmt.Errorf("raftstore: an earlier write failed, the log takes no more: %w", s.err)
	}
	return nil
}

// fail records a failed write: the log's memory and media may disagree,
// so it takes no more writes (reads go on).
func (s *Store) fail(err error) error {
	s.err = err
	return err
}
