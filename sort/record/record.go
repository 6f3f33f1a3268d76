// Package record is the record format of braid's sorter and of the
// sortbenchmark tools: fixed-size records (the gensort format is one) and
// KLV (Key-Length-Value) records, their validation, decoding and encoding.
// Packages sort and sort/sortbench both read and write records through it
// (sort re-exports its names: sort.Format is record.Format).
package record

import (
	"encoding/binary"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// ErrBadFormat marks input that is not a whole number of records of the
// expected format (wrong size, truncated KLV record), or a run file of
// another kind (persist.ErrBadFormat). It is sort.ErrBadFormat.
var ErrBadFormat = persist.NewError("sort: bad record format", persist.ErrBadFormat)

// Format describes the records of a file.
//
// A fixed-size format has records of KeySize+ValueSize bytes, the key first.
// The sortbenchmark (gensort) format is Format{KeySize: 10, ValueSize: 90}.
//
// A KLV format (Key-Length-Value, [WS] §3.7) has variable-length records
//
//	key[KeySize] | value_len uint32 little-endian | value[value_len]
//
// stored back to back with no file header and no padding; the file must end
// exactly at the end of a record. Records are ordered by their key bytes
// (memcmp); the value length is not part of the key.
type Format struct {
	KeySize   int  // bytes of key, 1..MaxKeySize
	ValueSize int  // bytes of value for fixed-size records; unused for KLV
	KLV       bool // variable-length Key-Length-Value records
}

// Gensort is the sortbenchmark record format: 10-byte key, 90-byte value.
var Gensort = Format{KeySize: 10, ValueSize: 90}

const (
	// MaxKeySize bounds the key size so that an IndexMap entry stays small.
	MaxKeySize = 64
	// MaxRecordSize bounds a fixed-size record.
	MaxRecordSize = 1 << 20
	// KLVHeader is the size of the value-length field of a KLV record.
	KLVHeader = 4
	// MaxKLVValue bounds a KLV value so that a record fits any write buffer
	// we allocate (larger values would be legal in the format but not useful).
	MaxKLVValue = 1 << 30
)

// Validate checks that f is a usable format.
func (f Format) Validate() error {
	if f.KeySize < 1 || f.KeySize > MaxKeySize {
		return fmt.Errorf("%w: key size %d, want 1..%d", ErrBadFormat, f.KeySize, MaxKeySize)
	}
	if f.KLV {
		return nil
	}
	if f.ValueSize < 0 || f.KeySize+f.ValueSize > MaxRecordSize {
		return fmt.Errorf("%w: value size %d, want 0..%d", ErrBadFormat, f.ValueSize, MaxRecordSize-f.KeySize)
	}
	return nil
}

// RecordSize is the size of a fixed-size record (0 for KLV).
func (f Format) RecordSize() int {
	if f.KLV {
		return 0
	}
	return f.KeySize + f.ValueSize
}

// String describes the format, e.g. "fixed 10+90" or "klv key 10".
func (f Format) String() string {
	if f.KLV {
		return fmt.Sprintf("klv key %d", f.KeySize)
	}
	return fmt.Sprintf("fixed %d+%d", f.KeySize, f.ValueSize)
}

// KLVRecord locates one KLV record inside b.
type KLVRecord struct {
	Off      int64 // offset of the record (its key)
	ValueLen uint32
}

// Size is the total size of the record.
func (r KLVRecord) Size(keySize int) int64 {
	return int64(keySize) + KLVHeader + int64(r.ValueLen)
}

// DecodeKLV decodes the KLV record that starts at off in b, for keys of
// keySize bytes. It returns the record and the offset of the next one. A
// record that does not fit in b, or whose value length exceeds MaxKLVValue,
// is an error wrapping ErrBadFormat that names the offset.
func DecodeKLV(b []byte, off int64, keySize int) (KLVRecord, int64, error) {
	n := int64(len(b))
	if off < 0 || off > n {
		return KLVRecord{}, 0, fmt.Errorf("%w: KLV offset %d outside file of %d bytes", ErrBadFormat, off, n)
	}
	hdr := off + int64(keySize) + KLVHeader
	if hdr > n {
		return KLVRecord{}, 0, fmt.Errorf("%w: truncated KLV record at offset %d: %d bytes left, header needs %d",
			ErrBadFormat, off, n-off, keySize+KLVHeader)
	}
	vlen := binary.LittleEndian.Uint32(b[hdr-KLVHeader : hdr])
	if vlen > MaxKLVValue {
		return KLVRecord{}, 0, fmt.Errorf("%w: KLV record at offset %d has value length %d, more than %d",
			ErrBadFormat, off, vlen, MaxKLVValue)
	}
	end := hdr + int64(vlen)
	if end > n {
		return KLVRecord{}, 0, fmt.Errorf("%w: truncated KLV record at offset %d: value of %d bytes, %d left",
			ErrBadFormat, off, vlen, n-hdr)
	}
	return KLVRecord{Off: off, ValueLen: vlen}, end, nil
}

// AppendKLV appends one KLV record to dst.
func AppendKLV(dst, key, value []byte) []byte {
	dst = append(dst, key...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// ScanKLV walks every record of a KLV file image and calls fn for each in
// order. It stops at the first malformed record (the error names its
// offset) or when fn returns an error.
func ScanKLV(b []byte, keySize int, fn func(r KLVRecord) error) error {
	var off int64
	for off < int64(len(b)) {
		r, next, err := DecodeKLV(b, off, keySize)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
		off = next
	}
	return nil
}
