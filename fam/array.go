package fam

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// MaxSize is the largest object, in bytes, an Array or LogArray holds.
const MaxSize = 1024

// Array is a fixed number of same-sized FAM objects in a region: a header
// line at the array's offset, then the objects, each starting on a cache
// line (Footprint says how many bytes that takes). Every Update is
// failure-atomic with one persist barrier.
//
// An Array keeps no state of its own besides the layout: all of it is in
// the region. It holds its area's claim on the region (see Create) until
// Close; after Close its methods return ErrClosed. Finish every operation
// on it before Close, and close it before its region (a closed region's
// arrays return an error wrapping persist.ErrClosed). Update and Read of different
// objects may run concurrently from any number of goroutines. An object
// must have one writer at a time, and a Read of an object must not overlap
// an Update of the same object (it may see part of each version);
// synchronize those yourself, for example with one mutex per object or by
// partitioning objects among goroutines.
type Array struct {
	r      *persist.Region
	off    int // header
	first  int // object 0
	end    int // first + count*stride
	size   int
	count  int
	stride int
	nb     int  // FAMBs per object
	ro     bool // the region is read-only
	rolled int
	lost   int // objects recovery could not read (poisoned media)

	closed  atomic.Bool
	release func() // of the area's claim on the region
}

// Options say where an Array is and what it holds. A nil *Options means
// the defaults: offset 0 and, for Create, no objects (an error: Create
// needs ObjectSize and Count).
type Options struct {
	// Offset is where the array starts in the region, a multiple of 64
	// (Create and Open).
	Offset int
	// ObjectSize is the bytes of each object, a multiple of 4 from 4 to
	// MaxSize (Create; Open reads it from the header, and one set that
	// differs is ErrInvalid).
	ObjectSize int
	// Count is the number of objects, at least 1 (Create; Open reads it
	// from the header, and one set that differs is ErrInvalid).
	Count int
}

func (o *Options) area() Options {
	if o == nil {
		return Options{}
	}
	return *o
}

// Validate reports the first problem with the options for Create: an
// offset that is not a non-negative multiple of 64 or a count below 1 (or
// whose footprint overflows an int) wraps ErrInvalid, a bad object size
// ErrSize.
func (o *Options) Validate() error {
	v := o.area()
	if err := checkOffset(v.Offset); err != nil {
		return err
	}
	if err := checkSize(v.ObjectSize); err != nil {
		return err
	}
	return checkCount(v.Count, headerSize, stride(v.ObjectSize), v.ObjectSize)
}

func checkOffset(off int) error {
	if off < 0 || off%64 != 0 {
		return fmt.Errorf("%w: Offset %d is not a non-negative multiple of 64", ErrInvalid, off)
	}
	return nil
}

func checkSize(size int) error {
	if size < 4 || size > MaxSize || size%4 != 0 {
		return fmt.Errorf("%w: ObjectSize %d; want a multiple of 4 from 4 to %d", ErrSize, size, MaxSize)
	}
	return nil
}

// checkCount checks that count objects in slots of st bytes after fixed
// bytes fit in an int.
func checkCount(count, fixed, st, size int) error {
	if max := (math.MaxInt - fixed) / st; count < 1 || count > max {
		return fmt.Errorf("%w: Count %d, want 1 to %d objects of %d bytes", ErrInvalid, count, max, size)
	}
	return nil
}

// Footprint returns the bytes an Array of opts.Count objects of
// opts.ObjectSize bytes occupies from its offset: a 64-byte header, then
// Count slots, each the object's FAMBs (ObjectSize/4 data FAMBs and one
// meta FAMB per 31 of them, 8 bytes each) rounded up to whole cache lines:
// 64 bytes for 4 to 28-byte objects, 128 for 32, 192 for 64, 576 for 256.
// It returns the error of opts.Validate.
func Footprint(opts *Options) (int, error) {
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	return headerSize + opts.Count*stride(opts.ObjectSize), nil
}

// Create formats an Array of opts.Count objects of opts.ObjectSize bytes
// at opts.Offset of r. Every object reads as zeros. Whatever was at that
// place before is lost, also when Create fails half-way. When Create
// returns nil the array is durable; if it is interrupted by a crash, Open
// finds either the complete array or ErrNoArray. A read-only or closed
// region is ErrReadOnly or persist.ErrClosed, and nothing is written; bad
// options are the errors of Options.Validate.
//
// Create, like Open, claims the array's bytes (Footprint) on r until
// Close (persist.Region.Claim): while an array, a walog log, a pagelog
// store or anything else that claims is open on any of them, Create
// fails with an error wrapping persist.ErrBusy and writes nothing.
func Create(r *persist.Region, opts *Options) (a *Array, err error) {
	err = guard(r, func() error {
		a, err = create(r, opts)
		return err
	})
	return a, err
}

