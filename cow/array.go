package cow

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// MaxSize is the largest object, in bytes, an Array holds.
const MaxSize = 1024

// Array is a fixed number of same-sized two-version objects in a region: a
// header line at the array's offset, then one slot per object. A slot is a
// selector word and two copies of the object:
//
//	sel   u64  number of completed updates; copy sel&1 is the active one
//	copy 0     at 8, or at 64 when 8+size > 64
//	copy 1     right after copy 0 when both fit in the first line with sel,
//	           else on the next cache line boundary after copy 0
//
// Copies start at 8-byte boundaries; a slot is whole cache lines: 64 bytes
// up to 24-byte objects (sel and both copies in one line, as for the
// paper's 16 bytes, §3.4.1), 64+64 for up to 56 bytes (sel and copy 0 in line 0, copy 1 in line
// 1), and 64 + 2*roundup(size, 64) above that (sel alone in line 0).
//
// With Options.Checksum the layout is the same, and the selector word
// carries the check of the copy it names:
//
//	sel   bits 31..0   number of completed updates, mod 2^32; copy sel&1
//	      bits 63..32  CRC-32C of that copy's bytes, seeded with bits 31..0
//
// so the flip that makes a copy active stores its check in the same 8-byte
// store: no other word to write, flush or read.
//
// An Array keeps no state besides the layout. It holds its area's claim on
// the region (see Create) until Close; after Close its methods return
// ErrClosed. Finish every operation on it before Close, and close it before
// its region (a closed region's arrays return an error wrapping
// persist.ErrClosed). Update
// and Read of different objects may run concurrently from any number of
// goroutines. An object must have one writer at a time, and a Read of an
// object must not overlap an Update of the same object (two Updates during
// one Read would overwrite the copy it reads); synchronize those yourself.
type Array struct {
	r      *persist.Region
	off    int
	first  int
	end    int
	size   int
	count  int
	stride int
	copy0  int    // offset of copy 0 in a slot
	copy1  int    // offset of copy 1 in a slot
	sum    bool   // checksummed
	ro     bool   // the region is read-only
	zsum   uint32 // check of zeros under count 0 (what Create writes)

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
	// ObjectSize is the bytes of each object, 1 to MaxSize (Create; Open
	// reads it from the header).
	ObjectSize int
	// Count is the number of objects, at least 1 (Create; Open reads it
	// from the header, and one set that differs is ErrInvalid).
	Count int
	// Checksum keeps a CRC-32C of the active copy in the upper half of
	// the selector word, stored by the same 8-byte store that makes the
	// copy active, and verified by every Read and by Check: a copy or
	// selector changed on the media since (a bit flip, a stray write) and
	// a zeroed slot are ErrCorrupt instead of data. It costs a CRC of the
	// object per Update and per Read, and Updates counts modulo 2^32; the
	// layout and the barriers are the same. Create only: Open reads the
	// choice from the header.
	Checksum bool
}

func (o *Options) offset() int {
	if o == nil {
		return 0
	}
	return o.Offset
}

// Validate reports the first problem with the options for Create: an
// offset that is not a non-negative multiple of 64 or a count below 1 (or
// whose footprint overflows an int) wraps ErrInvalid, an object size
// outside 1..MaxSize ErrSize.
func (o *Options) Validate() error {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Offset < 0 || v.Offset%64 != 0 {
		return fmt.Errorf("%w: Offset %d is not a non-negative multiple of 64", ErrInvalid, v.Offset)
	}
	if err := checkSize(v.ObjectSize); err != nil {
		return err
	}
	_, _, st := layout(v.ObjectSize)
	if v.Count < 1 || v.Count > (int(^uint(0)>>1)-headerSize)/st {
		return fmt.Errorf("%w: Count %d, want 1 to %d objects of %d bytes", ErrInvalid, v.Count, (int(^uint(0)>>1)-headerSize)/st, v.ObjectSize)
	}
	return nil
}

func checkSize(size int) error {
	if size < 1 || size > MaxSize {
		return fmt.Errorf("%w: ObjectSize %d; want 1 to %d", ErrSize, size, MaxSize)
	}
	return nil
}

