package sortbench

import (
	"bytes"
	"context"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateValsortLines(t *testing.T) {
	b := gen(t, GenOptions{Count: 1000})
	s, err := ValidateBytes(context.Background(), b, ValidateOptions{Threads: 3})
	require.NoError(t, err)
	var w bytes.Buffer
	s.Report(&w)
	// Unsorted gensort input: valsort prints these lines.
	require.Equal(t, "1000", s.Records.String())
	require.Equal(t, "1ea6370b955", s.Checksum.Hex())
	require.Contains(t, w.String(), "Records: 1000\nChecksum: 1ea6370b955\nERROR - there are ")
	require.Contains(t, w.String(), "First unordered record is record ")
	require.False(t, s.OK())
}

// serialSummary is valsort's single-threaded algorithm, the reference.
func serialSummary(b []byte, rs, k int) Summary {
	var s Summary
	for i := 0; i*rs < len(b); i++ {
		rec := b[i*rs : (i+1)*rs]
		s.Checksum = s.Checksum.Add64(uint64(crc32IEEE(rec)))
		if i > 0 {
			c := bytes.Compare(b[(i-1)*rs:(i-1)*rs+k], rec[:k])
			if c == 0 {
				s.Duplicates = s.Duplicates.Add64(1)
			} else if c > 0 {
				if s.FirstUnordered.IsZero() {
					s.FirstUnordered = U128(uint64(i))
				}
				s.Unordered = s.Unordered.Add64(1)
			}
		}
		s.Records = s.Records.Add64(1)
	}
	return s
}

func TestValidateParallelEqualsSerial(t *testing.T) {
	b := gen(t, GenOptions{Count: 5000, ASCII: true, Skew: true})
	// Sort the first 3000 records' keys crudely so that order and
	// duplicates vary: copy record 10 over records 100..120 (duplicates).
	for i := 100; i < 120; i++ {
		copy(b[i*100:(i+1)*100], b[1000:1100])
	}
	want := serialSummary(b, 100, 10)
	for _, th := range []int{1, 2, 3, 7, 64} {
		s, err := ValidateBytes(context.Background(), b, ValidateOptions{Threads: th})
		require.NoError(t, err)
		require.Equal(t, want.Records, s.Records)
		require.Equal(t, want.Checksum, s.Checksum)
		require.Equal(t, want.Unordered, s.Unordered, "threads %d", th)
		require.Equal(t, want.Duplicates, s.Duplicates, "threads %d", th)
		require.Equal(t, want.FirstUnordered, s.FirstUnordered, "threads %d", th)
	}
}

func TestValidateSortedAndSummaries(t *testing.T) {
	// A sorted file: records with increasing keys, one duplicate, split in
	// three partitions validated with -o and combined with -s.
	var b []byte
	for i := 0; i < 30; i++ {
		rec := make([]byte, 100)
		rec[0], rec[1] = byte(i/10), byte(i%10)
		if i == 15 {
			rec[1] = byte(4) // equal to record 14's key
		}
		b = append(b, rec...)
	}
	s, err := ValidateBytes(context.Background(), b, ValidateOptions{})
	require.NoError(t, err)
	require.True(t, s.OK())
	require.Equal(t, "1", s.Duplicates.String())
	var w bytes.Buffer
	s.Report(&w)
	require.Equal(t, "Records: 30\nChecksum: "+s.Checksum.Hex()+"\nDuplicate keys: 1\nSUCCESS - all records are in order\n", w.String())

	var sums []byte
	for _, part := range [][2]int{{0, 10}, {10, 15}, {15, 30}} {
		p, err := ValidateBytes(context.Background(), b[part[0]*100:part[1]*100], ValidateOptions{})
		require.NoError(t, err)
		m, err := p.MarshalSummary()
		require.NoError(t, err)
		require.Len(t, m, SummarySize)
		sums = append(sums, m...)
	}
	parts, err := ParseSummaries(sums)
	require.NoError(t, err)
	c := CombineSummaries(parts, false, 10)
	require.Equal(t, s.Records, c.Records)
	require.Equal(t, s.Checksum, c.Checksum)
	require.Equal(t, s.Duplicates, c.Duplicates)
	require.True(t, c.OK())

	// Swap two partitions: the boundary is unordered, at record 5.
	bad := append(append([]byte{}, sums[SummarySize:2*SummarySize]...), sums[:SummarySize]...)
	parts, err = ParseSummaries(bad)
	require.NoError(t, err)
	c = CombineSummaries(parts, false, 10)
	require.False(t, c.OK())
	require.Equal(t, "5", c.FirstUnordered.String())

	_, err = ParseSummaries(sums[:SummarySize+1])
	require.ErrorIs(t, err, ErrBadFormat)
	_, err = ValidateBytes(context.Background(), b[:150], ValidateOptions{})
	require.ErrorIs(t, err, ErrBadFormat)
	_, err = ValidateBytes(context.Background(), nil, ValidateOptions{})
	require.ErrorIs(t, err, ErrEmpty)
}

func TestValidateCaseInsensitive(t *testing.T) {
	b := make([]byte, 200)
	copy(b, "abc")
	copy(b[100:], "ABD")
	s, err := ValidateBytes(context.Background(), b, ValidateOptions{})
	require.NoError(t, err)
	require.False(t, s.OK()) // 'a' > 'A'
	s, err = ValidateBytes(context.Background(), b, ValidateOptions{CaseInsensitive: true})
	require.NoError(t, err)
	require.True(t, s.OK())
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

func FuzzParseSummaries(f *testing.F) {
	f.Add(make([]byte, SummarySize))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSummaries(b)
		if err != nil {
			return
		}
		require.Len(t, s, len(b)/SummarySize)
		c := CombineSummaries(s, false, 10)
		_ = c.Records.String()
	})
}
