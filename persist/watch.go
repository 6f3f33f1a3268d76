package persist

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// WatchStore64 calls fn(off, v) after every Store64 of v at offset off of
// mem (an 8-byte word inside mem), until stop is called. It is how a crash
// simulator (persist/crash) learns which words were written with one
// failure-atomic 8-byte store and which with ordinary stores that may
// tear; nothing else needs it. fn runs on the goroutine that called
// Store64, after the store; it must not call Store64 into mem itself.
//
// While nothing is watched Store64 costs one extra load and branch.
func WatchStore64(mem []byte, fn func(off int, v uint64)) (stop func()) {
	if len(mem) == 0 || fn == nil {
		return func() {}
	}
	w := &watch{base: uintptr(unsafe.Pointer(unsafe.SliceData(mem))), size: uintptr(len(mem)), fn: fn}
	watchMu.Lock()
	defer watchMu.Unlock()
	old := watching.Load()
	var list []*watch
	if old != nil {
		list = append(list, *old...)
	}
	list = append(list, w)
	watching.Store(&list)
	var once sync.Once
	return func() { once.Do(func() { unwatch(w) }) }
}

type watch struct {
	base, size uintptr
	fn         func(off int, v uint64)
}

var (
	watchMu  sync.Mutex
	watching atomic.Pointer[[]*watch] // nil while nothing is watched; replaced, never changed
)

func unwatch(w *watch) {
	watchMu.Lock()
	defer watchMu.Unlock()
	old := watching.Load()
	if old == nil {
		return
	}
	var list []*watch
	for _, x := range *old {
		if x != w {
			list = append(list, x)
		}
	}
	if len(list) == 0 {
		watching.Store(nil)
		return
	}
	watching.Store(&list)
}

// watched tells the watchers of p about a Store64 of v.
//
//go:noinline
func watched(list *[]*watch, p unsafe.Pointer, v uint64) {
	a := uintptr(p)
	for _, w := range *list {
		if off := a - w.base; off < w.size {
			w.fn(int(off), v)
		}
	}
}
