package persist

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist/internal/simword"
)

// Flags modify Copy and Set, like libpmem's PMEM_F_MEM_* flags.
type Flags uint32

const (
	// NoDrain skips the final fence: the data is written back but not yet
	// durable. Several copies can then share one Drain.
	NoDrain Flags = 1 << iota
	// NonTemporal uses streaming stores whatever the size.
	NonTemporal
	// Temporal uses ordinary stores and flushes whatever the size.
	Temporal
	// NoFlush uses ordinary stores and neither flushes nor fences: the
	// caller flushes and drains later. It excludes NonTemporal.
	NoFlush

	allFlags = NoDrain | NonTemporal | Temporal | NoFlush
)

// kind is the hot-path dispatch: one switch instead of an interface call.
type kind uint8

const (
	kCLWB kind = iota
	kCLFLUSHOPT
	kCLFLUSH
	kEADR
	kMsync
	kSim
)

// Region is a mapped range of persistent memory: a file mapped with Map, an
// anonymous mapping, or a simulated region (package persist/crash).
//
// Structures keep offsets into Bytes(), never pointers, and make their
// stores durable with Flush/Drain/Persist/Copy/Set. Those methods take
// slices of Bytes(); a slice that does not lie inside the region is an
// ErrRange error and nothing is flushed. They may be called from many
// goroutines at once. Close, Grow and Sync must not run concurrently with
// anything else on the region; after Close every method returns ErrClosed
// and the memory of Bytes() is gone (touching it faults).
type Region struct {
	mem      []byte
	base     uintptr
	size     int
	kind     kind
	mode     Mode
	ntMin    int
	ntOff    bool // no streaming stores in this build
	fastNT   bool // Copy's inline streaming path applies: a flush or eADR kind, streaming stores in the build
	readOnly bool
	closed   atomic.Bool
	dom      Domain
	info     Info
	os       osMapping
	poison   atomic.Pointer[poisonSet] // poisoned and bad ranges (poison.go)
	failed   atomic.Pointer[SyncError] // the first failed sync (faults.go)

	claimMu sync.Mutex
	claims  []claim
	claimN  uint64

	dev    Device  // the emulated device charged (device_region.go), nil for none
	faults *Faults // Options.Faults (faults.go), nil for none
}

// Bytes returns the mapped memory. The slice is valid until Close or Grow.
func (r *Region) Bytes() []byte { return r.mem }

// Size returns the mapped size in bytes.
func (r *Region) Size() int { return r.size }

// IsPMem reports whether the mapping is real persistent memory: the kernel
// accepted MAP_SYNC (a DAX file system). A forced or simulated region is
// not PMem.
func (r *Region) IsPMem() bool { return r.info.PMem }

// Writable returns nil when the region can be written: ErrClosed after
// Close, ErrReadOnly for a read-only mapping. Structures call it before
// their first store (a store to a read-only mapping is a fatal fault, not
// a panic), and before each operation if the region may be closed under
// them.
func (r *Region) Writable() error {
	if r.closed.Load() {
		return ErrClosed
	}
	if r.readOnly {
		return ErrReadOnly
	}
	return nil
}

