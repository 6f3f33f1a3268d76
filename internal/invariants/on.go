//go:build invariants

package invariants

// Enabled is true when built with the invariants tag (make test does):
// packages then check their internal invariants and panic on a violation.
const Enabled = true
