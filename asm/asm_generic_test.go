//go:build !amd64 || purego

package asm

func archCopies() map[string]copyFunc { return nil }
func archFills() map[string]fillFunc  { return nil }