// layout places the selector and the two copies of a size-byte object.
func layout(size int) (copy0, copy1, stride int) {
	n := (size + 7) &^ 7
	switch {
	case 8+2*n <= 64:
		return 8, 8 + n, 64
	case 8+n <= 64:
		return 8, 64, 64 + (n+63)&^63
	}
	l := (n + 63) &^ 63
	return 64, 64 + l, 64 + 2*l
}

// Footprint returns the bytes an Array of opts.Count objects of
// opts.ObjectSize bytes occupies from its offset: the 64-byte header and
// Count slots, with or without checksums (see the README's layout). It
// returns the error of opts.Validate.
func Footprint(opts *Options) (int, error) {
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	_, _, st := layout(opts.ObjectSize)
	return headerSize + opts.Count*st, nil
}

// Create formats an Array of opts.Count objects of opts.ObjectSize bytes
// at opts.Offset of r. Every object reads as zeros. What was at that place
// before is lost, also when Create fails half-way. When Create returns nil
// the array is durable; a crash during it leaves either the complete
// array or ErrNoArray. A read-only or closed region is ErrReadOnly or
// persist.ErrClosed, and nothing is written; bad options are the errors
// of Options.Validate.
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
	off := opts.offset()
	hb, err := arrayKind.Place(r, off)
	if err != nil {
		return nil, err
	}
	need, err := Footprint(opts)
	if err != nil {
		return nil, err
	}
	size, count := opts.ObjectSize, opts.Count
	if need > r.Size()-off {
		return nil, fmt.Errorf("%w: %d objects of %d bytes need %d bytes from offset %d, the region has %d",
			ErrTooSmall, count, size, need, off, r.Size()-off)
	}
	rel, err := arrayKind.Claim(r, off, need)
	if err != nil {
		return nil, err
	}
	defer pmheader.ReleaseOnError(rel, &err)
	if err := arrayKind.Invalidate(r, hb); err != nil {
		return nil, err
	}
	a := newArray(r, off, size, count, opts.Checksum, rel)
	if err := a.format(); err != nil {
		return nil, err
	}
	h := pmheader.Fields{Size: uint32(size), Stride: uint32(a.stride), Count: uint64(count)}
	if a.sum {
		h.Flags = flagChecksum
	}
	if err := arrayKind.Commit(r, hb, &h); err != nil {
		return nil, err
	}
	return a, nil
}

// format zeroes the slots durably. With checksums the selector words get
// the check of zeros (copy 0, count 0).
func (a *Array) format() error {
	mem := a.r.Bytes()
	if !a.sum {
		return a.r.Set(mem[a.first:a.end], 0, 0)
	}
	if err := a.r.Set(mem[a.first:a.end], 0, persist.NoFlush); err != nil {
		return err
	}
	w := uint64(a.zsum) << 32
	for o := a.first; o < a.end; o += a.stride {
		persist.Store64(mem[o:], w)
	}
	return a.r.Persist(mem[a.first:a.end])
}

func newArray(r *persist.Region, off, size, count int, sum bool, release func()) *Array {
	c0, c1, st := layout(size)
	a := &Array{
		r: r, off: off, first: off + headerSize, end: off + headerSize + count*st,
		size: size, count: count, stride: st, copy0: c0, copy1: c1, sum: sum,
		ro:      errors.Is(r.Writable(), persist.ErrReadOnly),
		release: release,
	}
	if sum {
		var zeros [MaxSize]byte
		a.zsum = check(0, zeros[:size])
	}
	return a
}

