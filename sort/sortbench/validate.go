package sortbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort/internal/sortio"
	"github.com/braid-pm/braid/sort/record"
)

// Summary is what valsort computes for a sequence of records; it is also
// the unit of partitioned validation (valsort -o / -s).
type Summary struct {
	// FirstUnordered is the 0-based index of the first record whose key is
	// smaller than its predecessor's; 0 when there is none (record 0 can
	// never be unordered).
	FirstUnordered Uint128
	Unordered      Uint128 // number of records smaller than their predecessor
	Records        Uint128
	Duplicates     Uint128 // number of records whose key equals their predecessor's
	Checksum       Uint128 // sum of the CRC-32 (IEEE) of every record
	First, Last    []byte  // first and last record
}

// OK reports whether the records are in order.
func (s *Summary) OK() bool { return s.Unordered.IsZero() }

// ValidateOptions configures Validate.
type ValidateOptions struct {
	Format record.Format // zero value: Gensort
	// CaseInsensitive compares keys ignoring ASCII case (valsort -i). Unlike
	// valsort, which uses strcasecmp and so may look past the key, only the
	// key bytes are compared.
	CaseInsensitive bool
	Threads         int // 0: GOMAXPROCS
	// Faults are failures injected into the mapping of the file
	// (persist.Options.Faults), for tests; nil injects none.
	Faults *persist.Faults
}

func (o *ValidateOptions) normalize() error {
	if o.Format == (record.Format{}) {
		o.Format = record.Gensort
	}
	if o.Threads < 0 || o.Threads > sortio.MaxPool {
		return sortio.OptionError("%d validator goroutines, want 0 (all CPUs) to %d", o.Threads, sortio.MaxPool)
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	return o.Format.Validate()
}

// Validate checks the records of the file at path (mapped read-only) with
// valsort's rules, in parallel: the file is cut into partitions, each
// summarized on its own, and the summaries combined as valsort -s does. A
// path that is not a regular file (a pipe) is read in order
// (ValidateReader). Errors about the file name it.
func Validate(ctx context.Context, path string, o ValidateOptions) (*Summary, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// A pipe or a device: read in order, as valsort reads it.
		f, err := os.Open(path)
		if err != nil {
			return nil, &sortio.FileError{Path: path, Err: sortio.PathCause(err)}
		}
		defer f.Close()
		s, err := ValidateReader(ctx, f, o)
		return s, sortio.InFile(path, err)
	}
	m, err := sortio.OpenMappedOn(path, nil, o.Faults)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if validateAfterMap != nil {
		validateAfterMap(path)
	}
	// The file may shrink under the mapping (another program truncates
	// it): read under persist.Guard, a fault is "PATH changed size
	// during validation".
	var s *Summary
	err = persist.Guard(func() error {
		s, err = ValidateBytes(ctx, m.Bytes(), o)
		return err
	})
	if err != nil {
		return nil, sortio.InFile(path, sortio.ExplainFault(err, "validation", m))
	}
	// The mapping goes away: keep copies of the records the summary names.
	s.First = append([]byte(nil), s.First...)
	s.Last = append([]byte(nil), s.Last...)
	return s, nil
}

// validateAfterMap, if set (tests), is called once Validate has mapped
// the file.
var validateAfterMap func(path string)

