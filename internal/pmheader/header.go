// Package pmheader is braid's magic registry and header codec.
//
// The registry (Kinds, Known, Identify) lists the magic of every kind of
// persistent structure braid writes — walog logs, pagelog stores, sort run
// files, cow and fam arrays, fptree trees, kv segments and checkpoints — so
// that every Open that finds another kind's magic can say which kind it
// found ("a walog log, not a CoW array") instead of "bad magic". Every
// braid format starts with its 8-byte magic at offset 0 of its area.
//
// The codec is the 64-byte header line of the structures written since
// (cow, fam, and the newer kinds): one cache line at the structure's
// offset that says what is there and vouches for it. This package holds
// what every such kind shares: the layout of the line, its CRC-32C, the
// checks a reader makes, and the order in which a creator writes it. Each
// package keeps its own magic, its own error sentinels and the meaning of
// the fields. walog, pagelog and sort keep the header formats they had
// before the codec (their magics are in the registry all the same).
//
// The line, little-endian:
//
//	 0  magic    u64  eight ASCII bytes naming the kind ("braidCOW")
//	 8  format   u32  Format (1)
//	12  flags    u32  bits defined per kind; any other bit is 0
//	16  size     u32  object size in bytes
//	20  stride   u32  bytes per object slot
//	24  count    u64  number of objects
//	32  aux      u64  defined per kind; 0 when unused
//	40  reserved u64  0
//	48  reserved u64  0
//	56  crc      u32  CRC-32C (Castagnoli) of bytes 8..55
//	60  reserved u32  0
//
// # What is durable when
//
// A creator calls Invalidate before it rewrites the array's body and Commit
// after the body is durable. Invalidate makes a zero magic durable (one
// barrier, none when the magic is already zero); Commit makes bytes 8..63
// durable, then stores the magic with one 8-byte store and makes it durable
// (two barriers), so the magic never reaches the media before the fields it
// vouches for. A crash anywhere in between leaves a zero magic, which Decode
// reports as the kind's NoArray error, never a magic over half-written
// fields or objects. The CRC catches media corruption and stray writes in
// the fields; Decode reports it, and the other checks of a damaged line, as
// the kind's Corrupt error.
//
// # Another structure, or damage
//
// Decode tells bytes that are not this kind's line at all (a wrong offset,
// another kind of array, a walog log, a pagelog store, arbitrary data)
// from a line of this kind that was damaged, by the magic and the CRC:
//
//	magic                     CRC of 8..55  result
//	this kind's               fails         Corrupt
//	this kind's               holds         the fields are checked
//	0                         any           NoArray (nothing finished here)
//	another kind's (Kinds)    any           BadFormat: another kind's line
//	unknown                   holds         Corrupt: a line of this format
//	                                        whose magic was hit
//	unknown                   fails         BadFormat: not a line of this
//	                                        format at all
//
// The magics of the kinds differ in many bits, so no single flipped bit
// or byte turns one into another: a flip in the magic of a sound line is
// Corrupt, a flip anywhere else fails the CRC (Corrupt). Another version
// of the format, or a flag this build does not define, under a sound CRC,
// is BadFormat too: something wrote it, but not this build.
package pmheader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

const (
	// Size is the bytes of the header line.
	Size = 64
	// Format is the format version this package writes and reads.
	Format = 1
)

// Magic returns the magic word of an eight-byte name such as "braidCOW".
// It panics on another length: names are constants of the calling package.
func Magic(name string) uint64 {
	if len(name) != 8 {
		panic(fmt.Sprintf("pmheader: magic %q is not 8 bytes", name))
	}
	return binary.LittleEndian.Uint64([]byte(name))
}

// Fields are the fields of the line but the magic and the checksum.
type Fields struct {
	Flags  uint32
	Size   uint32
	Stride uint32
	Count  uint64
	Aux    uint64
}

