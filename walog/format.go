package walog

import "fmt"

// Format is the on-media encoding of a log's entries. All three share the
// log header and the API; they differ in how an entry proves it is
// complete after a crash, and so in what an append costs. In all three an
// entry also carries a CRC-32C that proves it intact (unless the log was
// created with Options.NoChecksum).
type Format uint8

const (
	// PopLog writes header, data and a popcount of all their bits, and
	// persists them with one barrier ([VR] §3.3.1). The log is zeroed
	// ahead of use, so a word that never reached the media reads as zero
	// and the recounted popcount falls short of the stored one.
	PopLog Format = 1
	// RAWL (Mnemosyne's torn-bit log) keeps one validity bit in every
	// 64-bit word, 63 data bits; an entry is complete when all its words
	// carry the current validity sense, which flips on each pass over the
	// log, so passes after the first need no zeroing. One barrier.
	RAWL Format = 2
	// Classic persists header and data (barrier 1), then a commit marker
	// after them (barrier 2): the log libpmemlog-style designs use.
	Classic Format = 3
)

func (f Format) String() string {
	switch f {
	case PopLog:
		return "poplog"
	case RAWL:
		return "rawl"
	case Classic:
		return "classic"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat turns a name printed by Format.String back into a Format.
func ParseFormat(s string) (Format, error) {
	for _, f := range []Format{PopLog, RAWL, Classic} {
		if s == f.String() {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown log format %q (want poplog, rawl or classic)", ErrInvalid, s)
}

func (f Format) valid() bool { return f >= PopLog && f <= Classic }

// zeroed reports whether the format relies on zeroed free space (PopLog
// and Classic) rather than validity bits (RAWL).
func (f Format) zeroed() bool { return f != RAWL }

// Entry layouts (format version 3). Every entry starts 8-byte aligned (or
// Options.Align) and is padded with zero bytes to a multiple of 8. Its
// length field holds the data length n in bits 0..26 and, in bit 31, the
// "more" flag: set on every entry of an AppendBatch but the last, so that
// recovery knows whether the entry after it belongs to the same append
// (see recover.go). Its sequence word sw holds the sequence number in bits
// 0..55 and, in bits 56..62, the entry's index in its append modulo 128 (0
// for a single Append and the first entry of a batch), so that recovery
// can tell an entry of the append a crash interrupted from one of a later
// append; bit 63 is zero. Checksums are CRC-32C.
//
//	PopLog   [lenField u32 | pop u32][sw u64][data][crc u32][pad]
//	Classic  [lenField u32 | crc u32][sw u64][data][pad][commit u64]
//	RAWL     [v | n<<1 | more<<28 | crc<<32][v | sw<<1][data words, bit 0 = v][collector] ...
//
// See poplog.go, classic.go and rawl.go.
const (
	entryHeader = 16

	lenBits  = 27 // n <= MaxEntryLimit = 2^26
	lenMask  = 1<<lenBits - 1
	moreFlag = 1 << 31
	// lenReserved are the bits of a length field that must be zero.
	lenReserved = ^uint32(lenMask | moreFlag)

	seqMask  = 1<<idxShift - 1
	idxShift = 56
	idxMask  = 1<<7 - 1
)

// seqWord is the sequence word of the entry numbered seq that is the i-th
// of its append.
func seqWord(seq uint64, i int) uint64 { return seq | uint64(i&idxMask)<<idxShift }

// splitSeq returns the sequence number and the index in its append held
// in a sequence word, and whether its reserved top bit is clear.
func splitSeq(sw uint64) (seq uint64, idx int, ok bool) {
	return sw & seqMask, int(sw >> idxShift & idxMask), sw>>63 == 0
}

// lenField is the length field of an entry of n bytes.
func lenField(n int, more bool) uint32 {
	lf := uint32(n)
	if more {
		lf |= moreFlag
	}
	return lf
}

// footprint is the number of bytes an entry of n data bytes occupies,
// before alignment.
func (f Format) footprint(n int) int {
	switch f {
	case PopLog:
		return (entryHeader + n + 4 + 7) &^ 7
	case Classic:
		return entryHeader + (n+7)&^7 + 8
	}
	w := (n + 7) >> 3
	return entryHeader + w*8 + (w+rawlGroup-1)/rawlGroup*8
}