// ValidateBytes is Validate on an in-memory image. The Summary's First and
// Last alias b.
func ValidateBytes(ctx context.Context, b []byte, o ValidateOptions) (*Summary, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: there must be at least one record to be validated", ErrEmpty)
	}
	// Partition boundaries (byte offsets), one partition per task.
	var bounds []int64
	if !o.Format.KLV {
		rs := int64(o.Format.RecordSize())
		if int64(len(b))%rs != 0 {
			return nil, fmt.Errorf("%w: partial record found at end: size %d is not a multiple of the record size %d",
				ErrBadFormat, len(b), rs)
		}
		n := int64(len(b)) / rs
		parts := int64(o.Threads) * 8
		if parts > n {
			parts = n
		}
		for i := int64(0); i <= parts; i++ {
			bounds = append(bounds, n*i/parts*rs)
		}
	} else {
		var err error
		bounds, err = klvBounds(b, o.Format.KeySize, int64(len(b))/int64(o.Threads*8)+1)
		if err != nil {
			return nil, err
		}
	}
	sums := make([]Summary, len(bounds)-1)
	err := sortio.ParallelChunks(ctx, o.Threads, len(sums), func(i int) error {
		sums[i] = summarize(b[bounds[i]:bounds[i+1]], &o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := CombineSummaries(sums, o.CaseInsensitive, o.Format.KeySize)
	return &s, nil
}

// klvBounds walks a KLV image and returns record-aligned offsets roughly
// every step bytes, starting with 0 and ending with len(b).
func klvBounds(b []byte, keySize int, step int64) ([]int64, error) {
	bounds := []int64{0}
	next := step
	err := record.ScanKLV(b, keySize, func(r record.KLVRecord) error {
		if r.Off >= next {
			bounds = append(bounds, r.Off)
			next = r.Off + step
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(bounds, int64(len(b))), nil
}

func compareKeys(a, b []byte, fold bool) int {
	if !fold {
		return bytes.Compare(a, b)
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// summarize validates one partition sequentially (non-empty, whole records).
func summarize(b []byte, o *ValidateOptions) Summary {
	var s Summary
	k := o.Format.KeySize
	var prev []byte
	var idx uint64
	visit := func(rec []byte) {
		s.Checksum = s.Checksum.Add64(uint64(crc32.ChecksumIEEE(rec)))
		if prev == nil {
			s.First = rec
		} else if c := compareKeys(prev[:k], rec[:k], o.CaseInsensitive); c == 0 {
			s.Duplicates = s.Duplicates.Add64(1)
		} else if c > 0 {
			if s.FirstUnordered.IsZero() {
				s.FirstUnordered = U128(idx)
			}
			s.Unordered = s.Unordered.Add64(1)
		}
		prev = rec
		idx++
	}
	if !o.Format.KLV {
		rs := o.Format.RecordSize()
		for off := 0; off < len(b); off += rs {
			visit(b[off : off+rs : off+rs])
		}
	} else {
		// Bounds were checked by klvBounds.
		_ = record.ScanKLV(b, k, func(r record.KLVRecord) error {
			visit(b[r.Off : r.Off+r.Size(k)])
			return nil
		})
	}
	s.Records = U128(idx)
	s.Last = prev
	return s
}

// CombineSummaries merges the summaries of consecutive partitions exactly
// as valsort -s does: the first record of each partition is compared with
// the last record of the previous one, partition-local first-unordered
// indices are translated, and counts and checksums are summed.
func CombineSummaries(parts []Summary, fold bool, keySize int) Summary {
	if len(parts) == 0 {
		return Summary{}
	}
	s := parts[0]
	for _, p := range parts[1:] {
		if c := compareKeys(s.Last[:keySize], p.First[:keySize], fold); c == 0 {
			s.Duplicates = s.Duplicates.Add64(1)
		} else if c > 0 {
			if s.FirstUnordered.IsZero() {
				s.FirstUnordered = s.Records
			}
			s.Unordered = s.Unordered.Add64(1)
		}
		if s.FirstUnordered.IsZero() && !p.FirstUnordered.IsZero() {
			s.FirstUnordered = s.Records.Add(p.FirstUnordered)
		}
		s.Unordered = s.Unordered.Add(p.Unordered)
		s.Records = s.Records.Add(p.Records)
		s.Duplicates = s.Duplicates.Add(p.Duplicates)
		s.Checksum = s.Checksum.Add(p.Checksum)
		s.Last = p.Last
	}
	return s
}

// Report prints valsort's lines for s to w (valsort prints them to
// standard error): the first unordered record if any, then Records and
// Checksum, then either the error line or the duplicate count and SUCCESS.
func (s *Summary) Report(w io.Writer) {
	if !s.FirstUnordered.IsZero() {
		fmt.Fprintf(w, "First unordered record is record %s\n", s.FirstUnordered)
	}
	fmt.Fprintf(w, "Records: %s\n", s.Records)
	fmt.Fprintf(w, "Checksum: %s\n", s.Checksum.Hex())
	if !s.OK() {
		fmt.Fprintf(w, "ERROR - there are %s unordered records\n", s.Unordered)
		return
	}
	fmt.Fprintf(w, "Duplicate keys: %s\n", s.Duplicates)
	fmt.Fprintf(w, "SUCCESS - all records are in order\n")
}

// SummarySize is the size of valsort's binary partition summary: five
// 128-bit counters (each as two native-endian u64, high half first), then
// the first and the last 100-byte record.
const SummarySize = 5*16 + 2*100

// MarshalSummary encodes s in valsort's -o format (gensort records only).
func (s *Summary) MarshalSummary() ([]byte, error) {
	if len(s.First) != 100 || len(s.Last) != 100 {
		return nil, sortio.OptionError("partition summaries hold 100-byte records, not %d-byte ones", len(s.First))
	}
	b := make([]byte, 0, SummarySize)
	for _, v := range []Uint128{s.FirstUnordered, s.Unordered, s.Records, s.Duplicates, s.Checksum} {
		b = binary.NativeEndian.AppendUint64(b, v.Hi)
		b = binary.NativeEndian.AppendUint64(b, v.Lo)
	}
	b = append(b, s.First...)
	return append(b, s.Last...), nil
}

// ParseSummaries decodes a concatenation of valsort -o summaries.
func ParseSummaries(b []byte) ([]Summary, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: there must be at least one record to be validated", ErrEmpty)
	}
	if len(b)%SummarySize != 0 {
		return nil, fmt.Errorf("%w: partial partition summary found at end: size %d is not a multiple of %d",
			ErrBadFormat, len(b), SummarySize)
	}
	var out []Summary
	for off := 0; off < len(b); off += SummarySize {
		p := b[off : off+SummarySize]
		var v [5]Uint128
		for i := range v {
			v[i] = Uint128{binary.NativeEndian.Uint64(p[16*i:]), binary.NativeEndian.Uint64(p[16*i+8:])}
		}
		out = append(out, Summary{
			FirstUnordered: v[0], Unordered: v[1], Records: v[2], Duplicates: v[3], Checksum: v[4],
			First: p[80:180:180], Last: p[180:280:280],
		})
	}
	return out, nil
}

// Validate checks the options without reading anything. Its errors match
// ErrInvalid (persist.ErrInvalid), or ErrBadFormat for the format.
func (o ValidateOptions) Validate() error { return o.normalize() }
