//go:build amd64 || arm64 || ppc64 || ppc64le || riscv64 || loong64 || s390x || mips64 || mips64le

package fam

import "github.com/braid-pm/braid/persist"

// On a 64-bit platform an aligned uint64 load or store is one instruction
// that the compiler never splits: a FAMB store is failure-atomic as a
// plain store. (atomic.StoreUint64 would be an XCHG on amd64, a locked
// instruction that waits for the store buffer to drain: five of them cost
// a 16-byte update about a tenth of its time.) Merging two adjacent FAMB
// stores into one wider store would not matter either: every FAMB of an
// update is independent, each one only has to be wholly old or wholly new.
// Ordering with respect to the media comes from the Persist that follows.
// These are not synchronization operations between goroutines: one object
// has one writer at a time, and no reader during an update. The store goes
// through persist.StoreWord (Store64's single store, inlined), so that a crash
// simulator sees it as the failure-atomic store it is and never tears it.
func load(p *uint64) uint64 { return *p }
func store(p *uint64, v uint64) {
	persist.StoreWord(p, v)
}
