package kv

import (
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/braid-pm/braid/internal/numa"
)

// slotMem owns a mapped slot array — a mapping of its own, or a block of
// a slotPool chunk — and returns it once the table that holds it is gone
// (its cleanup) or replaced it (free, freeZeroed).
type slotMem struct {
	mem     []byte
	pool    *slotPool // nil: mem is a mapping of its own
	order   int       // in pool: the block's order
	cleanup runtime.Cleanup
	node    int // the NUMA node the kernel bound mem to, -1 none (numa.go)
}

// allocSlots returns n zeroed slots and what owns them (nil: the heap).
// With bind, mapped memory is bound to NUMA node node (mbind) where the
// kernel allows it.
func allocSlots(n int, bind bool, node int) ([]slot, *slotMem) {
	size := n * int(unsafe.Sizeof(slot{}))
	if size < poolMin {
		return make([]slot, n), nil
	}
	var m *slotMem
	if size < poolChunk {
		m = poolFor(bind, node).get(size)
	} else {
		m = mapSlots(size, bind, node)
	}
	if m == nil {
		return make([]slot, n), nil
	}
	return unsafe.Slice((*slot)(unsafe.Pointer(unsafe.SliceData(m.mem))), n), m
}

// mapSlots maps size bytes with transparent huge pages for an array of
// its own (nil: the mapping failed).
func mapSlots(size int, bind bool, node int) *slotMem {
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	m := &slotMem{mem: mem, node: -1}
	if bind && numa.Bind(mem, node) == nil {
		m.node = node
	}
	m.cleanup = runtime.AddCleanup(m, func(b []byte) { _ = unix.Munmap(b) }, mem)
	return m
}

// boundTo reports whether the array is mapped and bound to node.
func (m *slotMem) boundTo(node int) bool { return m != nil && m.node == node }

// free returns the array now (the table replaced it and holds the lock,
// so only a prefetch can still name it, and a prefetch never faults).
func (m *slotMem) free() { m.release(false) }

// freeZeroed is free of an array the table left all zero (a growth's
// move clears every slot it moves): the pool gives it out again without
// clearing it.
func (m *slotMem) freeZeroed() { m.release(true) }

func (m *slotMem) release(zeroed bool) {
	if m == nil {
		return
	}
	m.cleanup.Stop()
	if m.pool != nil {
		m.pool.put(blockOf(m.mem), m.order, !zeroed)
		return
	}
	_ = unix.Munmap(m.mem)
}

// A slotPool carves the slot arrays smaller than a huge page out of
// 2 MiB chunks mapped with transparent huge pages (a buddy allocator):
// a growing index faults a huge page per 2 MiB instead of 512 small
// pages, each fault a trap that costs far more than the copy a growth
// does (tens of µs in a virtual machine; BenchmarkPutGrowth). A chunk
// whose blocks are all free again is unmapped.
type slotPool struct {
	mu   sync.Mutex
	bind bool
	node int // with bind
	// free holds the free blocks of each order (a block of order k is
	// poolMin << k bytes), by address: true when it is dirty (it must be
	// cleared before it is given out).
	free [poolOrders]map[uintptr]bool
	// chunks are the mapped chunks by address, and the node each is
	// bound to (-1: none).
	chunks map[uintptr]chunk
}

type chunk struct {
	mem  []byte
	node int
}

const (
	poolMin    = 16 << 10 // the smallest pooled array: smaller ones are on the heap
	poolChunk  = 2 << 20
	poolOrders = 8 // poolMin << 7 = poolChunk
)

var slotPools struct {
	mu sync.Mutex
	m  map[[2]int]*slotPool // by (bind, node)
}

