// Package simword routes the failure-atomic 8-byte stores and loads of
// package persist (Store64, StoreWord, Load64) that fall inside simulated
// memory to the simulator that owns it (persist/crash), which makes the
// store itself: the simulator notes that a word was stored atomically in
// the same step as the store, so no flush or crash point of another
// goroutine can see the new value before it is known to be whole.
//
// It is internal to persist: only a crash simulator registers memory, and
// nothing outside persist's tree can install a hook.
package simword

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// An Owner makes the stores and loads into the memory it registered.
type Owner interface {
	// Store64 stores v into *p, the word at byte offset off of the
	// memory, with one 8-byte store.
	Store64(off int, p *uint64, v uint64)
	// Load64 loads *p, the word at byte offset off, with one 8-byte load.
	Load64(off int, p *uint64) uint64
}

type entry struct {
	base, size uintptr
	o          Owner
}

var (
	mu     sync.Mutex
	active atomic.Pointer[[]*entry] // nil while nothing is registered; replaced, never changed
	on     atomic.Bool              // something is registered
)

// Active reports whether any memory is registered: Store64's one extra
// load and branch while nothing is.
func Active() bool { return on.Load() }

// Register routes the stores and loads into mem to o until stop is called.
func Register(mem []byte, o Owner) (stop func()) {
	if len(mem) == 0 || o == nil {
		return func() {}
	}
	e := &entry{base: uintptr(unsafe.Pointer(unsafe.SliceData(mem))), size: uintptr(len(mem)), o: o}
	mu.Lock()
	defer mu.Unlock()
	var list []*entry
	if old := active.Load(); old != nil {
		list = append(list, *old...)
	}
	// The newest registration of a range wins (a region reopened over
	// the same memory).
	list = append([]*entry{e}, list...)
	active.Store(&list)
	on.Store(true)
	var once sync.Once
	return func() { once.Do(func() { unregister(e) }) }
}

func unregister(e *entry) {
	mu.Lock()
	defer mu.Unlock()
	old := active.Load()
	if old == nil {
		return
	}
	var list []*entry
	for _, x := range *old {
		if x != e {
			list = append(list, x)
		}
	}
	if len(list) == 0 {
		active.Store(nil)
		on.Store(false)
		return
	}
	active.Store(&list)
}

// Store hands a store of v to *p to the owner of p's memory and reports
// whether there was one (else the caller stores).
//
//go:noinline
func Store(p unsafe.Pointer, v uint64) bool {
	if o, off := find(p); o != nil {
		o.Store64(off, (*uint64)(p), v)
		return true
	}
	return false
}

// Load hands a load of *p to the owner of p's memory; ok is false when
// there is none.
//
//go:noinline
func Load(p unsafe.Pointer) (v uint64, ok bool) {
	if o, off := find(p); o != nil {
		return o.Load64(off, (*uint64)(p)), true
	}
	return 0, false
}

func find(p unsafe.Pointer) (Owner, int) {
	list := active.Load()
	if list == nil {
		return nil, 0
	}
	a := uintptr(p)
	for _, e := range *list {
		if off := a - e.base; off < e.size {
			return e.o, int(off)
		}
	}
	return nil, 0
}
