//go:build !unix

package kv

import "os"

// fullyAllocated: unknown here, so segments are preallocated again.
func fullyAllocated(os.FileInfo) bool { return false }
