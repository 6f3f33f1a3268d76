//go:build !invariants

// Package invariants switches extra internal consistency checks on with
// the invariants build tag, as `make test` builds. They cost time, so
// release builds leave them out.
package invariants

// Enabled is true when built with the invariants tag.
const Enabled = false
