package walog

import (
	"errors"
	"fmt"
)

// Random access for callers that index the log themselves (raftstore
// keeps a DRAM index of where each entry starts): the offset of an entry
// comes from Iter.Offset, or from Tail before an append and Span after
// it, and ReadAt reads it back with the checks an iterator makes.

// Offset returns the region offset where the current entry starts.
func (it *Iter) Offset() int { return it.at }

// Tail returns the region offset where the next append's first entry
// starts when it fits (a log that wraps starts over at its first entry).
// Each entry of an AppendBatch starts Span(len) bytes after the one
// before.
func (l *Log) Tail() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tail
}

// Span returns the bytes an entry of n data bytes occupies in the log,
// alignment included.
func (l *Log) Span(n int) int { return l.alignUp(l.format.footprint(n)) }

// ReadAt returns the sequence number and the data (appended to dst[:0])
// of the entry that starts at region offset off, checked as an iterator
// checks it. off must be where an entry of the log starts (Iter.Offset,
// Tail and Span): one outside the entries is ErrInvalid, and one inside
// an entry reads bytes that fail the entry's check (ErrCorrupt).
func (l *Log) ReadAt(off int, dst []byte) (seq uint64, data []byte, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return 0, nil, ErrClosed
	case l.regionOK(l.r.Readable()) != nil:
		return 0, nil, l.regionOK(l.r.Readable())
	case off < l.start || off >= l.tail || off&7 != 0:
		return 0, nil, fmt.Errorf("%w: ReadAt(%d): no entry starts there (entries lie in [%d, %d), 8-byte aligned)", ErrInvalid, off, l.start, l.tail)
	}
	err = guard(func() error {
		e, err := l.decode(off, l.tail)
		if err == nil {
			seq = e.seq
			data, err = l.data(off, e.n, dst)
		}
		return err
	}, l.r)
	if err != nil {
		err = unreadable(err, "%s entry at offset %d is unreadable", l.format, off)
		if errors.Is(err, errEnd) {
			err = fmt.Errorf("%w: %s log: the entry at offset %d, below the tail %d, reads as clean bytes", ErrCorrupt, l.format, off, l.tail)
		}
		return 0, nil, err
	}
	return seq, data, nil
}

// TruncateAt is Truncate(seq) for a standalone log whose entry seq starts
// at region offset off (Iter.Offset, Tail and Span): it checks that entry
// instead of walking the log from its start to find it. The entries seq
// and later are discarded, as by Truncate. An offset where entry seq does
// not start is ErrInvalid (the log is unchanged).
func (l *Log) TruncateAt(off int, seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.guardWrite(func() error {
		if err := l.usable(); err != nil {
			return err
		}
		if l.set != nil || l.count == 0 || seq < l.first || seq > l.last || off < l.start || off >= l.tail || off&l.alignMask != 0 {
			return fmt.Errorf("%w: TruncateAt(%d, %d): no entry of a standalone log numbered %d..%d starts there", ErrInvalid, off, seq, l.first, l.last)
		}
		e, err := l.decode(off, l.tail)
		if err != nil || e.seq != seq {
			return fmt.Errorf("%w: TruncateAt(%d, %d): the entry there is numbered %d (%v)", ErrInvalid, off, seq, e.seq, err)
		}
		prev := seq - 1
		if seq == l.first {
			prev = 0 // as Truncate leaves an emptied log
		}
		return l.cutAt(off, int(seq-l.first), prev, seq)
	})
}
