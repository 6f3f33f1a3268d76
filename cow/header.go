package cow

import "github.com/braid-pm/braid/internal/pmheader"

// An Array begins with the header line of internal/pmheader (magic, format,
// CRC-32C, written by Create with the magic last in its own barrier), with
// these fields:
//
//	magic   "braidCOW"
//	flags   flagChecksum when Create was given Options.Checksum
//	size    object size in bytes
//	stride  bytes per object slot
//	count   number of objects
//	aux     0
const flagChecksum = 1 << 0

var arrayKind = pmheader.Kind{
	Magic: pmheader.Magic("braidCOW"), Flags: flagChecksum, Name: "CoW array", Pkg: "cow",
	NoArray: ErrNoArray, BadFormat: ErrBadFormat, Corrupt: ErrCorrupt, Invalid: ErrInvalid, TooSmall: ErrTooSmall,
	ReadOnly: ErrReadOnly,
}

const headerSize = pmheader.Size
