package walog

import (
	"errors"
	"fmt"
)

// An Iter walks the entries of a log in order, oldest first. It takes the
// log's lock for each step, so it may run while other goroutines append;
// it sees the entries appended before Next returns false. A Reset or
// Truncate of the log while it iterates ends it with ErrChanged. Every
// entry is checked again as it is read (checksum, popcount or validity
// bits, sequence number): one damaged since Open ends the iteration with
// an error wrapping ErrCorrupt, and is not returned.
//
//	it := l.Iter()
//	for it.Next() {
//		use(it.Seq(), it.Entry())
//	}
//	if err := it.Err(); err != nil { ... }
type Iter struct {
	l     *Log
	off   int
	at    int // offset of the current entry
	epoch uint64
	seq   uint64
	buf   []byte
	entry []byte
	err   error
	done  bool
}

// Iter returns an iterator positioned before the first entry.
func (l *Log) Iter() *Iter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &Iter{l: l, off: l.start, epoch: l.epoch}
}

// Next moves to the next entry and reports whether there is one.
func (it *Iter) Next() bool {
	if it.err != nil || it.done {
		return false
	}
	l := it.l
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		it.err = ErrClosed
	case l.regionOK(l.r.Readable()) != nil:
		it.err = l.regionOK(l.r.Readable())
	case l.epoch != it.epoch:
		it.err = ErrChanged
	case it.off >= l.tail:
		it.done = true
	}
	if it.err != nil || it.done {
		it.entry = nil
		return false
	}
	var e ent
	err := guard(func() (err error) {
		e, err = l.decode(it.off, l.tail)
		if err == nil && it.seq != 0 && e.seq <= it.seq {
			err = fmt.Errorf("%w: %s entry at offset %d: sequence number %d after %d", ErrCorrupt, l.format, it.off, e.seq, it.seq)
		}
		if err == nil {
			it.buf, err = l.data(it.off, e.n, it.buf)
		}
		return err
	}, l.r)
	if err != nil {
		err = unreadable(err, "%s entry at offset %d is unreadable", l.format, it.off)
	}
	if err != nil {
		// Only a stray write into the region can do this.
		if errors.Is(err, errEnd) {
			err = fmt.Errorf("%w: %s log: the entry at offset %d, below the tail %d, reads as clean bytes", ErrCorrupt, l.format, it.off, l.tail)
		}
		it.err, it.entry = err, nil
		return false
	}
	it.entry, it.seq, it.at = it.buf, e.seq, it.off
	it.off = l.alignUp(it.off + e.fp)
	return true
}

// Seq returns the sequence number of the current entry.
func (it *Iter) Seq() uint64 { return it.seq }

// Entry returns the current entry's data. It is valid until the next call
// of Next; copy it to keep it.
func (it *Iter) Entry() []byte { return it.entry }

// Err returns the error that ended the iteration, or nil at the end of the
// log.
func (it *Iter) Err() error { return it.err }
