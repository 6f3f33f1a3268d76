package cow

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/braid-pm/braid/internal/invariants"
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
// up to 24-byte objects (sel and both copies in one line, as [VR]'s 16-byte
// case), 64+64 for up to 56 bytes (sel and copy 0 in line 0, copy 1 in line
// 1), and 64 + 2*roundup(size, 64) above that (sel alone in line 0).
//
// An Array keeps no state besides the layout. Update and Read of different
// objects may run concurrently from any number of goroutines. An object
// must have one writer at a time, and a Read of an object must not overlap
// an Update of the same object (two Updates during one Read would
// overwrite the copy it reads); synchronize those yourself.
type Array struct {
	r      *persist.Region
	off    int
	first  int
	end    int
	size   int
	count  int
	stride int
	copy0  int // offset of copy 0 in a slot
	copy1  int
}

func checkSize(size int) error {
	if size < 1 || size > MaxSize {
		return fmt.Errorf("%w: %d bytes; want 1 to %d", ErrSize, size, MaxSize)
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

// Footprint returns the bytes an Array of count objects of size bytes
// occupies from its offset: the 64-byte header and count slots.
func Footprint(size, count int) (int, error) {
	if err := checkSize(size); err != nil {
		return 0, err
	}
	_, _, st := layout(size)
	if count < 1 || count > (int(^uint(0)>>1)-headerSize)/st {
		return 0, fmt.Errorf("%w: count %d", ErrInvalid, count)
	}
	return headerSize + count*st, nil
}

// Create formats an Array of count objects of size bytes (1 to MaxSize) at
// offset off of r (a multiple of 64). Every object reads as zeros. What was
// at that place before is lost, also when Create fails half-way. When
// Create returns nil the array is durable; a crash during it leaves either
// the complete array or ErrNoArray.
func Create(r *persist.Region, off, size, count int) (*Array, error) {
	hb, err := checkPlace(r, off)
	if err != nil {
		return nil, err
	}
	need, err := Footprint(size, count)
	if err != nil {
		return nil, err
	}
	if need > r.Size()-off {
		return nil, fmt.Errorf("%w: %d objects of %d bytes need %d bytes from offset %d, the region has %d",
			ErrTooSmall, count, size, need, off, r.Size()-off)
	}
	if err := invalidate(r, hb); err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	a := newArray(r, off, size, count)
	if err := r.Set(r.Bytes()[a.first:a.end], 0, 0); err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	h := header{size: uint32(size), stride: uint32(a.stride), count: uint64(count)}
	if err := commit(r, hb, &h, magicArray); err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	return a, nil
}

func newArray(r *persist.Region, off, size, count int) *Array {
	c0, c1, st := layout(size)
	return &Array{
		r: r, off: off, first: off + headerSize, end: off + headerSize + count*st,
		size: size, count: count, stride: st, copy0: c0, copy1: c1,
	}
}

// Open opens the Array at offset off of r. There is nothing to recover:
// the selector word of each object names a copy that was durable before
// the selector was. Open returns ErrNoArray for an empty header and an
// error wrapping ErrCorrupt (and persist.ErrCorrupt) for a bad one.
func Open(r *persist.Region, off int) (*Array, error) {
	hb, err := checkPlace(r, off)
	if err != nil {
		return nil, err
	}
	h, err := decodeHeader(hb, magicArray, "CoW array")
	if err != nil {
		return nil, err
	}
	size := int(h.size)
	if checkSize(size) != nil {
		return nil, fmt.Errorf("%w: header says objects of %d bytes", ErrCorrupt, size)
	}
	if _, _, st := layout(size); int(h.stride) != st {
		return nil, fmt.Errorf("%w: header says a stride of %d bytes, %d-byte objects take %d", ErrCorrupt, h.stride, size, st)
	}
	if h.aux != 0 {
		return nil, fmt.Errorf("%w: header has a non-zero aux field %#x", ErrCorrupt, h.aux)
	}
	if h.count == 0 {
		return nil, fmt.Errorf("%w: header says 0 objects", ErrCorrupt)
	}
	if avail := uint64(r.Size()-off-headerSize) / uint64(h.stride); h.count > avail {
		return nil, fmt.Errorf("%w: header says %d objects of %d bytes, the region holds %d from offset %d",
			ErrTooSmall, h.count, size, avail, off)
	}
	return newArray(r, off, size, int(h.count)), nil
}

// Len returns the number of objects.
func (a *Array) Len() int { return a.count }

// Size returns the object size in bytes.
func (a *Array) Size() int { return a.size }

func (a *Array) object(i int) ([]byte, int, error) {
	if uint(i) >= uint(a.count) {
		return nil, 0, errIndex(i, a.count)
	}
	mem := a.r.Bytes()
	if len(mem) < a.end {
		return nil, 0, errClosed()
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
	mem, o, err := a.object(i)
	if err != nil {
		return err
	}
	if len(val) != a.size {
		return errLen("value", len(val), a.size)
	}
	s := sel(mem, o)
	seq := atomic.LoadUint64(s) + 1
	c := o + a.copyAt(seq)
	if err := a.r.Copy(mem[c:c+a.size], val, 0); err != nil {
		return fmt.Errorf("cow: %w", err)
	}
	if invariants.Enabled && !bytes.Equal(mem[c:c+a.size], val) {
		panic(fmt.Sprintf("cow: invariant: inactive copy at %d holds %x after Copy of %x", c, mem[c:c+a.size], val))
	}
	// The flip: one aligned 8-byte store (what persist.Store64 does).
	atomic.StoreUint64(s, seq)
	if err := a.r.Persist(mem[o : o+8]); err != nil {
		return fmt.Errorf("cow: %w", err)
	}
	return nil
}

// Read copies the value of object i into dst (exactly Size() bytes).
func (a *Array) Read(i int, dst []byte) error {
	mem, o, err := a.object(i)
	if err != nil {
		return err
	}
	if len(dst) != a.size {
		return errLen("buffer", len(dst), a.size)
	}
	c := o + a.copyAt(atomic.LoadUint64(sel(mem, o)))
	copy(dst, mem[c:c+a.size])
	return nil
}

// Updates returns the number of completed updates of object i (its
// selector word); the active copy is Updates() % 2.
func (a *Array) Updates(i int) (uint64, error) {
	mem, o, err := a.object(i)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint64(sel(mem, o)), nil
}