// Readable returns nil when the region can be read (ErrClosed after
// Close).
func (r *Region) Readable() error {
	if r.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Info describes what this region runs: mapping kind, durability mode,
// flush instruction, streaming-store path and threshold, and whether it
// has been closed.
func (r *Region) Info() Info {
	i := r.info
	i.Closed = r.closed.Load()
	i.Poisoned = r.Poisoned()
	return i
}

func (r *Region) String() string { return r.Info().String() }

// rangeOf checks that b lies inside the region and returns its offset.
func (r *Region) rangeOf(b []byte) (int, error) {
	if r.closed.Load() {
		return 0, ErrClosed
	}
	if len(b) == 0 {
		return 0, nil
	}
	off := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - r.base
	if off >= uintptr(r.size) || uintptr(len(b)) > uintptr(r.size)-off {
		return 0, r.rangeError(b)
	}
	return int(off), nil
}

func (r *Region) rangeError(b []byte) error {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return fmt.Errorf("%w: %d bytes at %#x, region is %d bytes at %#x", ErrRange, len(b), p, r.size, r.base)
}

// flushLines writes back the lines of [p, p+n) with the region's
// instruction. Only for the three flush kinds.
func (r *Region) flushLines(p unsafe.Pointer, n int) {
	switch r.kind {
	case kCLWB:
		asm.FlushCLWB(p, n)
	case kCLFLUSHOPT:
		asm.FlushCLFLUSHOPT(p, n)
	case kCLFLUSH:
		asm.FlushCLFLUSH(p, n)
	}
}

// Flush starts writing back the cache lines that hold b. They are durable
// after the next Drain (or any fence of the region). On an msync region the
// pages holding b are synced (and so durable) before Flush returns; on an
// eADR region Flush does nothing.
func (r *Region) Flush(b []byte) error {
	if r.kind == kCLWB {
		p := unsafe.Pointer(unsafe.SliceData(b))
		off := uintptr(p) - r.base
		if off < uintptr(r.size) && uintptr(len(b)) <= uintptr(r.size)-off && !r.closed.Load() {
			asm.FlushCLWB(p, len(b))
			return nil
		}
	}
	return r.flush(b)
}

func (r *Region) flush(b []byte) error {
	off, err := r.rangeOf(b)
	if err != nil || len(b) == 0 {
		return err
	}
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH:
		r.flushLines(unsafe.Pointer(unsafe.SliceData(b)), len(b))
		return nil
	case kEADR:
		return nil
	}
	return r.flushSlow(off, len(b))
}

// Drain waits until every earlier Flush and streaming store of this
// goroutine's thread has reached the persistence domain (SFENCE).
func (r *Region) Drain() error {
	if r.closed.Load() {
		return ErrClosed
	}
	switch r.kind {
	case kSim:
		if err := r.Failed(); err != nil {
			return err
		}
		if r.mode != ModeMsync {
			r.dom.Fence()
		}
	case kMsync:
		return r.Failed()
	default:
		asm.SFence()
	}
	return nil
}

// Persist makes b durable: Flush then Drain. When it returns nil, b
// survives a power failure. On a read-only region there is nothing of
// this process's to make durable: Persist (like Flush, Drain and Sync)
// returns nil for a range inside it.
func (r *Region) Persist(b []byte) error {
	// The common case inlined into the caller, one assembly call: every
	// instruction between the store and its CLWB + SFENCE shows in the
	// latency when the store missed the cache.
	if r.kind == kCLWB {
		p := unsafe.Pointer(unsafe.SliceData(b))
		off := uintptr(p) - r.base
		if off < uintptr(r.size) && uintptr(len(b)) <= uintptr(r.size)-off && !r.closed.Load() {
			asm.PersistCLWB(p, len(b))
			return nil
		}
	}
	return r.persist(b)
}

func (r *Region) persist(b []byte) error {
	off, err := r.rangeOf(b)
	if err != nil {
		return err
	}
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH:
		r.flushLines(unsafe.Pointer(unsafe.SliceData(b)), len(b))
		asm.SFence()
		return nil
	case kEADR:
		asm.SFence()
		return nil
	}
	if len(b) > 0 {
		if err := r.flushSlow(off, len(b)); err != nil {
			return err
		}
	} else if err := r.Failed(); err != nil {
		return err
	}
	if r.kind == kSim && r.mode != ModeMsync {
		r.dom.Fence()
	}
	return nil
}

// flushSlow is Flush for msync and simulated regions.
func (r *Region) flushSlow(off, n int) error {
	if err := r.Failed(); err != nil {
		return err
	}
	if r.dev != nil {
		r.charged(off, n)
	}
	if r.kind == kSim {
		if r.mode == ModeMsync {
			lo, hi := pageSpan(off, n)
			return r.simSync(lo, hi-lo)
		}
		if r.mode == ModeFlush {
			r.dom.Flush(off, n)
		}
		return nil
	}
	return r.msync(off, n)
}

func pageSpan(off, n int) (lo, hi int) {
	lo = off &^ (pageSize - 1)
	hi = (off + n + pageSize - 1) &^ (pageSize - 1)
	return lo, hi
}

