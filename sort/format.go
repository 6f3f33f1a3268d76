package sort

import "github.com/braid-pm/braid/sort/record"

// The record format lives in package sort/record, which the sorter and the
// sortbenchmark tools (sort/sortbench) share; these are its names here.

// Format describes the records of a file: record.Format.
type Format = record.Format

// KLVRecord locates one KLV record inside a file image: record.KLVRecord.
type KLVRecord = record.KLVRecord

// Gensort is the sortbenchmark record format: 10-byte key, 90-byte value.
var Gensort = record.Gensort

const (
	// MaxKeySize bounds the key size so that an IndexMap entry stays small.
	MaxKeySize = record.MaxKeySize
	// MaxRecordSize bounds a fixed-size record.
	MaxRecordSize = record.MaxRecordSize
	// MaxKLVValue bounds a KLV value.
	MaxKLVValue = record.MaxKLVValue
	// klvHeader is the size of the value-length field of a KLV record.
	klvHeader = record.KLVHeader
)

// DecodeKLV is record.DecodeKLV: the KLV record at off in b and the offset
// of the next one.
func DecodeKLV(b []byte, off int64, keySize int) (KLVRecord, int64, error) {
	return record.DecodeKLV(b, off, keySize)
}

// AppendKLV is record.AppendKLV: dst with one KLV record appended.
func AppendKLV(dst, key, value []byte) []byte { return record.AppendKLV(dst, key, value) }

// ScanKLV is record.ScanKLV: fn for every record of a KLV file image, in
// order.
func ScanKLV(b []byte, keySize int, fn func(r KLVRecord) error) error {
	return record.ScanKLV(b, keySize, fn)
}