// Kind is one kind of array: the magic that marks it, the flag bits it
// defines, and the sentinels of its package. Every error of Place and
// Decode wraps one of those sentinels; errors of package persist
// (persist.ErrClosed, persist.ErrBusy) are returned as they are, their
// text names their package (no "cow: persist: ..." stutter), and a
// read-only region is the kind's ReadOnly sentinel when it has one.
type Kind struct {
	Magic uint64 // see Magic
	Flags uint32 // flag bits this kind defines
	Name  string // the kind in messages: "CoW array"
	Pkg   string // the package that writes it: "cow"

	NoArray   error // Decode: the magic is zero
	BadFormat error // Decode: not a line of this kind; must not wrap persist.ErrCorrupt
	Corrupt   error // Decode: a failed check; should wrap persist.ErrCorrupt
	Invalid   error // Place: nil region, bad offset, unaligned memory
	TooSmall  error // Place, Extent: the array does not fit in the region
	ReadOnly  error // Invalidate: the region is read-only (nil: persist.ErrReadOnly); should match persist.ErrReadOnly
}

// Encode writes every field of f but the magic into b (Size bytes): the
// format, the reserved zeros and the checksum.
func Encode(b []byte, f *Fields) {
	_ = b[Size-1]
	binary.LittleEndian.PutUint32(b[8:], Format)
	binary.LittleEndian.PutUint32(b[12:], f.Flags)
	binary.LittleEndian.PutUint32(b[16:], f.Size)
	binary.LittleEndian.PutUint32(b[20:], f.Stride)
	binary.LittleEndian.PutUint64(b[24:], f.Count)
	binary.LittleEndian.PutUint64(b[32:], f.Aux)
	clear(b[40:56])
	binary.LittleEndian.PutUint32(b[56:], persist.CRC32C(b[8:56]))
	binary.LittleEndian.PutUint32(b[60:], 0)
}

// Decode checks the line in b (Size bytes) and returns its fields: a zero
// magic is k.NoArray; another kind's line or bytes that are no line of this
// format (see the package comment), another format version and a flag k
// does not define are k.BadFormat; a bad checksum under k's magic, a magic
// hit over a sound line and a non-zero reserved field are k.Corrupt.
// Whether the fields make sense for the kind is the caller's to check.
func (k *Kind) Decode(b []byte) (Fields, error) {
	var f Fields
	_ = b[Size-1]
	crcOK := binary.LittleEndian.Uint32(b[56:]) == persist.CRC32C(b[8:56])
	want := binary.LittleEndian.AppendUint64(nil, k.Magic)
	switch m := binary.LittleEndian.Uint64(b); {
	case m == k.Magic:
	case m == 0:
		return f, k.NoArray
	default:
		if name, ok := Known(m); ok {
			return f, fmt.Errorf("%w: header magic %q marks a %s, not a %s (%q)", k.BadFormat, b[:8], name, k.Name, want)
		}
		if crcOK {
			return f, fmt.Errorf("%w: header magic %q, want %q, over fields whose checksum holds (the magic was damaged)",
				k.Corrupt, b[:8], want)
		}
		return f, fmt.Errorf("%w: header magic %q is not a %s's (%q) nor any array's", k.BadFormat, b[:8], k.Name, want)
	}
	if !crcOK {
		return f, fmt.Errorf("%w: header checksum %#08x, want %#08x",
			k.Corrupt, binary.LittleEndian.Uint32(b[56:]), persist.CRC32C(b[8:56]))
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Format {
		return f, fmt.Errorf("%w: header format version %d, this build reads %d", k.BadFormat, v, Format)
	}
	f.Flags = binary.LittleEndian.Uint32(b[12:])
	if f.Flags&^k.Flags != 0 {
		return f, fmt.Errorf("%w: header flags %#x, a %s of this build defines %#x", k.BadFormat, f.Flags, k.Name, k.Flags)
	}
	if binary.LittleEndian.Uint64(b[40:]) != 0 || binary.LittleEndian.Uint64(b[48:]) != 0 ||
		binary.LittleEndian.Uint32(b[60:]) != 0 {
		return f, fmt.Errorf("%w: header has non-zero reserved fields", k.Corrupt)
	}
	f.Size = binary.LittleEndian.Uint32(b[16:])
	f.Stride = binary.LittleEndian.Uint32(b[20:])
	f.Count = binary.LittleEndian.Uint64(b[24:])
	f.Aux = binary.LittleEndian.Uint64(b[32:])
	return f, nil
}

// Place validates the place of an array and returns its header line: r
// open, off a non-negative multiple of 64 (a cache line) with the line
// inside r, and the memory there 8-byte aligned, as every 8-byte store of
// the array must be. It reads and writes nothing.
func (k *Kind) Place(r *persist.Region, off int) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil region", k.Invalid)
	}
	if err := r.Readable(); err != nil {
		return nil, k.wrap(err)
	}
	if off < 0 || off%64 != 0 {
		return nil, fmt.Errorf("%w: offset %d is not a non-negative multiple of 64", k.Invalid, off)
	}
	if off > r.Size()-Size {
		return nil, fmt.Errorf("%w: header at offset %d does not fit in a %d-byte region", k.TooSmall, off, r.Size())
	}
	hb, err := r.Slice(off, Size)
	if err != nil {
		return nil, k.wrap(err)
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(hb)))&7 != 0 {
		return nil, fmt.Errorf("%w: region memory at offset %d is not 8-byte aligned", k.Invalid, off)
	}
	return hb, nil
}

