//go:build !linux

package kv

// populate: page faults map the pages where MADV_POPULATE_READ does not
// exist.
func populate([]byte) {}
