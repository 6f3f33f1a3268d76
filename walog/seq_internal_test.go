package walog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeqExhausted: sequence numbers are bounded (56 bits, what the
// header's checked words hold); a log that reaches the bound refuses
// appends with ErrFull rather than wrap its numbers.
func TestSeqExhausted(t *testing.T) {
	mem := make([]byte, 16<<10)
	r, _ := snapRegion(t, mem)
	l, err := Create(r, nil)
	require.NoError(t, err)
	l.next = maxSeq - 2
	_, err = l.Append([]byte("a"))
	require.NoError(t, err)
	_, err = l.AppendBatch([][]byte{[]byte("b"), []byte("c")})
	require.ErrorIs(t, err, ErrFull)
	_, err = l.Append([]byte("b"))
	require.NoError(t, err)
	_, err = l.Append([]byte("c"))
	require.ErrorIs(t, err, ErrFull)
	l.Close() // a restart: the old handle goes first
	l, err = Open(r, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(maxSeq), l.Stats().NextSeq)
	require.Equal(t, 2, l.Stats().Entries)
}
