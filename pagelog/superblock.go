package pagelog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// The superblock (format version 4) is written twice: at the start of
// the store and, as its copy, 4 KiB later, in another page, so that one
// damaged or zeroed page loses neither the store nor reads as "no store".
// Each is 64 bytes, little-endian:
//
//	@0  magic     u64  "braidPGL" ("mkPGLsto" while Create runs)
//	@8  version   u32  formatVersion
//	@12 layout    u32  Packed, TwoWord or Checksum
//	@16 pageSize  u32
//	@20 pidBits   u32  (Packed; 0 otherwise)
//	@24 pages     u64
//	@32 slots     u64
//	@40 flags     u32  flagPayloadCRC
//	@44 logBytes  u32  bytes of each lane's micro log (0 for Checksum)
//	@48 role      u8   0 in the superblock, 1 in its copy
//	@49 reserved  7 bytes, zero
//	@56 crc       u32  CRC32C of bytes [8, 56)
//	@60 reserved  u32, zero
//
// Create writes creatingMagic into both first, and both magics last, in a
// barrier of its own after everything else is durable: a crash during
// Create leaves the area as it was (before the first barrier), "a Create
// did not finish" (ErrNoStore) or the new store. Open reads whichever
// copy is sound and rewrites the other.
//
// Format 1 (unchecked slot headers) is not read: its headers could not
// tell a bit flip from a page id. Neither is format 2, whose micro log was
// one entry per lane in a log of its own, written with four barriers, nor
// format 3, whose superblock had no copy (and whose micro logs were walog
// logs of format 2).
const (
	formatVersion = 4
	superUsed     = 64
	superCopyOff  = 4096 // the copy, in the superblock area's second page

	offSuperRole = 48

	flagPayloadCRC = 1 << 0
	knownFlags     = flagPayloadCRC
)

var (
	magic = pmheader.Magic("braidPGL")
	// creatingMagic marks a Create in progress; it differs from every
	// registered magic in many bits (TestCreatingMagic).
	creatingMagic = pmheader.Magic("mkPGLsto")
)

// super is the decoded superblock.
type super struct {
	layout     Layout
	pageSize   int
	pidBits    int
	pages      int
	slots      int
	payloadCRC bool
	logBytes   int
}

// encodeSuper fills b (superUsed bytes) with the superblock of the given
// role, magic included.
func encodeSuper(b []byte, s super, role byte) {
	clear(b[:superUsed])
	le := binary.LittleEndian
	le.PutUint64(b[0:], magic)
	le.PutUint32(b[8:], formatVersion)
	le.PutUint32(b[12:], uint32(s.layout))
	le.PutUint32(b[16:], uint32(s.pageSize))
	le.PutUint32(b[20:], uint32(s.pidBits))
	le.PutUint64(b[24:], uint64(s.pages))
	le.PutUint64(b[32:], uint64(s.slots))
	if s.payloadCRC {
		le.PutUint32(b[40:], flagPayloadCRC)
	}
	le.PutUint32(b[44:], uint32(s.logBytes))
	b[offSuperRole] = role
	le.PutUint32(b[56:], persist.CRC32C(b[8:56]))
}

// superState is what one copy of the superblock holds.
type superState uint8

const (
	superSound      superState = iota // this format and role, every check holds
	superZero                         // a zero magic
	superCreating                     // creatingMagic: a Create did not finish
	superForeign                      // another registered kind's magic
	superOldVersion                   // a sound pagelog superblock of another version
	superDamaged                      // a pagelog superblock that fails a check
	superOther                        // an unknown magic over bytes that are no superblock
	superIsCopy                       // a sound copy where the superblock belongs
	superTooLarge                     // sound, of a store this process cannot hold
)

type superCopy struct {
	state   superState
	s       super
	version uint32
	err     error // superDamaged, superTooLarge: what is wrong
	why     string
	media   error // superDamaged: the copy is unreadable (media.go)
}

