package walog

import "fmt"

// CheckFree reports an error unless the free space between the tail and
// the prepared end is clean.
func (l *Log) CheckFree() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for off := l.tail; off < l.hi; off += 8 {
		if !l.isClean(l.mem[off : off+8]) {
			return fmt.Errorf("dirty word at %d (tail %d, hi %d, pass %d)", off, l.tail, l.hi, l.pass)
		}
	}
	return nil
}

// BrokenPopLog returns o with PopLog's popcount deliberately not covering
// the header words (length and sequence number): the broken variant the
// crash tests must catch.
func BrokenPopLog(o Options) *Options {
	o.variant = variantPopNoHeader
	return &o
}

// NoScrub returns o with Open's scrub of the torn tail left out: the
// broken variant that shows why it is mandatory.
func NoScrub(o Options) *Options {
	o.variant = variantNoScrub
	return &o
}
