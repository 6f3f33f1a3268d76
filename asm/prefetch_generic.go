//go:build !amd64 || purego

package asm

import "unsafe"

// The portable twin: Go has no prefetch for user code; a prefetch is only a
// hint, so doing nothing is correct.

func prefetchAll(ps unsafe.Pointer, n int) {}

func prefetchLines(p unsafe.Pointer, n int) {}