func create(r *persist.Region, opts *Options) (_ *Array, err error) {
	o := opts.area()
	hb, err := arrayKind.Place(r, o.Offset)
	if err != nil {
		return nil, err
	}
	need, err := Footprint(&o)
	if err != nil {
		return nil, err
	}
	if need > r.Size()-o.Offset {
		return nil, fmt.Errorf("%w: %d objects of %d bytes need %d bytes from offset %d, the region has %d",
			ErrTooSmall, o.Count, o.ObjectSize, need, o.Offset, r.Size()-o.Offset)
	}
	rel, err := arrayKind.Claim(r, o.Offset, need)
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	if err := arrayKind.Invalidate(r, hb); err != nil {
		return nil, err
	}
	a := newArray(r, o.Offset, o.ObjectSize, o.Count, rel)
	// All-zero FAMBs are a valid FAM: version 0, value 0.
	if err := r.Set(r.Bytes()[a.first:a.end], 0, 0); err != nil {
		return nil, err
	}
	h := pmheader.Fields{Size: uint32(a.size), Stride: uint32(a.stride), Count: uint64(a.count)}
	if err := arrayKind.Commit(r, hb, &h); err != nil {
		return nil, err
	}
	return a, nil
}

func newArray(r *persist.Region, off, size, count int, release func()) *Array {
	st := stride(size)
	return &Array{
		r: r, off: off, first: off + headerSize, end: off + headerSize + count*st,
		size: size, count: count, stride: st, nb: blocks(size),
		ro:      errors.Is(r.Writable(), persist.ErrReadOnly),
		release: release,
	}
}

// Close closes the array and releases its area's claim on the region; the
// region stays open (close the arrays first, then the region). Every
// Update that returned is durable already, and Close writes nothing. A
// second Close returns ErrClosed, as does every operation after Close;
// Close must not run concurrently with another method of the array.
func (a *Array) Close() error {
	if a.closed.Swap(true) {
		return ErrClosed
	}
	a.release()
	return nil
}

