package pmheader

import (
	"encoding/binary"
	"fmt"
)

// Kinds is the registry: the magic of every kind of persistent structure
// braid writes, the kind in messages and the package that writes it. A new
// kind adds its magic here (TestRegistry checks that the magics are
// distinct, eight bytes, and far apart), so that every other kind's Open
// tells its bytes from a damaged structure of its own and names what it
// found.
var Kinds = []struct{ Magic, Name, Pkg string }{
	{"braidWAL", "walog log", "walog"},
	{"walogNEW", "walog log whose Create did not finish", "walog"},
	{"braidPGL", "pagelog store", "pagelog"},
	{"mkPGLsto", "pagelog store whose Create did not finish", "pagelog"},
	{"BRDSORTR", "sort run file", "sort"},
	{"braidCOW", "CoW array", "cow"},
	{"braidFAM", "FAM array", "fam"},
	{"braidFLG", "FAM log array", "fam"},
	{"braidFPT", "FP-tree", "fptree"},
	{"braidKDS", "kv data segment", "kv"},
	{"braidKMT", "kv metadata segment", "kv"},
	{"braidKCP", "kv checkpoint", "kv"},
}

// Known returns the name of the kind whose magic is m ("walog log", with
// its package: "walog log (package walog)"), if it is one of Kinds.
func Known(m uint64) (name string, ok bool) {
	for _, k := range Kinds {
		if Magic(k.Magic) == m {
			return k.Name + " (package " + k.Pkg + ")", true
		}
	}
	return "", false
}

// Identify says what the bytes at the start of b are, for an Open that did
// not find its own magic there: "a walog log (package walog)" for a
// registered magic, "zeroes (nothing was created here)" for a zero magic,
// and otherwise "no braid structure (magic "...")". b shorter than 8 bytes
// is "too few bytes for a header".
func Identify(b []byte) string {
	if len(b) < 8 {
		return fmt.Sprintf("%d bytes, too few for a header", len(b))
	}
	m := binary.LittleEndian.Uint64(b)
	if m == 0 {
		return "zeroes (nothing was created here)"
	}
	if name, ok := Known(m); ok {
		return "a " + name
	}
	return fmt.Sprintf("no braid structure (magic %q)", b[:8])
}