// Extent checks that the slots f describes fit in r: f.Count (not 0, else
// k.Corrupt) slots of f.Stride bytes (not 0) after the header line at off
// and fixed more bytes (a kind's logs), else k.TooSmall. It returns the
// count as an int.
func (k *Kind) Extent(r *persist.Region, off, fixed int, f Fields) (int, error) {
	if f.Count == 0 || f.Stride == 0 {
		return 0, fmt.Errorf("%w: header says %d objects in slots of %d bytes", k.Corrupt, f.Count, f.Stride)
	}
	room := r.Size() - off - Size
	if fixed > room || f.Count > uint64(room-fixed)/uint64(f.Stride) {
		return 0, fmt.Errorf("%w: header says %d objects in slots of %d bytes after %d bytes of header and logs, more than the %d bytes from offset %d",
			k.TooSmall, f.Count, f.Stride, Size+fixed, r.Size()-off, off)
	}
	return int(f.Count), nil
}

// Invalidate begins a Create at the header line hb of r: it checks that r
// is writable (an error wrapping persist.ErrReadOnly or persist.ErrClosed,
// before any store: a store to a read-only mapping is a fatal fault), then
// clears the magic durably, so that a crash while the body is rewritten
// leaves no array rather than the old header over half-initialized objects.
func (k *Kind) Invalidate(r *persist.Region, hb []byte) error {
	if err := r.Writable(); err != nil {
		return k.wrap(err)
	}
	if persist.Load64(hb) == 0 {
		return nil
	}
	persist.Store64(hb, 0)
	return k.wrap(r.Persist(hb[:8]))
}

// Commit ends a Create: it makes the fields f durable, then the magic (two
// barriers). The body must be durable before Commit is called.
func (k *Kind) Commit(r *persist.Region, hb []byte, f *Fields) error {
	Encode(hb, f)
	if err := r.Persist(hb[8:Size]); err != nil {
		return k.wrap(err)
	}
	persist.Store64(hb, k.Magic)
	return k.wrap(r.Persist(hb[:8]))
}

// Claim claims the n bytes of an array at off of r for the open array
// (persist.Region.Claim, with the kind's name as the owner) until release
// is called: while they are claimed, another Create or Open of anything
// that claims, over any of those bytes of r, fails with an error wrapping
// persist.ErrBusy. Creators claim before Invalidate, so that a Create over
// an open structure writes nothing.
func (k *Kind) Claim(r *persist.Region, off, n int) (release func(), err error) {
	rel, err := r.Claim(off, n, k.Name)
	if err != nil {
		return nil, k.wrap(err)
	}
	return rel, nil
}

// ReleaseOnError calls release when *err is not nil: the deferred cleanup
// of a Create or Open that failed after its Claim. It also releases when
// a panic goes through — a fault on poisoned media that persist.Guard
// turns into an error further up — and lets the panic go on.
func ReleaseOnError(release func(), err *error) {
	if p := recover(); p != nil {
		release()
		panic(p)
	}
	if *err != nil {
		release()
	}
}

// wrap returns an error of package persist as it is, but a read-only
// region as the kind's ReadOnly sentinel.
func (k *Kind) wrap(err error) error {
	if k.ReadOnly != nil && errors.Is(err, persist.ErrReadOnly) {
		return k.ReadOnly
	}
	return err
}