// Copy copies src into dst, which must lie inside the region and be at least
// as long as src, and makes the copy durable. Copies of MovntThreshold bytes
// or more use streaming stores (unless Temporal or NoFlush), smaller ones
// ordinary stores and a flush. With NoDrain the final fence is left to a
// later Drain; with NoFlush nothing is flushed either. src may be anywhere,
// even overlap dst (then ordinary stores are used).
func (r *Region) Copy(dst, src []byte, flags Flags) error {
	// The common case: a streaming copy to whole words (nothing to flush
	// at the edges) on a flush or eADR region, checked inline and done in
	// one assembly call, the fence included.
	n := len(src)
	if r.fastNT && flags&^(NonTemporal|NoDrain) == 0 && (n >= r.ntMin || flags&NonTemporal != 0) && len(dst) >= n {
		d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
		off := uintptr(d) - r.base
		if off < uintptr(r.size) && uintptr(n) <= uintptr(r.size)-off && (uintptr(d)|uintptr(n))&7 == 0 &&
			!r.readOnly && !r.closed.Load() && !overlap(d, s, n) {
			if flags&NoDrain == 0 {
				asm.CopyNTFence(d, s, n)
			} else {
				asm.CopyNT(d, s, n)
			}
			return nil
		}
	}
	return r.copy(dst, src, flags)
}

func (r *Region) copy(dst, src []byte, flags Flags) error {
	if len(dst) < len(src) {
		return fmt.Errorf("%w: copy of %d bytes into a %d-byte destination", ErrInvalid, len(src), len(dst))
	}
	dst = dst[:len(src)]
	off, err := r.check(dst, flags)
	if err != nil {
		return err
	}
	n := len(src)
	if n == 0 {
		return r.drainUnless(flags)
	}
	d := unsafe.Pointer(unsafe.SliceData(dst))
	s := unsafe.Pointer(unsafe.SliceData(src))
	nt := r.streaming(n, flags) && !overlap(d, s, n)
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH, kEADR:
		if nt {
			asm.CopyNT(d, s, n)
			r.flushEdges(d, n)
		} else {
			copy(dst, src)
			if flags&NoFlush != 0 {
				return nil
			}
			r.flushLines(d, n)
		}
	default:
		copy(dst, src)
		if flags&NoFlush != 0 {
			return nil
		}
		if err := r.writtenSlow(off, n, nt); err != nil {
			return err
		}
	}
	return r.drainUnless(flags)
}

// Set fills dst, which must lie inside the region, with c and makes it
// durable, with the same store kinds and flags as Copy.
func (r *Region) Set(dst []byte, c byte, flags Flags) error {
	off, err := r.check(dst, flags)
	if err != nil {
		return err
	}
	n := len(dst)
	if n == 0 {
		return r.drainUnless(flags)
	}
	d := unsafe.Pointer(unsafe.SliceData(dst))
	nt := r.streaming(n, flags)
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH, kEADR:
		if nt {
			asm.FillNT(d, c, n)
			r.flushEdges(d, n)
		} else {
			fill(dst, c)
			if flags&NoFlush != 0 {
				return nil
			}
			r.flushLines(d, n)
		}
	default:
		fill(dst, c)
		if flags&NoFlush != 0 {
			return nil
		}
		if err := r.writtenSlow(off, n, nt); err != nil {
			return err
		}
	}
	return r.drainUnless(flags)
}

func fill(b []byte, c byte) {
	if c == 0 {
		clear(b)
		return
	}
	for i := range b {
		b[i] = c
	}
}

// check validates a destination range and flags for Copy and Set.
func (r *Region) check(dst []byte, flags Flags) (int, error) {
	if flags&^allFlags != 0 {
		return 0, fmt.Errorf("%w: unknown flags %#x", ErrInvalid, uint32(flags&^allFlags))
	}
	if flags&NonTemporal != 0 && flags&(Temporal|NoFlush) != 0 {
		return 0, fmt.Errorf("%w: NonTemporal excludes Temporal and NoFlush", ErrInvalid)
	}
	off, err := r.rangeOf(dst)
	if err != nil {
		return 0, err
	}
	if r.readOnly {
		return 0, ErrReadOnly
	}
	return off, nil
}

// streaming decides between streaming stores and store+flush.
func (r *Region) streaming(n int, flags Flags) bool {
	if flags&(Temporal|NoFlush) != 0 || r.mode == ModeMsync {
		return false
	}
	if flags&NonTemporal != 0 {
		// A simulated region models streaming stores in every build, so
		// that a simulation replays the same everywhere (NewSimulated).
		return r.kind == kSim || asm.NTPath() != "none"
	}
	return n >= r.ntMin
}

