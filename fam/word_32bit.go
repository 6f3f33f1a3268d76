//go:build !(amd64 || arm64 || ppc64 || ppc64le || riscv64 || loong64 || s390x || mips64 || mips64le)

package fam

import (
	"sync/atomic"

	"github.com/braid-pm/braid/persist"
)

// On a 32-bit platform a plain 64-bit store would be two stores, which a
// crash can tear: persist.StoreWord (sync/atomic there) makes it one 8-byte
// access, which a crash simulator sees as such.
func load(p *uint64) uint64 { return atomic.LoadUint64(p) }
func store(p *uint64, v uint64) {
	persist.StoreWord(p, v)
}
