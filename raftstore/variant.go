package raftstore

// variant names a deliberately broken store that the crash tests must
// catch. Production stores use the zero value.
type variant uint8

const (
	_ variant = iota
	// variantVolatileFloor deletes a prefix in memory only (the floor is
	// not written): the entries come back after a crash.
	variantVolatileFloor
	// variantTruncateFirst truncates the segment holding the start of a
	// deleted suffix before emptying the later segments: a crash between
	// leaves a hole.
	variantTruncateFirst
	// variantFlipFirst switches the stable store to its other log before
	// copying the keys there: a crash between loses them.
	variantFlipFirst
)
