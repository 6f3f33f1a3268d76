package walog_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// TestReadAt: the offsets Tail and Span give for appends and batches, and
// those Iter.Offset reports, read back every entry with ReadAt, in every
// format and alignment; other offsets are errors.
func TestReadAt(t *testing.T) {
	for _, f := range formats {
		for _, align := range []int{8, 64, 256} {
			t.Run(fmt.Sprintf("%s/%d", f, align), func(t *testing.T) {
				l := mustCreate(t, anon(t, 64<<10), &walog.Options{Format: f, Align: align, Chunk: 1024})
				var offs []int
				var want [][]byte
				for i := range 40 {
					p := bytes.Repeat([]byte{byte(i + 1)}, 1+i*7%300)
					if i%3 == 0 {
						batch := [][]byte{p, p[:1+len(p)/2], {byte(i)}}
						off := l.Tail()
						_, err := l.AppendBatch(batch)
						require.NoError(t, err)
						for _, b := range batch {
							offs, want = append(offs, off), append(want, b)
							off += l.Span(len(b))
						}
						require.Equal(t, l.Tail(), off)
						continue
					}
					offs, want = append(offs, l.Tail()), append(want, p)
					_, err := l.Append(p)
					require.NoError(t, err)
				}
				it := l.Iter()
				for i := 0; it.Next(); i++ {
					require.Equal(t, offs[i], it.Offset(), "entry %d", i)
					seq, data, err := l.ReadAt(offs[i], nil)
					require.NoError(t, err)
					require.Equal(t, it.Seq(), seq)
					require.Equal(t, want[i], data)
				}
				require.NoError(t, it.Err())
				_, _, err := l.ReadAt(l.Tail(), nil)
				require.ErrorIs(t, err, walog.ErrInvalid, "at the tail")
				_, _, err = l.ReadAt(offs[0]-8, nil)
				require.ErrorIs(t, err, walog.ErrInvalid, "before the first entry")
				_, _, err = l.ReadAt(offs[1]+8, nil)
				require.ErrorIs(t, err, walog.ErrCorrupt, "inside an entry")
				// TruncateAt: a wrong number or offset is refused; the
				// right one cuts there, and the next append takes the
				// number.
				var seqs []uint64
				for it := l.Iter(); it.Next(); {
					seqs = append(seqs, it.Seq())
				}
				k := len(offs) / 2
				require.ErrorIs(t, l.TruncateAt(offs[k], seqs[k]+1), walog.ErrInvalid)
				require.ErrorIs(t, l.TruncateAt(offs[k]+8, seqs[k]), walog.ErrInvalid)
				require.NoError(t, l.TruncateAt(offs[k], seqs[k]))
				n := 0
				for it := l.Iter(); it.Next(); n++ {
				}
				require.Equal(t, k, n)
				require.Equal(t, offs[k], l.Tail())
				seq, err := l.Append([]byte("again"))
				require.NoError(t, err)
				require.Equal(t, seqs[k], seq)
				require.NoError(t, l.TruncateAt(offs[0], seqs[0]))
				require.Equal(t, 0, l.Stats().Entries)
				require.NoError(t, l.Close())
				_, _, err = l.ReadAt(offs[0], nil)
				require.ErrorIs(t, err, walog.ErrClosed)
			})
		}
	}
}
