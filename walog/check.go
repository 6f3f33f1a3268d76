package walog

import (
	"errors"
	"fmt"
)

// Check verifies every persistent byte the log owns against what the log
// holds in memory: the header decodes and agrees with the log (geometry,
// prepared end, pass, floor, no dirty range left over), every entry from
// the start to the tail passes its checks with sequence numbers in order,
// the count and the first and last numbers are the log's, and the free
// space from the tail to the prepared end is clean. It writes nothing.
// Errors about the bytes wrap ErrCorrupt; a closed log is ErrClosed.
func (l *Log) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := guard(l.check, l.r)
	return unreadable(err, "check of the %s log at offset %d met unreadable media", l.format, l.base)
}

func (l *Log) check() error {
	if l.closed {
		return ErrClosed
	}
	if err := l.regionOK(l.r.Readable()); err != nil {
		return err
	}
	h, _, err := readHeaderGuarded(l.r, l.base, l.end-l.base)
	if err != nil {
		return &prefixed{prefix: "walog: check: ", err: err}
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: check of the %s log at offset %d: "+format, append([]any{ErrCorrupt, l.format, l.base}, args...)...)
	}
	switch {
	case h.format != l.format || h.base+h.size != l.end || h.align != l.alignMask+1 || h.maxEntry != l.maxEntry || h.maxBatch != l.maxBatch || h.noChecksum != l.noChecksum:
		return bad("the header's geometry differs from the log's")
	case h.base+h.hi != l.hi:
		return bad("the header's prepared end %d, the log's %d", h.base+h.hi, l.hi)
	case h.pass != l.pass || h.floor != l.floor:
		return bad("the header's pass %d and floor %d, the log's %d and %d", h.pass, h.floor, l.pass, l.floor)
	case h.dirtyFrom != 0 || h.dirtyTo != 0:
		return bad("a dirty range [%d, %d) is left in the header", h.dirtyFrom, h.dirtyTo)
	case l.r.Writable() == nil && l.headerDiffers():
		return bad("the header or its copy differs from what the log holds")
	}
	count := 0
	var first, last uint64
	for off := l.start; off < l.tail; {
		e, err := l.decode(off, l.tail)
		if errors.Is(err, errEnd) {
			return bad("the entry at offset %d, below the tail %d, reads as clean bytes", off, l.tail)
		}
		if err != nil {
			return bad("%s", bare(err))
		}
		if !l.seqFollows(count, last, e.seq) {
			return bad("entry at offset %d: sequence number %d after %d", off, e.seq, last)
		}
		if count == 0 {
			first = e.seq
		}
		last = e.seq
		count++
		off = l.alignUp(off + e.fp)
		if off > l.tail {
			return bad("the entry at offset %d runs past the tail %d", off, l.tail)
		}
	}
	switch {
	case count != l.count:
		return bad("%d entries on the media, the log counts %d", count, l.count)
	case count > 0 && (first != l.first || last != l.last):
		return bad("entries %d..%d on the media, the log has %d..%d", first, last, l.first, l.last)
	case count > 0 && first < l.floor:
		return bad("entry %d lies below the floor %d", first, l.floor)
	}
	if x := l.firstDirty(l.tail, l.hi); x >= 0 {
		return bad("the word at offset %d, past the tail %d and below the prepared end %d, is not clean free space", x, l.tail, l.hi)
	}
	return nil
}
