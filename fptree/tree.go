package fptree

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// Tree is an FP-tree in a persist.Region: leaves in the region, inner
// nodes in DRAM. Its methods may be called from many goroutines at once,
// except Check (see the package documentation).
type Tree struct {
	r       *persist.Region
	off     int            // the area's offset in the region
	size    int            // the area's bytes
	g       geom           // the leaf layout
	base    unsafe.Pointer // leaf 0
	cap     int            // leaves
	fan     int            // inner fan-out
	group   int            // GetBatch and PutBatch interleave this many
	ro      bool           // the region is read-only
	release func()         // the claim of the area
	closed  atomic.Bool

	root atomic.Pointer[node]
	meta []leafMeta // per leaf, DRAM

	// smu serializes what changes the chain and the inner nodes (splits,
	// leaf frees), the allocator and the micro logs. Lock order: leaf
	// locks in chain order, then smu, then the new leaf of a split.
	smu   sync.Mutex
	free  []uint32 // free leaves below hwm
	hwm   uint32   // the leaves from hwm on were never used since Open
	mark  uint32   // the mark on the media (layout.go): hwm-1 or more
	count atomic.Int64

	// broken is set when a persist call failed half-way through a
	// change of the chain (the region was closed under the tree): DRAM
	// and media may then disagree, and every later change is refused.
	broken atomic.Pointer[error]

	variant  variant      // a deliberately broken protocol, for the crash tests
	shared   sharedFences // the variant sharedStageFence's (variant.go)
	holdHook func()       // tests: called before PutBatch locks a leaf
	// keepEmpty (tests): a Delete that empties its leaf leaves it linked,
	// as a crash between the delete and the free does, for Open to unlink.
	keepEmpty bool

	// What Open could not read (media.go): the key ranges lost to
	// poisoned leaves, ascending, and whether the chain was cut (then
	// the last range runs to the largest key and no leaf is allocated).
	// Set by Open only.
	lost []lostRange
	cut  bool
}

// leafMeta is a leaf's DRAM companion: its version lock and its key range.
// ver is even when the leaf is unlocked and odd while a writer holds it;
// every unlock advances it, so a reader that saw the same even value
// before and after reading the leaf read a consistent leaf. lo and hi
// bound the keys the leaf holds (hi inclusive); a free leaf has lo > hi.
type leafMeta struct {
	ver atomic.Uint64
	lo  atomic.Uint64
	hi  atomic.Uint64
}

func (m *leafMeta) lock() {
	for spin := 0; ; spin++ {
		v := m.ver.Load()
		if v&1 == 0 && m.ver.CompareAndSwap(v, v+1) {
			return
		}
		backoff(spin)
	}
}

func (m *leafMeta) tryLock() bool {
	v := m.ver.Load()
	return v&1 == 0 && m.ver.CompareAndSwap(v, v+1)
}

func (m *leafMeta) unlock() { m.ver.Add(1) }

// stable waits until the leaf is unlocked and returns its version.
func (m *leafMeta) stable() uint64 {
	for spin := 0; ; spin++ {
		if v := m.ver.Load(); v&1 == 0 {
			return v
		}
		backoff(spin)
	}
}

// covers reports whether k is in the leaf's range.
func (m *leafMeta) covers(k uint64) bool { return m.lo.Load() <= k && k <= m.hi.Load() }

func (m *leafMeta) setRange(lo, hi uint64) {
	m.lo.Store(lo)
	m.hi.Store(hi)
}

// free marks the leaf free: no key is in its range.
func (m *leafMeta) setFree() { m.setRange(1, 0) }

// backoff spins a little, then yields: the holder of a leaf lock may be a
// goroutine waiting for a core.
func backoff(spin int) {
	if spin > 16 {
		runtime.Gosched()
	}
}

// leaf returns the address of leaf i.
func (t *Tree) leaf(i uint32) unsafe.Pointer {
	return unsafe.Add(t.base, uintptr(i)*uintptr(t.g.stride))
}

// leafBytes returns leaf i's bytes.
func (t *Tree) leafBytes(i uint32) []byte {
	return unsafe.Slice((*byte)(t.leaf(i)), t.g.stride)
}

func (t *Tree) logWordBytes(w int) []byte {
	return t.r.Bytes()[t.off+logOff+8*w : t.off+logOff+8*w+8]
}

// Create formats a new, empty tree in r's area of opts (Offset, Size,
// Leaves, LeafSlots) and returns it open. Whatever was there is lost,
// also when Create fails half-way; when it returns nil the empty tree is
// durable, and a crash during it leaves ErrNoTree or the empty tree.
// Create writes the header, the log line and the first leaf's header
// line, not the other leaves (which hold nothing until a split writes
// them whole). It claims the area (persist.Region.Claim) until Close: an
// open structure over any of its bytes is an error wrapping
// persist.ErrBusy, and nothing is written. A read-only or closed region is
// an error wrapping persist.ErrReadOnly or persist.ErrClosed.
func Create(r *persist.Region, opts *Options) (t *Tree, err error) {
	err = guard(r, func() error {
		t, err = create(r, opts)
		return err
	})
	return t, err
}