// poolFor is the pool of arrays bound to node (bind) or unbound.
func poolFor(bind bool, node int) *slotPool {
	k := [2]int{0, 0}
	if bind {
		k = [2]int{1, node}
	}
	slotPools.mu.Lock()
	defer slotPools.mu.Unlock()
	if slotPools.m == nil {
		slotPools.m = map[[2]int]*slotPool{}
	}
	p := slotPools.m[k]
	if p == nil {
		p = &slotPool{bind: bind, node: node, chunks: map[uintptr]chunk{}}
		for i := range p.free {
			p.free[i] = map[uintptr]bool{}
		}
		slotPools.m[k] = p
	}
	return p
}

// poolOrder is the order of the smallest block of at least size bytes.
func poolOrder(size int) int {
	k := 0
	for poolMin<<k < size {
		k++
	}
	return k
}

func blockOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// get returns a zeroed block of at least size bytes (nil: no memory).
func (p *slotPool) get(size int) *slotMem {
	order := poolOrder(size)
	p.mu.Lock()
	addr, dirty, ok := p.take(order)
	var c chunk
	if ok {
		c = p.chunks[addr&^(poolChunk-1)]
	}
	p.mu.Unlock()
	if !ok {
		return nil
	}
	off := int(addr & (poolChunk - 1))
	mem := c.mem[off : off+poolMin<<order : off+poolMin<<order]
	node := c.node
	if dirty {
		clear(mem)
	}
	m := &slotMem{mem: mem, pool: p, order: order, node: node}
	m.cleanup = runtime.AddCleanup(m, func(b poolBlock) { b.pool.put(b.addr, b.order, true) }, poolBlock{p, addr, order})
	return m
}

type poolBlock struct {
	pool  *slotPool
	addr  uintptr
	order int
}

// take removes a free block of the order, splitting a larger one or
// mapping a chunk; it returns its address and whether it is dirty.
// Called under p.mu.
func (p *slotPool) take(order int) (addr uintptr, dirty, ok bool) {
	k := order
	for k < poolOrders && len(p.free[k]) == 0 {
		k++
	}
	if k == poolOrders {
		base, ok := p.mapChunk()
		if !ok {
			return 0, false, false
		}
		k = poolOrders - 1
		p.free[k][base] = false
	}
	for a, d := range p.free[k] {
		addr, dirty = a, d
		break
	}
	delete(p.free[k], addr)
	for k > order { // split: keep the lower half, free the upper
		k--
		p.free[k][addr+uintptr(poolMin<<k)] = dirty
	}
	return addr, dirty, true
}

// mapChunk maps a 2 MiB-aligned chunk with transparent huge pages.
func (p *slotPool) mapChunk() (uintptr, bool) {
	// Map twice the size and keep the aligned part: a huge page needs an
	// aligned address.
	mem, err := unix.Mmap(-1, 0, 2*poolChunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return 0, false
	}
	start := blockOf(mem)
	base := (start + poolChunk - 1) &^ (poolChunk - 1)
	head := int(base - start)
	if head > 0 {
		_ = unix.Munmap(mem[:head])
	}
	if tail := mem[head+poolChunk:]; len(tail) > 0 {
		_ = unix.Munmap(tail)
	}
	c := chunk{mem: mem[head : head+poolChunk : head+poolChunk], node: -1}
	_ = unix.Madvise(c.mem, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
	if p.bind && numa.Bind(c.mem, p.node) == nil {
		c.node = p.node
	}
	p.chunks[base] = c
	return base, true
}

// put frees the block at addr of the order, merging it with its free
// buddies; a chunk all free is unmapped.
func (p *slotPool) put(addr uintptr, order int, dirty bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	base := addr &^ (poolChunk - 1)
	for order < poolOrders-1 {
		buddy := addr ^ uintptr(poolMin<<order) // (base is aligned to the chunk)
		d, ok := p.free[order][buddy]
		if !ok {
			break
		}
		delete(p.free[order], buddy)
		dirty = dirty || d
		addr = min(addr, buddy)
		order++
	}
	if order == poolOrders-1 {
		_ = unix.Munmap(p.chunks[base].mem)
		delete(p.chunks, base)
		return
	}
	p.free[order][addr] = dirty
}
