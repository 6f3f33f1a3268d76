package persist

import (
	"unsafe"

	"github.com/braid-pm/braid/persist/internal/simword"
)

// StoreWord is Store64 for a word the caller has already checked: p is
// 8-byte aligned and points into a Region's memory. It makes the same one
// failure-atomic 8-byte store (sync/atomic on 32-bit platforms), and a crash
// simulator sees it as Store64's, but it has no length or alignment check,
// so it inlines into hot loops (fam's FAMB words: five stores per 16-byte
// update). A misaligned p is a broken program, not bad input.
func StoreWord(p *uint64, v uint64) {
	if simword.Active() {
		simStoreWord(p, v)
		return
	}
	if is64bit {
		*p = v // one store; see store64
	} else {
		store64(unsafe.Pointer(p), v)
	}
}

// simStoreWord is StoreWord while a simulator has memory registered: a
// word of simulated memory goes to it (out of line, so that StoreWord
// inlines).
//
//go:noinline
func simStoreWord(p *uint64, v uint64) {
	if !simword.Store(unsafe.Pointer(p), v) {
		store64(unsafe.Pointer(p), v)
	}
}