func create(r *persist.Region, opts *Options) (_ *Tree, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", ErrInvalid)
	}
	if err := r.Writable(); err != nil {
		return nil, regionErr(err, "Create")
	}
	hb, err := treeKind.Place(r, o.Offset)
	if err != nil {
		return nil, err
	}
	g := geometry(o.slots())
	size := o.Size
	switch {
	case size == 0 && o.Leaves > 0:
		size, _ = Footprint(&o)
	case size == 0:
		size = r.Size() - o.Offset
	}
	if size > r.Size()-o.Offset {
		return nil, fmt.Errorf("%w: an area of %d bytes at offset %d, the region has %d", ErrTooSmall, size, o.Offset, r.Size())
	}
	leaves := o.Leaves
	if leaves == 0 {
		leaves = int(min(uint64(max(size-leavesOff, 0)/g.stride), MaxLeaves))
	}
	if leaves < 2 {
		return nil, fmt.Errorf("%w: an area of %d bytes holds %d leaves of %d bytes after the %d bytes of header and logs; a tree needs 2",
			ErrTooSmall, size, leaves, g.stride, leavesOff)
	}
	size = leavesOff + leaves*g.stride
	rel, err := treeKind.Claim(r, o.Offset, size)
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	if err := treeKind.Invalidate(r, hb); err != nil {
		return nil, err
	}
	t := newTree(r, &o, size, g, leaves, rel)
	// The log line and leaf 0's header lines: zeros are an empty log and
	// an empty head leaf (no keys, no next, lo 0); the mark says that
	// only the head was given out.
	if z := r.Bytes()[o.Offset+logOff : o.Offset+leavesOff+g.head]; !zero(z) {
		if err := r.Set(z, 0, persist.NoDrain); err != nil {
			return nil, regionErr(err, "Create")
		}
	}
	mw := t.logWordBytes(markWord)
	persist.Store64(mw, markWordOf(0))
	if err := r.Persist(mw); err != nil {
		return nil, regionErr(err, "Create")
	}
	f := pmheader.Fields{Flags: flagBackLinks | flagMark, Size: uint32(g.m), Stride: uint32(g.stride), Count: uint64(leaves)}
	if err := treeKind.Commit(r, hb, &f); err != nil {
		return nil, err
	}
	t.meta[0].setRange(0, ^uint64(0))
	t.hwm = 1
	t.root.Store(build([]uint64{0}, []uint32{0}, t.fan))
	return t, nil
}

func newTree(r *persist.Region, o *Options, size int, g geom, leaves int, rel func()) *Tree {
	t := &Tree{
		r: r, off: o.Offset, size: size, g: g, cap: leaves,
		base:    unsafe.Pointer(&r.Bytes()[o.Offset+leavesOff]),
		fan:     defaultFanout,
		group:   o.group(),
		ro:      errors.Is(r.Writable(), persist.ErrReadOnly),
		release: rel,
		meta:    make([]leafMeta, leaves),
		variant: correct,
	}
	for i := range t.meta {
		t.meta[i].setFree()
	}
	return t
}

// Close closes the tree and releases its area's claim on the region; the
// region stays open (close the tree, then the region). Every operation
// that returned is durable already, and Close writes nothing. Close may
// run while other methods do: it marks the tree closed and waits for the
// changes in flight (each holds a leaf lock until it is durable or
// abandoned), so that when it returns no method of the tree writes to the
// area again and another tree may open it; a change that had not yet
// locked its leaf returns ErrClosed, and reads in flight finish (the
// region must stay open until they return). A second Close returns
// ErrClosed, as does every operation after Close.
func (t *Tree) Close() error {
	if t.closed.Swap(true) {
		return ErrClosed
	}
	t.smu.Lock()
	hwm := t.hwm // a split in flight holds a leaf below it
	t.smu.Unlock()
	for l := range hwm {
		t.meta[l].lock()
		t.meta[l].unlock()
	}
	t.release()
	return nil
}

// Len returns the number of keys in the tree.
func (t *Tree) Len() int { return int(t.count.Load()) }

// Leaves returns the number of leaves in use and the tree's capacity.
func (t *Tree) Leaves() (used, capacity int) {
	t.smu.Lock()
	defer t.smu.Unlock()
	return int(t.hwm) - len(t.free), t.cap
}

// readable checks the tree and the region before a read.
func (t *Tree) readable() error {
	if t.closed.Load() {
		return ErrClosed
	}
	if err := t.r.Readable(); err != nil {
		return regionErr(err, "a read")
	}
	return nil
}

// writable checks the tree and the region before a change.
func (t *Tree) writable() error {
	if t.closed.Load() {
		return ErrClosed
	}
	if e := t.broken.Load(); e != nil {
		return *e
	}
	if err := t.r.Writable(); err != nil {
		return regionErr(err, "a change")
	}
	if err := t.r.Failed(); err != nil {
		return err // a failed sync: no change the region could not make durable
	}
	return nil
}

// fail records err from the middle of a change of the chain and returns
// it: the tree refuses changes from now on (reads still run).
func (t *Tree) fail(err error) error {
	err = fmt.Errorf("fptree: a change of the leaf chain failed half-way, the tree takes no more changes (reopen it): %w", err)
	t.broken.CompareAndSwap(nil, &err)
	return err
}

func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