// Open opens the Array at opts.Offset of r (the other options are read
// from the header; nil means offset 0; one set that contradicts the
// header is an error wrapping ErrInvalid). There is nothing to recover:
// the selector word of each object names a copy that was durable before
// the selector was. Open writes nothing, so it also opens an array in a
// read-only region (whose Update then returns an error wrapping
// ErrReadOnly). Open returns ErrNoArray for an empty header,
// ErrBadFormat for one that is not a CoW array's (a fam.Array or
// fam.LogArray, a walog log, a pagelog store, other bytes), and an error
// wrapping ErrCorrupt (and persist.ErrCorrupt) for a damaged one. Open
// claims the array's bytes as Create does (an open structure over them is
// an error wrapping persist.ErrBusy); a failed Open leaves nothing
// claimed.
func Open(r *persist.Region, opts *Options) (a *Array, err error) {
	err = guard(r, func() error {
		a, err = open(r, opts)
		return err
	})
	if err == nil {
		if err = opts.match(a.size, a.count, a.sum); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, err
}

// match checks the options given to Open against the array: a field set
// that contradicts it is ErrInvalid (the options are wrong, the array is
// sound).
func (o *Options) match(size, count int, sum bool) error {
	switch {
	case o == nil:
		return nil
	case o.ObjectSize != 0 && o.ObjectSize != size:
		return fmt.Errorf("%w: Options.ObjectSize %d, the array holds objects of %d bytes", ErrInvalid, o.ObjectSize, size)
	case o.Count != 0 && o.Count != count:
		return fmt.Errorf("%w: Options.Count %d, the array holds %d objects", ErrInvalid, o.Count, count)
	case o.Checksum && !sum:
		return fmt.Errorf("%w: Options.Checksum, the array was created without checksums", ErrInvalid)
	}
	return nil
}

func open(r *persist.Region, opts *Options) (*Array, error) {
	off := opts.offset()
	hb, err := arrayKind.Place(r, off)
	if err != nil {
		return nil, err
	}
	h, err := arrayKind.Decode(hb)
	if err != nil {
		return nil, err
	}
	size, sum := int(h.Size), h.Flags&flagChecksum != 0
	if checkSize(size) != nil {
		return nil, fmt.Errorf("%w: header says objects of %d bytes", ErrCorrupt, size)
	}
	if _, _, st := layout(size); int(h.Stride) != st {
		return nil, fmt.Errorf("%w: header says a stride of %d bytes, %d-byte objects take %d", ErrCorrupt, h.Stride, size, st)
	}
	if h.Aux != 0 {
		return nil, fmt.Errorf("%w: header has a non-zero aux field %#x", ErrCorrupt, h.Aux)
	}
	count, err := arrayKind.Extent(r, off, 0, h)
	if err != nil {
		return nil, err
	}
	_, _, st := layout(size)
	rel, err := arrayKind.Claim(r, off, headerSize+count*st)
	if err != nil {
		return nil, err
	}
	return newArray(r, off, size, count, sum, rel), nil
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

// Len returns the number of objects.
func (a *Array) Len() int { return a.count }

// Size returns the object size in bytes.
func (a *Array) Size() int { return a.size }

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

// sel returns the selector word of the slot at o.
func sel(mem []byte, o int) *uint64 { return (*uint64)(unsafe.Pointer(&mem[o])) }

// copyAt returns the offset in a slot of the copy that selector value s
// makes active.
func (a *Array) copyAt(s uint64) int {
	if s&1 == 0 {
		return a.copy0
	}
	return a.copy1
}

// Update makes val (exactly Size() bytes) the value of object i, durable
// when Update returns nil. It writes val into the inactive copy and makes
// it durable (first barrier), then advances the selector with one 8-byte
// store and makes that durable (second barrier). The active copy is never
// written, so after a crash the object is its old value (the selector
// store did not reach the media) or its new one.
func (a *Array) Update(i int, val []byte) error {
	if err := a.r.Failed(); err != nil {
		return err // no write the region could not make durable
	}
	return guard(a.r, func() error { return a.update(i, val) })
}

func (a *Array) update(i int, val []byte) error {
	mem, o, err := a.object(i)
	if err != nil {
		return err
	}
	if len(val) != a.size {
		return errLen("value", len(val), a.size)
	}
	if a.ro {
		return ErrReadOnly
	}
	s := sel(mem, o)
	seq := atomic.LoadUint64(s) + 1
	if a.sum {
		// The count in the low half; the check of the new copy in the
		// high half, flipped in with it.
		seq = uint64(uint32(seq)) | uint64(check(uint32(seq), val))<<32
	}
	c := o + a.copyAt(seq)
	if err := a.r.Copy(mem[c:c+a.size], val, 0); err != nil {
		return err
	}
	if invariants.Enabled && !bytes.Equal(mem[c:c+a.size], val) {
		panic(fmt.Sprintf("cow: invariant: inactive copy at %d holds %x after Copy of %x", c, mem[c:c+a.size], val))
	}
	// The flip: one aligned 8-byte store. (atomic.StoreUint64 would be an
	// XCHG on amd64, which also waits for the store buffer to drain.)
	persist.Store64(mem[o:], seq)
	return a.r.Persist(mem[o : o+8])
}

// Read copies the value of object i into dst (exactly Size() bytes). In a
// checksummed array it then verifies what it copied against the check in
// the selector word: a mismatch is an error wrapping ErrCorrupt, and dst is
// zeroed.
func (a *Array) Read(i int, dst []byte) error {
	err := guard(a.r, func() error { return a.read(i, dst) })
	if errors.Is(err, persist.ErrMedia) && len(dst) == a.size {
		clear(dst)
	}
	return err
}

func (a *Array) read(i int, dst []byte) error {
	mem, o, err := a.object(i)
	if err != nil {
		return err
	}
	if len(dst) != a.size {
		return errLen("buffer", len(dst), a.size)
	}
	if a.sum {
		return a.readChecked(i, mem, o, dst)
	}
	c := o + a.copyAt(atomic.LoadUint64(sel(mem, o)))
	copy(dst, mem[c:c+a.size])
	return nil
}

// readChecked is Read for a checksummed array.
func (a *Array) readChecked(i int, mem []byte, o int, dst []byte) error {
	w := atomic.LoadUint64(sel(mem, o))
	c := o + a.copyAt(w)
	copy(dst, mem[c:c+a.size])
	// Check what is returned, not the media a second time.
	if want := check(uint32(w), dst); uint32(w>>32) != want {
		clear(dst)
		return a.mismatch(i, w, want)
	}
	return nil
}

// check is the check of a copy holding v that count seq makes active:
// CRC-32C of v seeded with seq, so that the check of a copy holds under
// that count only (a flipped count bit, even the lowest, which names the
// other copy, fails it).
func check(seq uint32, v []byte) uint32 {
	return persist.UpdateCRC32C(seq, v)
}

func (a *Array) mismatch(i int, w uint64, want uint32) error {
	return fmt.Errorf("%w: object %d: selector word %#016x (count %d, check %#08x), copy %d gives check %#08x",
		ErrCorrupt, i, w, uint32(w), uint32(w>>32), w&1, want)
}

// Check verifies every object of a checksummed array (see Read) and
// returns the first mismatch, wrapping ErrCorrupt; an array without
// checksums has nothing to verify. Open does not do it: it reads the
// header only.
func (a *Array) Check() error {
	return guard(a.r, a.check)
}

func (a *Array) check() error {
	if a.closed.Load() {
		return ErrClosed
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return persist.ErrClosed
	}
	if !a.sum {
		// Nothing to verify but that the slots can be read: a load of
		// every line, so that poisoned media is reported here.
		var x byte
		for o := a.first; o < a.end; o += 64 {
			x |= mem[o]
		}
		runtime.KeepAlive(x)
		return nil
	}
	for i := range a.count {
		o := a.first + i*a.stride
		w := atomic.LoadUint64(sel(mem, o))
		c := o + a.copyAt(w)
		if want := check(uint32(w), mem[c:c+a.size]); uint32(w>>32) != want {
			return a.mismatch(i, w, want)
		}
	}
	return nil
}

// Checksum reports whether the array keeps a check of each object
// (Options.Checksum at Create).
func (a *Array) Checksum() bool { return a.sum }

// Updates returns the number of completed updates of object i (its
// selector word; modulo 2^32 in a checksummed array); the active copy is
// Updates() % 2.
func (a *Array) Updates(i int) (n uint64, err error) {
	err = guard(a.r, func() error {
		n, err = a.updates(i)
		return err
	})
	return n, err
}

func (a *Array) updates(i int) (uint64, error) {
	mem, o, err := a.object(i)
	if err != nil {
		return 0, err
	}
	w := atomic.LoadUint64(sel(mem, o))
	if a.sum {
		w = uint64(uint32(w))
	}
	return w, nil
}
