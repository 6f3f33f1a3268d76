package walog_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// damagedLog returns a closed log of format f holding 55 entries of about
// 100 bytes (a batch of five among them, 6 KiB in all), its region and the
// entries.
func damagedLog(t *testing.T, f walog.Format) (*persist.Region, []entry) {
	r := anon(t, 32<<10)
	l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 4096})
	var want []entry
	for i := range 50 {
		p := fmt.Appendf(nil, "entry %d %s", i, bytes.Repeat([]byte{'.'}, 80+i%17))
		seq, err := l.Append(p)
		require.NoError(t, err)
		want = append(want, entry{seq, p})
		if i == 20 {
			var ps [][]byte
			for j := range 5 {
				ps = append(ps, fmt.Appendf(nil, "batch %d", j))
			}
			seq, err := l.AppendBatch(ps)
			require.NoError(t, err)
			for j, p := range ps {
				want = append(want, entry{seq + uint64(j), p})
			}
		}
	}
	require.NoError(t, l.Close())
	return r, want
}

// TestZeroedHeader zeroes the header of a closed log, its copy, both, and
// the first 4 KiB page of the area: with one copy left, Open reads the
// header from it, rewrites the other and returns every entry; with both
// gone it is ErrCorrupt — never ErrNoLog, which invites a Create over the
// entries — and writes nothing. Only an area that holds nothing at all is
// ErrNoLog.
func TestZeroedHeader(t *testing.T) {
	for _, f := range formats {
		for _, z := range []struct {
			name    string
			off, n  int
			survive bool
		}{
			{"header", 0, walog.BlockSize, true},
			{"copy", walog.BlockSize, walog.BlockSize, true},
			{"header-and-copy", 0, walog.HeaderSize, false},
			{"first-page", 0, 4096, false},
		} {
			t.Run(fmt.Sprintf("%s/%s", f, z.name), func(t *testing.T) {
				r, want := damagedLog(t, f)
				mem := r.Bytes()
				clear(mem[z.off : z.off+z.n])
				hit := bytes.Clone(mem)
				l, err := walog.Open(r, nil)
				if !z.survive {
					require.ErrorIs(t, err, walog.ErrCorrupt)
					require.NotErrorIs(t, err, walog.ErrNoLog)
					require.ErrorContains(t, err, "not an empty area")
					require.Equal(t, hit, mem, "an Open that reports corruption writes nothing")
					t.Log(err)
					return
				}
				require.NoError(t, err)
				require.Equal(t, want, all(t, l))
				rep := l.Recovery()
				require.Contains(t, rep.Header, "zero magic")
				require.True(t, rep.Closed)
				t.Log(rep)
				require.NoError(t, l.Check(), "both copies are whole again")
				require.NoError(t, l.Close())
				l = mustOpen(t, r, nil)
				require.Empty(t, l.Recovery().Header, "nothing left to repair")
				require.Equal(t, want, all(t, l))
			})
		}
	}
	r := anon(t, 32<<10)
	_, err := walog.Open(r, nil)
	require.ErrorIs(t, err, walog.ErrNoLog, "an area of zeroes holds no log")
}