// decodeSuper checks and decodes one copy of the superblock (at least
// superUsed bytes) whose role should be role.
func decodeSuper(b []byte, role byte) superCopy {
	le := binary.LittleEndian
	crcOK := le.Uint32(b[56:]) == persist.CRC32C(b[8:56])
	damaged := func(format string, args ...any) superCopy {
		err := corrupt("superblock "+format, args...)
		return superCopy{state: superDamaged, err: err, why: bare(err)}
	}
	switch m := le.Uint64(b); {
	case m == magic:
	case m == creatingMagic:
		return superCopy{state: superCreating, why: "is a Create that did not finish"}
	case m == 0:
		return superCopy{state: superZero, why: "has a zero magic"}
	case crcOK && le.Uint32(b[8:]) == formatVersion:
		// The rest is a sound superblock: the magic itself was hit.
		return damaged("magic %q over fields whose checksum holds, want %q", b[0:8], "braidPGL")
	default:
		if _, ok := pmheader.Known(m); ok {
			return superCopy{state: superForeign, why: "holds " + pmheader.Identify(b)}
		}
		return superCopy{state: superOther, why: "holds " + pmheader.Identify(b)}
	}
	if !crcOK {
		return damaged("checksum %#08x, computed %#08x", le.Uint32(b[56:]), persist.CRC32C(b[8:56]))
	}
	if v := le.Uint32(b[8:]); v != formatVersion {
		return superCopy{state: superOldVersion, version: v, why: fmt.Sprintf("is of format version %d", v)}
	}
	if r := le.Uint32(b[60:]); r != 0 {
		return damaged("reserved word %#08x, want 0", r)
	}
	if b[offSuperRole] != role {
		if role == 0 && b[offSuperRole] == 1 {
			return superCopy{state: superIsCopy, why: "holds the copy of the superblock of a store that starts 4096 bytes before"}
		}
		return damaged("role %d where the %s belongs", b[offSuperRole], [2]string{"superblock", "superblock's copy"}[role])
	}
	if f := le.Uint32(b[40:]); f&^knownFlags != 0 {
		return damaged("has unknown flags %#x", f&^knownFlags)
	}
	if !isZeroBytes(b[offSuperRole+1 : 56]) {
		return damaged("reserved bytes are not zero")
	}
	l, ps, pb := le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])
	pages, slots := le.Uint64(b[24:]), le.Uint64(b[32:])
	crcFlag := le.Uint32(b[40:])&flagPayloadCRC != 0
	switch {
	case l < uint32(Packed) || l > uint32(Checksum):
		return damaged("layout %d", l)
	case ps < MinPageSize || ps > MaxPageSize || ps%MinPageSize != 0:
		return damaged("page size %d", ps)
	case slots == 0 || slots > formatMaxSlots || pages == 0 || pages >= slots || slots-pages > MaxSpares:
		return damaged("says %d pages in %d slots", pages, slots)
	case slots > MaxSlots:
		// A valid store, of more slots than an int counts (32-bit only).
		err := fmt.Errorf("%w: the store has %d slots, more than a %d-bit process can map (%d)", ErrTooSmall, slots, bits.UintSize, MaxSlots)
		return superCopy{state: superTooLarge, err: err}
	case crcFlag && l == uint32(Checksum):
		return damaged("payload-CRC flag on the checksum layout")
	}
	lb := le.Uint32(b[44:])
	switch {
	case l == uint32(Checksum) && lb != 0:
		return damaged("micro logs of %d bytes on the checksum layout", lb)
	case l != uint32(Checksum) && (lb%walogBlock != 0 || int(lb) < minMicroLogBytes(int(ps)) || lb > maxMicroLogBytes):
		return damaged("micro logs of %d bytes for %d-byte pages", lb, ps)
	}
	s := super{layout: Layout(l), pageSize: int(ps), pidBits: int(pb), pages: int(pages), slots: int(slots), payloadCRC: crcFlag, logBytes: int(lb)}
	if s.layout == Packed {
		if pb < uint32(pidBitsFor(s.pages)) || pb > maxPIDBits {
			return damaged("pid bits %d for %d pages", pb, pages)
		}
	} else if pb != 0 {
		return damaged("pid bits %d for layout %v", pb, s.layout)
	}
	return superCopy{state: superSound, s: s}
}

