package fam

import "github.com/braid-pm/braid/internal/pmheader"

// An Array or LogArray begins with the header line of internal/pmheader
// (magic, format, CRC-32C, written by Create with the magic last in its own
// barrier), with these fields:
//
//	magic   "braidFAM" (Array) or "braidFLG" (LogArray)
//	flags   0
//	size    object size in bytes
//	stride  bytes per object slot
//	count   number of objects
//	aux     LogArray: lanes (low 32 bits) | log bytes per lane (high 32); Array: 0
var (
	arrayKind = pmheader.Kind{
		Magic: pmheader.Magic("braidFAM"), Name: "FAM array", Pkg: "fam",
		NoArray: ErrNoArray, BadFormat: ErrBadFormat, Corrupt: ErrCorrupt, Invalid: ErrInvalid, TooSmall: ErrTooSmall, ReadOnly: ErrReadOnly,
	}
	logKind = pmheader.Kind{
		Magic: pmheader.Magic("braidFLG"), Name: "FAM log array", Pkg: "fam",
		NoArray: ErrNoArray, BadFormat: ErrBadFormat, Corrupt: ErrCorrupt, Invalid: ErrInvalid, TooSmall: ErrTooSmall, ReadOnly: ErrReadOnly,
	}
)

const headerSize = pmheader.Size