// TestCleanShutdown damages the end of a log (its last five entries
// zeroed, or garbled) after a clean Close and after a crash: the closed
// log's header recorded its tail, so Open reports the damage
// (ErrCorrupt, naming the tail, writing nothing; Salvage keeps what
// precedes it), where the crashed log can only take it for a tear of its
// last append and drop what the damage wiped out.
func TestCleanShutdown(t *testing.T) {
	for _, f := range formats {
		for _, how := range []string{"zero", "garbage"} {
			t.Run(fmt.Sprintf("%s/%s", f, how), func(t *testing.T) {
				r, want := damagedLog(t, f)
				tail := walog.HeaderSize
				l := mustOpen(t, r, nil)
				tail += l.Stats().Used
				require.NoError(t, l.Close())
				mem := r.Bytes()
				// The last five entries, each at least 16 bytes: from 5*16
				// bytes before the tail on, the end of the log.
				from := tail - 80
				if how == "zero" {
					clear(mem[from:tail])
				} else {
					for i := from; i < tail; i++ {
						mem[i] = byte(i*131 + 7)
					}
				}
				hit := bytes.Clone(mem)
				_, err := walog.Open(r, nil)
				require.ErrorIs(t, err, walog.ErrCorrupt)
				require.ErrorContains(t, err, fmt.Sprintf("closed cleanly with its tail at offset %d", tail))
				require.Equal(t, hit, mem)
				l, err = walog.Open(r, &walog.Options{Salvage: true})
				require.NoError(t, err)
				got := all(t, l)
				require.Less(t, len(got), len(want))
				require.Equal(t, want[:len(got)], got, "Salvage keeps what precedes the damage")
				require.NoError(t, l.Close())

				// The same damage after a crash: the clean-shutdown word is
				// 0, and zeroes at the end read as a log that ends there.
				r2, want2 := damagedLog(t, f)
				m2 := r2.Bytes()
				clear(m2[closedWord : closedWord+8])
				clear(m2[walog.BlockSize+closedWord : walog.BlockSize+closedWord+8])
				copy(m2[from:tail], hit[from:tail])
				l, err = walog.Open(r2, nil)
				if how == "garbage" && err != nil {
					require.ErrorIs(t, err, walog.ErrCorrupt)
					return
				}
				require.NoError(t, err, "a crashed log cannot tell the end wiped out from a log that ended there")
				got = all(t, l)
				require.Equal(t, want2[:len(got)], got)
				require.False(t, l.Recovery().Closed)
				require.NoError(t, l.Close())
			})
		}
	}
}

// TestLaterAppendIndex: a batch cut short by Truncate (its last entry
// keeps the more flag), a single append after it, and damage to the
// batch's first entry on a crashed log that has the shape of a tear. The entries after the damage
// decode as a batch with a torn head, but their indexes in their appends
// say otherwise — the last one is the first of an append of its own, the
// others continue an append that began before the damage — so Open
// reports corruption instead of dropping them as a torn tail.
func TestLaterAppendIndex(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 32<<10)
			l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 4096})
			for i := range 3 {
				_, err := l.Append(fmt.Appendf(nil, "single %d", i))
				require.NoError(t, err)
			}
			batch := walog.HeaderSize + l.Stats().Used
			var ps [][]byte
			for j := range 8 {
				ps = append(ps, fmt.Appendf(nil, "batch entry %d of 8", j))
			}
			seq, err := l.AppendBatch(ps)
			require.NoError(t, err)
			require.NoError(t, l.Truncate(seq+5))
			_, err = l.Append([]byte("after the truncate"))
			require.NoError(t, err)
			// A crash leaves the clean-shutdown word 0.
			snap := bytes.Clone(r.Bytes())
			require.NoError(t, l.Close())
			mem := r.Bytes()
			copy(mem, snap)
			// All of the batch's first entry but its first word zeroed: the
			// shape of a torn append.
			clear(mem[batch+8 : batch+walog.Footprint(f, len(ps[0]))])
			_, err = walog.Open(r, nil)
			require.ErrorIs(t, err, walog.ErrCorrupt)
			require.ErrorContains(t, err, "written by an append after the one a crash may have interrupted")
			t.Log(err)
		})
	}
}

// TestRecovery: Recovery describes what Open found and stays so while
// the log goes on (Stats is the log now); a log from Create has recovered
// nothing.
func TestRecovery(t *testing.T) {
	r, want := damagedLog(t, walog.PopLog)
	l := mustOpen(t, r, nil)
	_, err := l.Append([]byte("one more"))
	require.NoError(t, err)
	rep := l.Recovery()
	require.Equal(t, len(want), rep.Entries, "what Open found")
	require.Equal(t, uint64(len(want)+1), rep.NextSeq)
	require.True(t, rep.Closed)
	require.Equal(t, len(want)+1, l.Stats().Entries, "the log now")
	require.Contains(t, rep.String(), fmt.Sprintf("%d entries", len(want)))
	l2 := mustCreate(t, anon(t, 64<<10), nil)
	require.Zero(t, l2.Recovery().Entries)
}
