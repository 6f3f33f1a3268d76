//go:build race

package pagelog_test

// raceEnabled: the race detector slows the tests about tenfold; the
// single-goroutine byte sweeps run fewer masks under it (corrupt_test.go).
const raceEnabled = true