// readSuper reads the superblock of the store at mem (the region from the
// store's offset on) from whichever copy is sound, and says which copy was
// not and why (note, "" when both were). Its errors say what the area
// holds: ErrNoStore when nothing (zeroes where a store would have its
// superblocks, headers and first logs) or a Create that did not finish;
// ErrBadFormat for another kind of structure, another format version, or
// bytes that are no superblock in either copy; ErrCorrupt for a
// superblock damaged in both copies, or zeroed over a store.
//
// Each copy is read under the guard of r: a poisoned one counts as
// damaged, and both poisoned is ErrCorrupt wrapping the media error.
func readSuper(r *persist.Region, mem []byte, off int) (s super, note string, err error) {
	if len(mem) < superCopyOff+superUsed {
		return s, "", fmt.Errorf("%w: %d bytes from offset %d: no room for a superblock and its copy", ErrBadFormat, len(mem), off)
	}
	decodeSuper := func(b []byte, role byte) superCopy {
		var c superCopy
		if err := persist.Guard(func() error { c = decodeSuper(b, role); return nil }, r); err != nil {
			return superCopy{state: superDamaged, err: err, media: err, why: "is unreadable (" + err.Error() + ")"}
		}
		return c
	}
	p := decodeSuper(mem, 0)
	switch p.state {
	case superSound:
		c := decodeSuper(mem[superCopyOff:], 1)
		switch {
		case c.state != superSound:
			note = "the superblock's copy " + c.why
		case c.s != p.s:
			return s, "", corrupt("the superblock and its copy describe different stores")
		}
		return p.s, note, nil
	case superTooLarge:
		return s, "", p.err
	case superCreating:
		return s, "", fmt.Errorf("%w (offset %d): a Create did not finish here; Create the store again", ErrNoStore, off)
	case superForeign, superIsCopy:
		return s, "", fmt.Errorf("%w: the superblock at offset %d %s", ErrBadFormat, off, p.why)
	case superOldVersion:
		return s, "", fmt.Errorf("%w: the store at offset %d is of format version %d; this build reads version %d only (recreate the store, or open it with the build that wrote it)", ErrBadFormat, off, p.version, formatVersion)
	}
	c := decodeSuper(mem[superCopyOff:], 1)
	empty := mem[:min(len(mem), emptyCheck)]
	switch {
	case c.state == superSound:
		return c.s, "the superblock " + p.why, nil
	case c.state == superTooLarge:
		return s, "", c.err
	case c.state == superCreating:
		return s, "", fmt.Errorf("%w (offset %d): a Create did not finish here; Create the store again", ErrNoStore, off)
	case p.state == superZero && c.state == superZero && isZeroBytes(empty):
		return s, "", fmt.Errorf("%w (offset %d): the area is empty; Create a store", ErrNoStore, off)
	case p.state == superOther && (c.state == superOther || c.state == superZero || c.state == superForeign):
		return s, "", fmt.Errorf("%w: the superblock at offset %d %s", ErrBadFormat, off, p.why)
	}
	if p.media != nil && c.media != nil {
		return s, "", unreadable(p.media, "the superblock at offset %d and its copy are both on poisoned media", off)
	}
	what := "; the area holds data"
	if p.state == superZero && c.state == superZero {
		what = fmt.Sprintf(" (zeroed), but the area is not empty: byte %d is not zero", off+bytes.IndexFunc(empty, func(r rune) bool { return r != 0 }))
	}
	return s, "", corrupt("the superblock at offset %d %s and its copy %s%s: a damaged store, not an empty area. Nothing was changed", off, p.why, c.why, what)
}

// emptyCheck is how much of an area without a superblock must be zero for
// it to hold no store: the superblock area, the slot headers of Create's
// pages (every one of them non-zero) and the first micro logs.
const emptyCheck = 1 << 20

func isZeroBytes(b []byte) bool {
	for len(b) > 0 {
		k := min(len(b), len(zeroPage))
		if !bytes.Equal(b[:k], zeroPage[:k]) {
			return false
		}
		b = b[k:]
	}
	return true
}

var zeroPage [4096]byte

// bare is the text of an error of this package without the corruption
// sentinel's.
func bare(err error) string {
	return strings.TrimPrefix(err.Error(), ErrCorrupt.Error()+": ")
}

// super is the superblock of the store's geometry.
func (s *Store) super() super {
	g := &s.g
	return super{layout: g.layout, pageSize: g.pageSize, pidBits: int(g.pidBits), pages: g.pages, slots: g.slots, payloadCRC: g.crc, logBytes: g.logStride}
}

// syncSuper rewrites each copy of the superblock that is not what the
// store's geometry says (damaged, zeroed, left "being created" by a crash):
// its fields, persisted, then its magic, persisted. It returns whether it
// wrote.
func (s *Store) syncSuper() (bool, error) {
	sb := s.super()
	var want [superUsed]byte
	wrote := false
	for role, at := range []int{0, superCopyOff} {
		encodeSuper(want[:], sb, byte(role))
		b := s.mem[at : at+superUsed]
		if len(s.r.PoisonedIn(s.off+at, superUsed)) > 0 {
			continue // a copy on poisoned media is neither read nor rewritten
		}
		if bytes.Equal(b, want[:]) {
			continue
		}
		wrote = true
		err := s.guard(func() error {
			if err := s.r.Copy(b[8:], want[8:], 0); err != nil {
				return err
			}
			persist.Store64(b, magic)
			return s.r.Persist(b[:8])
		})
		if isMedia(err) {
			continue // a copy on poisoned media is not rewritten (media.go)
		}
		if err != nil {
			return wrote, err
		}
	}
	return wrote, nil
}

// writeSupers writes both copies of a new store's superblock: the fields
// of both (one barrier), then both magics (one barrier). The magics were
// creatingMagic.
func (s *Store) writeSupers() error {
	sb := s.super()
	var want [superUsed]byte
	for role, at := range []int{0, superCopyOff} {
		encodeSuper(want[:], sb, byte(role))
		if err := s.r.Copy(s.mem[at+8:at+superUsed], want[8:], persist.NoDrain); err != nil {
			return err
		}
	}
	if err := s.r.Drain(); err != nil {
		return err
	}
	return s.storeMagics(magic)
}

// storeMagics stores m as the magic of both copies of the superblock and
// persists them (one barrier).
func (s *Store) storeMagics(m uint64) error {
	p, c := s.mem[:8], s.mem[superCopyOff:superCopyOff+8]
	persist.Store64(p, m)
	persist.Store64(c, m)
	if err := s.r.Flush(p); err != nil {
		return err
	}
	if err := s.r.Flush(c); err != nil {
		return err
	}
	return s.r.Drain()
}
