package replica

// Variant is a deliberately broken node, for the tests that must catch
// it (Config.Variant; the zero value is the correct node).
type Variant uint8

const (
	// Correct is the node as documented.
	Correct Variant = iota
	// NoApplyWait answers a write once raft has its entries queued,
	// before they are committed and applied here: a read-modify-write
	// after it reads the value from before (and a crash loses it).
	NoApplyWait
)