// flushEdges writes back the lines holding the partial words that CopyNT
// and FillNT store with ordinary stores (asm's contract).
func (r *Region) flushEdges(d unsafe.Pointer, n int) {
	if r.kind == kEADR {
		return
	}
	start := uintptr(d)
	end := start + uintptr(n)
	if start&7 != 0 {
		r.flushLines(d, 1)
	}
	if end&7 != 0 {
		r.flushLines(unsafe.Add(d, n-1), 1)
	}
}

func (r *Region) drainUnless(flags Flags) error {
	if flags&(NoDrain|NoFlush) != 0 {
		return nil
	}
	return r.Drain()
}

// writtenSlow tells an msync or simulated region that [off, off+n) was
// written by Copy or Set.
func (r *Region) writtenSlow(off, n int, nt bool) error {
	if r.kind != kSim || r.mode == ModeMsync || !nt {
		return r.flushSlow(off, n)
	}
	if r.dev != nil {
		r.charged(off, n)
	}
	// Mirror asm's contract: whole words inside the range were streamed,
	// partial words at the edges were stored and their lines flushed.
	// eADR streams too (the domain learns which words were stored whole)
	// but flushes nothing.
	lo := (off + 7) &^ 7
	hi := (off + n) &^ 7
	if hi > lo {
		r.dom.Stream(lo, hi-lo)
	}
	if r.mode == ModeEADR {
		return nil
	}
	if lo > off {
		r.dom.Flush(off, 1)
	}
	if hi < off+n && hi >= lo {
		r.dom.Flush(off+n-1, 1)
	}
	return nil
}

func overlap(a, b unsafe.Pointer, n int) bool {
	x, y := uintptr(a), uintptr(b)
	return x < y+uintptr(n) && y < x+uintptr(n)
}

// Slice returns the n bytes at offset off, or ErrRange when they do not lie
// inside the region. Use it to turn offsets read from persistent memory
// into slices: a corrupt offset then becomes an error, not a fault.
func (r *Region) Slice(off, n int) ([]byte, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if off < 0 || n < 0 || off > r.size || n > r.size-off {
		return nil, fmt.Errorf("%w: %d bytes at offset %d, region is %d bytes", ErrRange, n, off, r.size)
	}
	return r.mem[off : off+n : off+n], nil
}

// Offset returns the offset of b inside the region, or ErrRange.
func (r *Region) Offset(b []byte) (int, error) {
	if len(b) == 0 {
		if r.closed.Load() {
			return 0, ErrClosed
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if p < r.base || p > r.base+uintptr(r.size) {
			return 0, r.rangeError(b)
		}
		return int(p - r.base), nil
	}
	return r.rangeOf(b)
}

// Store64 stores v into the first 8 bytes of b with one 8-byte store that
// cannot tear: the way to write a commit word. It panics when b is shorter
// than 8 bytes or not 8-byte aligned — such a store would not be
// failure-atomic, a bug in the caller's layout. On 64-bit platforms it is
// one plain store (no fence: ordering with respect to the media comes from
// Persist); it is not a synchronization operation between goroutines.
func Store64(b []byte, v uint64) {
	if len(b) < 8 {
		short(len(b))
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)&7 != 0 {
		misaligned(p)
	}
	if simword.Active() && simword.Store(p, v) {
		return // simulated memory: the simulator stores and notes it in one step
	}
	if is64bit {
		*(*uint64)(p) = v // one store; see store64
	} else {
		store64(p, v)
	}
}

// Load64 loads the first 8 bytes of b with one 8-byte load. It panics like
// Store64.
func Load64(b []byte) uint64 {
	if len(b) < 8 {
		short(len(b))
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)&7 != 0 {
		misaligned(p)
	}
	if simword.Active() {
		if v, ok := simword.Load(p); ok {
			return v // simulated memory: the simulator sees who reads what
		}
	}
	return atomic.LoadUint64((*uint64)(p))
}

//go:noinline
func short(n int) {
	panic(fmt.Sprintf("persist: 8-byte store or load on a slice of %d bytes", n))
}

//go:noinline
func misaligned(p unsafe.Pointer) {
	panic(fmt.Sprintf("persist: 8-byte store or load at %p, which is not 8-byte aligned", p))
}
