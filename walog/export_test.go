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

// Footprint is the bytes an entry of n data bytes occupies in a log of
// format f, before alignment.
func Footprint(f Format, n int) int { return f.footprint(n) }

// BatchNeed is the bytes a batch of entries of the given sizes occupies
// in a log of format f whose entries are align-aligned: what MaxBatch
// bounds.
func BatchNeed(f Format, align int, sizes ...int) int {
	need := 0
	for i, n := range sizes {
		if i > 0 {
			need = (need + align - 1) &^ (align - 1)
		}
		need += f.footprint(n)
	}
	return need
}

// BrokenPopLog returns o with PopLog's popcount deliberately not covering
// the header words (length and sequence number), on the raw format (no
// checksum, which would otherwise catch what the popcount misses): the
// broken variant the crash tests must catch.
func BrokenPopLog(o Options) *Options {
	o.variant = variantPopNoHeader
	o.NoChecksum = true
	return &o
}

// NoScrub returns o with Open's scrub of the torn tail left out, on the
// raw format (no checksum): the broken variant that shows why the scrub
// is mandatory.
func NoScrub(o Options) *Options {
	o.variant = variantNoScrub
	o.NoChecksum = true
	return &o
}

// PoisonBlind returns o with recovery reading and rewriting the poisoned
// ranges of free space instead of skipping them: the broken variant the
// poison tests must catch.
func PoisonBlind(o Options) *Options {
	o.variant = variantPoisonBlind
	return &o
}

// NarrowBound returns o with Open bounding what an interrupted append may
// have written by one entry, as if there were no batches: the broken
// variant that takes torn batches for corruption.
func NarrowBound(o Options) *Options {
	o.variant = variantNarrowBound
	return &o
}

// StageLen is the length of l's stage: 0 until the first append.
func StageLen(l *Log) int { return len(l.stage) }

// CopyAtClose returns o with the header's copy brought up to date only at
// Close and Open: the broken variant that shows why every word store goes
// to both copies.
func CopyAtClose(o Options) *Options {
	o.variant = variantCopyAtClose
	return &o
}

// NoClearClosed returns o with Open leaving the clean-shutdown word set:
// the broken variant that shows why Open clears it before appends.
func NoClearClosed(o Options) *Options {
	o.variant = variantNoClearClosed
	return &o
}

// CreateZeroMagic returns o with Create invalidating the old header by
// zeroing its magic, not marking it "being created": the broken variant a
// crash during Create over a used area catches.
func CreateZeroMagic(o Options) *Options {
	o.variant = variantCreateZeroMagic
	return &o
}
