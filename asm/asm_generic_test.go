//go:build !amd64 || purego

package asm

// haveAsm: this build has no assembly; the cross-checks skip.
const haveAsm = false

func archCopies() map[string]copyFunc { return nil }
func archFills() map[string]fillFunc  { return nil }

type crcMode struct {
	name string
	set  func() (restore func())
}

func crcModes() []crcMode {
	return []crcMode{{"generic", func() func() { return func() {} }}}
}
