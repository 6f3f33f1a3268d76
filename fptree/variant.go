package fptree

// variant selects a deliberately broken persistence protocol, which the
// crash tests show the simulator catches (export_test.go sets it).
type variant uint8

const (
	correct variant = iota
	// bitmapFirst commits an insert's bitmap bit before its slot is
	// durable: one fence, the slot and the bit persisted together.
	bitmapFirst
	// splitUnlogged does not make the split micro log durable before
	// the new leaf is linked: the log, the link and the old leaf's new
	// bitmap are persisted by one fence.
	splitUnlogged
)
