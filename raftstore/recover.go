package raftstore

import (
	"fmt"
	"slices"
)

// recoverLog walks every segment (walog.Open has recovered each: torn
// appends dropped, damage reported) and rebuilds the index of the live
// entries. Appends go to one segment at a time, in index order, and a
// segment is reset before it is reused, so the segments holding live
// entries, ordered by their first index, hold one increasing sequence;
// only the first of them may start with entries below the floor (deleted
// from the front). Anything else is damage: ErrCorrupt. Segments whose
// entries all lie below the floor (a prefix deletion a crash interrupted
// before it reset them) are reset when the region is writable.
func (s *Store) recoverLog() error {
	floor := s.m.floor
	var live [][]loc
	for i := range s.segs {
		es, err := s.scanSegment(i)
		if err != nil {
			return err
		}
		s.segs[i].n = len(es)
		if len(es) > 0 {
			s.segs[i].first = es[0].index
			if es[len(es)-1].index >= floor {
				live = append(live, es)
			}
		}
	}
	slices.SortFunc(live, func(a, b []loc) int {
		if a[0].index < b[0].index {
			return -1
		}
		return 1
	})
	for k, es := range live {
		for _, e := range es {
			switch {
			case e.index < floor && k > 0:
				return fmt.Errorf("%w: segment %d holds index %d below the floor %d after live entries of segment %d", ErrCorrupt, e.seg, e.index, floor, live[0][0].seg)
			case e.index < floor:
				continue
			case len(s.ents) > 0 && e.index <= s.ents[len(s.ents)-1].index:
				last := s.ents[len(s.ents)-1]
				return fmt.Errorf("%w: segment %d holds index %d after index %d of segment %d", ErrCorrupt, e.seg, e.index, last.index, last.seg)
			}
			s.ents = append(s.ents, e)
			s.segs[e.seg].live++
		}
	}
	if len(s.ents) > 0 {
		s.active = s.ents[len(s.ents)-1].seg
	}
	if s.r.Writable() != nil {
		return nil
	}
	for i := range s.segs {
		if s.segs[i].n > 0 && s.segs[i].live == 0 {
			if err := s.resetSegment(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanSegment returns where segment i's entries are, in its order.
func (s *Store) scanSegment(i int) ([]loc, error) {
	var es []loc
	it := s.segs[i].log.Iter()
	for it.Next() {
		idx, err := recordIndex(it.Entry())
		if err != nil {
			return nil, fmt.Errorf("raftstore: segment %d, entry %d: %w", i, it.Seq(), err)
		}
		if len(es) > 0 && idx <= es[len(es)-1].index {
			return nil, fmt.Errorf("%w: segment %d holds index %d after %d", ErrCorrupt, i, idx, es[len(es)-1].index)
		}
		es = append(es, loc{index: idx, seq: it.Seq(), off: it.Offset(), seg: i})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("raftstore: segment %d: %w", i, err)
	}
	return es, nil
}

// resetSegment discards every entry of segment i.
func (s *Store) resetSegment(i int) error {
	if err := s.segs[i].log.Reset(); err != nil {
		return fmt.Errorf("raftstore: reset segment %d: %w", i, err)
	}
	s.segs[i].n, s.segs[i].live = 0, 0
	return nil
}