// Open opens the Array at opts.Offset of r (the other options are read
// from the header; nil means offset 0) and recovers it: every object
// whose FAMBs a crash left at two adjacent versions is rolled back to the
// older one, and made durable, before Open returns. Afterwards every object
// holds the value of its last completed Update, or of the Update that was
// running at the crash. Recovery reads every object once; it is idempotent,
// so a crash during Open is recovered by the next Open. Open returns
// ErrNoArray for an empty header, ErrBadFormat for a header that is not a
// FAM array's (a LogArray, a cow.Array, a walog log, a pagelog store, other
// bytes), and an error wrapping ErrCorrupt (and persist.ErrCorrupt) for a
// damaged header or an object whose versions no crash can produce. Open
// claims the array's bytes as Create does (an open structure over them is
// an error wrapping persist.ErrBusy) before it writes anything; a failed
// Open leaves nothing claimed.
//
// In a read-only region Open writes nothing: it opens an array that needs
// no rollback (Update then returns an error wrapping persist.ErrReadOnly),
// and returns an error wrapping persist.ErrReadOnly for one that does, as
// its torn objects cannot be read until a writable Open rolls them back.
func Open(r *persist.Region, opts *Options) (*Array, error) {
	a, err := open(r, opts.area().Offset, true)
	if err != nil {
		return nil, err
	}
	o := opts.area()
	if err := matchObjects(o.ObjectSize, o.Count, a.size, a.count); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// matchObjects checks the object size and count given to Open or OpenLog
// against the array's: one set (non-zero) that contradicts it is
// ErrInvalid (the options are wrong, the array is sound).
func matchObjects(wantSize, wantCount, size, count int) error {
	switch {
	case wantSize != 0 && wantSize != size:
		return fmt.Errorf("%w: ObjectSize %d in the options, the array holds objects of %d bytes", ErrInvalid, wantSize, size)
	case wantCount != 0 && wantCount != count:
		return fmt.Errorf("%w: Count %d in the options, the array holds %d objects", ErrInvalid, wantCount, count)
	}
	return nil
}

// open is Open under persist.Guard: a poisoned header is a
// *persist.MediaError. (Recovery guards its own scan: it goes on past a
// poisoned object.)
func open(r *persist.Region, off int, recover bool) (a *Array, err error) {
	err = guard(r, func() error {
		a, err = openGuarded(r, off, recover)
		return err
	})
	return a, err
}

// openGuarded is Open; the crash tests open without recovery to show that
// the simulator catches a FAM that ignores versions.
func openGuarded(r *persist.Region, off int, recover bool) (_ *Array, err error) {
	hb, err := arrayKind.Place(r, off)
	if err != nil {
		return nil, err
	}
	h, err := arrayKind.Decode(hb)
	if err != nil {
		return nil, err
	}
	size := int(h.Size)
	if checkSize(size) != nil {
		return nil, fmt.Errorf("%w: header says objects of %d bytes", ErrCorrupt, size)
	}
	if int(h.Stride) != stride(size) {
		return nil, fmt.Errorf("%w: header says a stride of %d bytes, %d-byte objects take %d", ErrCorrupt, h.Stride, size, stride(size))
	}
	if h.Aux != 0 {
		return nil, fmt.Errorf("%w: header has a non-zero aux field %#x", ErrCorrupt, h.Aux)
	}
	count, err := arrayKind.Extent(r, off, 0, h)
	if err != nil {
		return nil, err
	}
	rel, err := arrayKind.Claim(r, off, headerSize+count*stride(size))
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	a := newArray(r, off, size, count, rel)
	if recover {
		if err := a.recover(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// recover rolls back every object that ran ahead, then fences once. In a
// read-only region the first object that needs a rollback ends it, before
// any store. An object on poisoned media is left as it is (its Read is
// ErrMedia) and the scan goes on after it: a poisoned page costs the
// objects on it, not the array.
func (a *Array) recover() error {
	var bad error
	for i := 0; i < a.count; {
		err := guard(a.r, func() error {
			var err error
			bad, err = a.rollForward(i)
			return err
		})
		var me *persist.MediaError
		if errors.As(err, &me) && me.Off >= int64(a.first) && me.Off < int64(a.end) {
			// The objects on the unreadable range are lost to recovery;
			// resume with the first one past it.
			at := (int(me.Off) - a.first) / a.stride
			_, hi := me.Range()
			next := min(max(at+1, (int(hi)-a.first+a.stride-1)/a.stride), a.count)
			a.lost += next - at
			i = next
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if a.rolled > 0 {
		if err := a.r.Drain(); err != nil {
			return err
		}
	}
	return bad
}

// rollForward is recover's scan from object from on: it returns the first
// bad object's error, or a flush's error.
func (a *Array) rollForward(from int) (bad, err error) {
	mem := a.r.Bytes()
	for i := from; i < a.count; i++ {
		o := a.first + i*a.stride
		ws := a.blocksAt(mem, o)
		m := versionsOf(ws)
		if single(m) {
			continue
		}
		if _, ok := aheadOf(m); !ok {
			bad = a.mixed(i, m)
			break
		}
		if a.ro {
			bad = fmt.Errorf("%w: object %d was torn by a crash (FAM blocks at versions {%s}) and must be rolled back",
				ErrReadOnly, i, versionList(m))
			break
		}
		if rolled, _ := rollback(ws); rolled {
			a.rolled++
			if err := a.r.Flush(mem[o : o+a.nb*8]); err != nil {
				return nil, err
			}
		}
	}
	return bad, nil
}

func (a *Array) blocksAt(mem []byte, o int) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[o])), a.nb)
}

func (a *Array) mixed(i int, m uint) error {
	return fmt.Errorf("%w: object %d has FAM blocks at versions {%s} (possible after a crash: one version, or two adjacent ones before Open)",
		ErrCorrupt, i, versionList(m))
}

// versionList lists the versions of a version mask: "1,2".
func versionList(m uint) string {
	var vs []string
	for v := range 4 {
		if m&(1<<v) != 0 {
			vs = append(vs, fmt.Sprint(v))
		}
	}
	return strings.Join(vs, ",")
}

// Len returns the number of objects.
func (a *Array) Len() int { return a.count }

// Size returns the object size in bytes.
func (a *Array) Size() int { return a.size }

// Recovered returns how many objects Open rolled back.
func (a *Array) Recovered() int { return a.rolled }

// object checks i and the region and returns the memory and the offset of
// object i.
func (a *Array) object(i int) ([]byte, int, error) {
	if a.closed.Load() {
		return nil, 0, ErrClosed
	}
	if uint(i) >= uint(a.count) {
		return nil, 0, errIndex(i, a.count)
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return nil, 0, persist.ErrClosed
	}
	return mem, a.first + i*a.stride, nil
}

// The update and read paths below check everything with one branch and
// build the error out of line (badUpdate, badRead): a durable 16-byte
// update is one cache line written back and waited for, and every call or
// test in front of its stores shows in its latency when the line missed
// the cache.

// badUpdate returns the error of an Update-like call that failed the fast
// path's checks: a value of n bytes (what names it) for object i. A closed
// array comes first; then Update checks the index and the region, then the value's length; the
// typed helpers (typed) check the array's object size first. Read-only
// comes last.
func (a *Array) badUpdate(i int, mem []byte, n int, what string, typed bool) error {
	if a.closed.Load() {
		return ErrClosed
	}
	if typed && n != a.size {
		return errLen(what, n, a.size)
	}
	if uint(i) >= uint(a.count) {
		return errIndex(i, a.count)
	}
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	if n != a.size {
		return errLen(what, n, a.size)
	}
	return ErrReadOnly
}

// badRead is badUpdate for Read-like calls.
func (a *Array) badRead(i int, mem []byte, n int, what string, typed bool) error {
	if a.closed.Load() {
		return ErrClosed
	}
	if typed && n != a.size {
		return errLen(what, n, a.size)
	}
	if uint(i) >= uint(a.count) {
		return errIndex(i, a.count)
	}
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	return errLen(what, n, a.size)
}

// Update makes val (exactly Size() bytes) the value of object i, durable
// when Update returns nil: every FAMB of the object is rewritten with one
// 8-byte store, the object's cache lines are flushed, and one fence waits
// for them. If a crash interrupts it, Open finds the object at its old or
// its new value, never a mix.
func (a *Array) Update(i int, val []byte) error {
	if err := a.r.Failed(); err != nil {
		return err // no write in place the region could not make durable
	}
	return guard(a.r, func() error { return a.update(i, val) })
}

func (a *Array) update(i int, val []byte) error {
	mem := a.r.Bytes()
	if uint(i) >= uint(a.count) || len(val) != a.size || len(mem) < a.end || a.ro || a.closed.Load() {
		return a.badUpdate(i, mem, len(val), "value", false)
	}
	o := a.first + i*a.stride
	p := unsafe.Pointer(&mem[o])
	var ok bool
	switch a.size {
	case 16:
		ok = update16((*[5]uint64)(p), le32(val[0:]), le32(val[4:]), le32(val[8:]), le32(val[12:]))
	case 8:
		ok = update8((*[3]uint64)(p), le32(val[0:]), le32(val[4:]))
	default:
		ok = update(unsafe.Slice((*uint64)(p), a.nb), val)
	}
	if !ok {
		return a.mixed(i, versionsOf(a.blocksAt(mem, o)))
	}
	if invariants.Enabled {
		a.checkStored(mem, o, val)
	}
	if err := a.r.Persist(mem[o : o+a.nb*8]); err != nil {
		return err
	}
	return nil
}

// checkStored panics unless the object at o decodes to val at one version
// (invariants build only).
func (a *Array) checkStored(mem []byte, o int, val []byte) {
	ws := a.blocksAt(mem, o)
	got := make([]byte, len(val))
	decode(ws, got)
	if !single(versionsOf(ws)) || !bytes.Equal(got, val) {
		panic(fmt.Sprintf("fam: invariant: object at %d holds %x (versions %04b) right after storing %x", o, got, versionsOf(ws), val))
	}
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// Read copies the value of object i into dst (exactly Size() bytes).
// On poisoned media it is a *persist.MediaError and dst is zeroed.
func (a *Array) Read(i int, dst []byte) error {
	err := guard(a.r, func() error { return a.read(i, dst) })
	if err != nil && len(dst) == a.size && errors.Is(err, persist.ErrMedia) {
		clear(dst)
	}
	return err
}

func (a *Array) read(i int, dst []byte) error {
	mem := a.r.Bytes()
	if uint(i) >= uint(a.count) || len(dst) != a.size || len(mem) < a.end || a.closed.Load() {
		return a.badRead(i, mem, len(dst), "buffer", false)
	}
	o := a.first + i*a.stride
	p := unsafe.Pointer(&mem[o])
	ok := true
	switch a.size {
	case 16:
		var v [16]byte
		v, ok = read16((*[5]uint64)(p))
		copy(dst, v[:])
	case 8:
		var v uint64
		v, ok = read8((*[3]uint64)(p))
		binary.LittleEndian.PutUint64(dst, v)
	default:
		ws := a.blocksAt(mem, o)
		if ok = single(versionsOf(ws)); ok {
			decode(ws, dst)
		}
	}
	if !ok {
		return a.mixed(i, versionsOf(a.blocksAt(mem, o)))
	}
	return nil
}

// Update16 is Update for arrays of 16-byte objects.
func (a *Array) Update16(i int, v [16]byte) error {
	if err := a.r.Failed(); err != nil {
		return err
	}
	return guard(a.r, func() error { return a.update16(i, v) })
}

func (a *Array) update16(i int, v [16]byte) error {
	mem := a.r.Bytes()
	if uint(i) >= uint(a.count) || a.size != 16 || len(mem) < a.end || a.ro || a.closed.Load() {
		return a.badUpdate(i, mem, 16, "a [16]byte", true)
	}
	o := a.first + i*a.stride
	p := (*[5]uint64)(unsafe.Pointer(&mem[o]))
	if !update16(p, le32(v[0:]), le32(v[4:]), le32(v[8:]), le32(v[12:])) {
		return a.mixed(i, versionsOf(p[:]))
	}
	if invariants.Enabled {
		a.checkStored(mem, o, v[:])
	}
	if err := a.r.Persist(mem[o : o+5*8]); err != nil {
		return err
	}
	return nil
}

// Read16 is Read for arrays of 16-byte objects.
func (a *Array) Read16(i int) (v [16]byte, err error) {
	err = guard(a.r, func() error {
		v, err = a.read16(i)
		return err
	})
	return v, err
}

func (a *Array) read16(i int) ([16]byte, error) {
	mem := a.r.Bytes()
	if uint(i) >= uint(a.count) || a.size != 16 || len(mem) < a.end || a.closed.Load() {
		return [16]byte{}, a.badRead(i, mem, 16, "a [16]byte", true)
	}
	p := (*[5]uint64)(unsafe.Pointer(&mem[a.first+i*a.stride]))
	v, ok := read16(p)
	if !ok {
		return [16]byte{}, a.mixed(i, versionsOf(p[:]))
	}
	return v, nil
}

// UpdateUint64 is Update for arrays of 8-byte objects, v stored
// little-endian. (A lone uint64 needs no FAM, an aligned 8-byte store is
// failure-atomic by itself; this is for values that sit in a FAM array.)
func (a *Array) UpdateUint64(i int, v uint64) error {
	if err := a.r.Failed(); err != nil {
		return err
	}
	return guard(a.r, func() error { return a.updateUint64(i, v) })
}

func (a *Array) updateUint64(i int, v uint64) error {
	mem := a.r.Bytes()
	if uint(i) >= uint(a.count) || a.size != 8 || len(mem) < a.end || a.ro || a.closed.Load() {
		return a.badUpdate(i, mem, 8, "a uint64", true)
	}
	o := a.first + i*a.stride
	p := (*[3]uint64)(unsafe.Pointer(&mem[o]))
	if !update8(p, uint32(v), uint32(v>>32)) {
		return a.mixed(i, versionsOf(p[:]))
	}
	if invariants.Enabled {
		a.checkStored(mem, o, binary.LittleEndian.AppendUint64(nil, v))
	}
	if err := a.r.Persist(mem[o : o+3*8]); err != nil {
		return err
	}
	return nil
}

// Uint64 is Read for arrays of 8-byte objects.
func (a *Array) Uint64(i int) (v uint64, err error) {
	err = guard(a.r, func() error {
		v, err = a.uint64(i)
		return err
	})
	return v, err
}

func (a *Array) uint64(i int) (uint64, error) {
	mem := a.r.Bytes()
	if uint(i) >= uint(a.count) || a.size != 8 || len(mem) < a.end || a.closed.Load() {
		return 0, a.badRead(i, mem, 8, "a uint64", true)
	}
	p := (*[3]uint64)(unsafe.Pointer(&mem[a.first+i*a.stride]))
	v, ok := read8(p)
	if !ok {
		return 0, a.mixed(i, versionsOf(p[:]))
	}
	return v, nil
}

// Check verifies that every object's FAMBs share one version, as they do
// after Open and between Updates. It returns the first violation, wrapping
// ErrCorrupt; an object on poisoned media is a *persist.MediaError.
func (a *Array) Check() error { return guard(a.r, a.check) }

func (a *Array) check() error {
	if a.closed.Load() {
		return ErrClosed
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	for i := range a.count {
		if m := versionsOf(a.blocksAt(mem, a.first+i*a.stride)); !single(m) {
			return a.mixed(i, m)
		}
	}
	return nil
}
