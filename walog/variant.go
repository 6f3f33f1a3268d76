package walog

// variant names a deliberately broken encoding that the crash tests must
// catch. Production logs use the zero value.
type variant uint8

const (
	_ variant = iota
	// variantPopNoHeader counts only the data bits in PopLog's popcount,
	// not the header words (length and sequence number).
	variantPopNoHeader
	// variantNoScrub skips rewriting clean what lies past the recovered
	// tail: a torn append's leftovers stay for the next append to land on.
	variantNoScrub
	// variantNarrowBound bounds what an interrupted append can have
	// written by one entry, ignoring batches: Open then takes the torn
	// tail of a batch for corruption.
	variantNarrowBound
	// variantCopyAtClose brings the header's copy up to date only at
	// Close (and Open), not with every word store: after a Reset lowers
	// the prepared end, the copy keeps the higher one, which Open's merge
	// takes, and a crash then shows the old entries beyond it as damage.
	variantCopyAtClose
	// variantNoClearClosed leaves the clean-shutdown word set when Open
	// opens a cleanly closed log: after appends and a crash, Open finds
	// entries past the tail it recorded and reports corruption.
	variantNoClearClosed
	// variantCreateZeroMagic makes Create invalidate the old header by
	// zeroing its magic instead of marking it "being created": a crash
	// during Create over a used area then leaves a zero header over the
	// old entries, which Open reports as a damaged log, not "no log".
	variantCreateZeroMagic
	// variantPoisonBlind makes recovery read and rewrite free space
	// without skipping the ranges known to be poisoned: Open of a log with
	// poisoned free space, and every salvage of a poisoned entry, fail with
	// the media error.
	variantPoisonBlind
)
