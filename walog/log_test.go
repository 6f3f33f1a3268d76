package walog_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

func TestAppendReopen(t *testing.T) {
	for _, f := range formats {
		for _, align := range []int{8, 64, 256} {
			t.Run(fmt.Sprintf("%s/align%d", f, align), func(t *testing.T) {
				r := anon(t, 1<<20)
				o := &walog.Options{Format: f, Align: align, Chunk: 4096, MaxEntry: 5000}
				l := mustCreate(t, r, o)
				rng := structtest.NewRand(1<<32 | uint64(f))
				var want []entry
				for i := range 300 {
					n := randSize(rng, 5000)
					if i%50 == 0 {
						n = 5000
					}
					p := payload(rng, uint64(i+1), n)
					seq, err := l.Append(p)
					require.NoError(t, err)
					require.Equal(t, uint64(i+1), seq)
					want = append(want, entry{seq, p})
				}
				require.Equal(t, want, all(t, l))
				require.NoError(t, l.Close())

				l.Close() // a restart: the old handle goes first
				l = mustOpen(t, r, &walog.Options{Format: f})
				rep := l.Recovery()
				require.Equal(t, 300, rep.Entries, "%v", rep)
				require.NoError(t, rep.Stop)
				require.Zero(t, rep.Scrubbed)
				require.Equal(t, uint64(301), rep.NextSeq)
				require.Equal(t, want, all(t, l))
				seq, err := l.Append([]byte("after"))
				require.NoError(t, err)
				require.Equal(t, uint64(301), seq)
			})
		}
	}
}

func TestBatch(t *testing.T) {
	for _, f := range formats {
		for _, align := range []int{8, 256} {
			t.Run(fmt.Sprintf("%s/align%d", f, align), func(t *testing.T) {
				r := anon(t, 1<<20)
				l := mustCreate(t, r, &walog.Options{Format: f, Align: align, Chunk: 1024})
				rng := structtest.NewRand(2<<32 | uint64(f))
				var want []entry
				seq := uint64(1)
				for range 40 {
					k := 1 + rng.Intn(20)
					var batch [][]byte
					for j := range k {
						batch = append(batch, payload(rng, seq+uint64(j), randSize(rng, 3000)))
					}
					first, err := l.AppendBatch(batch)
					require.NoError(t, err)
					require.Equal(t, seq, first)
					for j, p := range batch {
						want = append(want, entry{seq + uint64(j), p})
					}
					seq += uint64(k)
				}
				require.Equal(t, want, all(t, l))
				l.Close() // a restart: the old handle goes first
				l = mustOpen(t, r, nil)
				require.Equal(t, want, all(t, l))
			})
		}
	}
}

func TestBadInput(t *testing.T) {
	r := anon(t, 64<<10)
	l := mustCreate(t, r, &walog.Options{MaxEntry: 100})
	_, err := l.Append(nil)
	require.ErrorIs(t, err, walog.ErrEmpty)
	_, err = l.Append(make([]byte, 101))
	require.ErrorIs(t, err, walog.ErrTooLarge)
	_, err = l.AppendBatch(nil)
	require.ErrorIs(t, err, walog.ErrEmpty)
	_, err = l.AppendBatch([][]byte{{1}, {}})
	require.ErrorIs(t, err, walog.ErrEmpty)
	require.Zero(t, l.Stats().Entries, "a bad batch appends nothing")

	for _, o := range []*walog.Options{
		{Format: 9}, {Offset: 100}, {Size: 300}, {Size: 256}, {MaxEntry: -1},
		{MaxEntry: walog.MaxEntryLimit + 1}, {Align: 16}, {Chunk: -1},
		{Checkpoint: func(*walog.Log) error { return nil }},
		{MaxEntry: 64 << 10},
	} {
		_, err := walog.Create(r, o)
		require.ErrorIs(t, err, walog.ErrInvalid, "%+v", o)
	}
	for _, o := range []*walog.Options{{Offset: 128 << 10}, {Size: 128 << 10}} {
		_, err := walog.Create(r, o)
		require.ErrorIs(t, err, walog.ErrTooSmall, "an area past the region: %+v", o)
	}
	_, err = walog.Create(nil, nil)
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.Open(nil, nil)
	require.ErrorIs(t, err, walog.ErrInvalid)
	odd := memRegion(t, make([]byte, 8200)[3:8195])
	_, err = walog.Create(odd, nil)
	require.ErrorIs(t, err, walog.ErrInvalid, "memory not 8-byte aligned")
	_, err = walog.Open(odd, nil)
	require.ErrorIs(t, err, walog.ErrInvalid)

	// Open: empty, foreign, corrupt, mismatched.
	r2 := anon(t, 64<<10)
	_, err = walog.Open(r2, nil)
	require.ErrorIs(t, err, walog.ErrNoLog)
	copy(r2.Bytes(), "braidFAMxxxxxxxx")
	_, err = walog.Open(r2, nil)
	require.ErrorIs(t, err, walog.ErrBadFormat)

	// Options that contradict the log: the options are wrong, not the log.
	_, err = walog.Open(r, &walog.Options{Format: walog.RAWL})
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.Open(r, &walog.Options{MaxEntry: 99})
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.Open(r, &walog.Options{Align: 64})
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.Open(r, &walog.Options{Offset: 256})
	require.ErrorIs(t, err, walog.ErrBadFormat, "the header's copy is no header")
	require.ErrorContains(t, err, "copy of the header of a log that starts 256 bytes before")

	require.NoError(t, l.Close()) // the damage hits a closed log
	mem := r.Bytes()
	// The size field in both copies of the header: the checksums catch it.
	mem[20] ^= 1
	mem[walog.BlockSize+20] ^= 1
	_, err = walog.Open(r, nil)
	require.ErrorIs(t, err, walog.ErrCorrupt)
	require.ErrorIs(t, err, persist.ErrCorrupt)
	mem[20] ^= 1
	mem[walog.BlockSize+20] ^= 1
	mem[64+3] = 0xff // prepared end beyond the area, in both copies
	mem[walog.BlockSize+64+3] = 0xff
	_, err = walog.Open(r, nil)
	require.ErrorIs(t, err, persist.ErrCorrupt)
}

func TestClosed(t *testing.T) {
	r := anon(t, 64<<10)
	l := mustCreate(t, r, nil)
	_, err := l.Append([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.ErrorIs(t, l.Close(), walog.ErrClosed)
	_, err = l.Append([]byte("x"))
	require.ErrorIs(t, err, walog.ErrClosed)
	_, err = l.AppendBatch([][]byte{{1}})
	require.ErrorIs(t, err, walog.ErrClosed)
	require.ErrorIs(t, l.Reset(), walog.ErrClosed)
	require.ErrorIs(t, l.Truncate(1), walog.ErrClosed)
	it := l.Iter()
	require.False(t, it.Next())
	require.ErrorIs(t, it.Err(), walog.ErrClosed)
}

func TestFullAndWrap(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 8<<10)
			l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 512})
			p := make([]byte, 100)
			n := 0
			for {
				_, err := l.Append(p)
				if err != nil {
					require.ErrorIs(t, err, walog.ErrFull)
					break
				}
				n++
			}
			require.Positive(t, n)
			require.Equal(t, n, l.Stats().Entries)
			_, err := l.AppendBatch([][]byte{make([]byte, 4000), make([]byte, 4000)})
			require.ErrorIs(t, err, walog.ErrTooLarge)

			// Wrap: the checkpoint sees every entry, then they are gone.
			checkpoints := 0
			var fail bool
			o := &walog.Options{Wrap: true, Checkpoint: func(l *walog.Log) error {
				if fail {
					return errors.New("disk on fire")
				}
				checkpoints++
				return nil
			}}
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, r, o)
			require.Equal(t, n, l.Stats().Entries)
			var last []entry
			for i := range 5 * n {
				seq, err := l.Append(payload(structtest.NewRand(3<<32|3), uint64(i), 100))
				require.NoError(t, err)
				require.Equal(t, uint64(n+i+1), seq)
			}
			require.Equal(t, 5, checkpoints)
			require.Equal(t, 5, l.Stats().Wraps)
			last = all(t, l)
			require.Len(t, last, n)
			require.Equal(t, uint64(5*n+1), last[0].seq, "entries after the last wrap")

			fail = true
			_, err = l.Append(p)
			require.ErrorContains(t, err, "disk on fire")
			require.Equal(t, last, all(t, l), "a failed checkpoint leaves the log as it was")
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, r, nil)
			require.Equal(t, last, all(t, l))
		})
	}
}

func TestResetTruncate(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 64<<10)
			l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 1024})
			rng := structtest.NewRand(4<<32 | 4)
			var want []entry
			add := func(k int) {
				for range k {
					p := payload(rng, 0, randSize(rng, 300))
					seq, err := l.Append(p)
					require.NoError(t, err)
					want = append(want, entry{seq, p})
				}
			}
			add(50)
			require.NoError(t, l.Truncate(want[30].seq))
			want = want[:30]
			require.Equal(t, want, all(t, l))
			require.NoError(t, l.Truncate(1000)) // nothing that high
			add(10)
			require.Equal(t, uint64(31), want[30].seq, "Truncate hands the numbers out again")
			require.Equal(t, want, all(t, l))
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, r, nil)
			require.Equal(t, want, all(t, l))

			it := l.Iter()
			require.True(t, it.Next())
			require.NoError(t, l.Reset())
			require.False(t, it.Next())
			require.ErrorIs(t, it.Err(), walog.ErrChanged)
			require.Empty(t, all(t, l))
			next := want[len(want)-1].seq + 1
			want = nil
			add(20)
			require.Equal(t, next, want[0].seq, "Reset keeps the numbering")
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, r, nil)
			require.Equal(t, want, all(t, l))
			require.NoError(t, l.Truncate(0))
			require.Empty(t, all(t, l))
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, r, nil)
			require.Empty(t, all(t, l))
			require.Equal(t, next, l.Stats().NextSeq)
			// Many resets: RAWL alternates its two ways of emptying.
			for i := range 30 {
				want = nil
				add(1 + i*7%40)
				require.NoError(t, l.Reset())
			}
			l.Close() // a restart: the old handle goes first
			l = mustOpen(t, r, nil)
			require.Empty(t, all(t, l))
		})
	}
}

func TestConcurrentAppend(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 1<<20)
			l := mustCreate(t, r, &walog.Options{Format: f, Chunk: 4096})
			const goroutines, each = 4, 200
			var wg sync.WaitGroup
			seqs := make([][]uint64, goroutines)
			for g := range goroutines {
				wg.Go(func() {
					for i := range each {
						p := fmt.Appendf(nil, "g%d-%d", g, i)
						var seq uint64
						var err error
						if i%10 == 0 {
							seq, err = l.AppendBatch([][]byte{p})
						} else {
							seq, err = l.Append(p)
						}
						if err != nil {
							t.Error(err)
							return
						}
						seqs[g] = append(seqs[g], seq)
					}
				})
			}
			// An iterator runs alongside.
			wg.Go(func() {
				for range 20 {
					it := l.Iter()
					prev := uint64(0)
					for it.Next() {
						if it.Seq() != prev+1 {
							t.Errorf("iterator: seq %d after %d", it.Seq(), prev)
						}
						prev = it.Seq()
					}
				}
			})
			wg.Wait()
			got := all(t, l)
			require.Len(t, got, goroutines*each)
			for g := range goroutines {
				for i, s := range seqs[g] {
					require.Equal(t, fmt.Sprintf("g%d-%d", g, i), string(got[s-1].data))
					if i > 0 {
						require.Greater(t, s, seqs[g][i-1], "one goroutine's appends are in order")
					}
				}
			}
		})
	}
}

// TestLargeEntries appends entries longer than the staging buffer, around
// its size, alone and in batches.
func TestLargeEntries(t *testing.T) {
	for _, f := range formats {
		for _, align := range []int{8, 256} {
			t.Run(fmt.Sprintf("%s/align%d", f, align), func(t *testing.T) {
				r := anon(t, 4<<20)
				l := mustCreate(t, r, &walog.Options{Format: f, Align: align, MaxEntry: 100000, Chunk: 4096})
				rng := structtest.NewRand(5<<32 | 5)
				var want []entry
				for _, n := range []int{8100, 8128, 8129, 8191, 8192, 8193, 16383, 16384, 16385, 20000, 100000, 1, 33000} {
					p := payload(rng, 0, n)
					seq, err := l.Append(p)
					require.NoError(t, err)
					want = append(want, entry{seq, p})
				}
				batch := [][]byte{payload(rng, 0, 9000), payload(rng, 0, 5), payload(rng, 0, 17000)}
				seq, err := l.AppendBatch(batch)
				require.NoError(t, err)
				for i, p := range batch {
					want = append(want, entry{seq + uint64(i), p})
				}
				require.Equal(t, want, all(t, l))
				l.Close() // a restart: the old handle goes first
				l = mustOpen(t, r, nil)
				require.Equal(t, want, all(t, l))
			})
		}
	}
}

// TestStage: the stage is allocated by the first append, not by Create or
// Open, and sized to the area when that is smaller than 8 KiB; logs whose
// areas are smaller, equal or larger take entries and batches of every
// size they can hold (the largest streamed through the stage in pieces),
// wrap, and read back the same after a reopen.
func TestStage(t *testing.T) {
	for _, f := range formats {
		for _, size := range []int{768, 1024, 2048, 8192, 8192 + 256, 8192 + 512, 32 << 10} {
			t.Run(fmt.Sprintf("%s/%d", f, size), func(t *testing.T) {
				rng := structtest.NewRand(uint64(size)<<32 | uint64(f))
				r := anon(t, size)
				maxEntry := 1
				for walog.Footprint(f, maxEntry+1) <= size-walog.HeaderSize {
					maxEntry++
				}
				var model []entry
				wraps := 0
				o := &walog.Options{Format: f, MaxEntry: maxEntry, Chunk: 256, Wrap: true,
					Checkpoint: func(*walog.Log) error { model = nil; wraps++; return nil }}
				l := mustCreate(t, r, o)
				require.Zero(t, walog.StageLen(l))
				for i := range 60 {
					n := []int{1, maxEntry, maxEntry - 1, 1 + rng.Intn(maxEntry), randSize(rng, maxEntry)}[i%5]
					if i%7 == 6 {
						k := 1 + rng.Intn(3)
						var batch [][]byte
						for j := range k {
							batch = append(batch, payload(rng, uint64(j), 1+rng.Intn(maxEntry/k/2+1)))
						}
						if walog.BatchNeed(f, 8, sizes(batch)...) <= l.Stats().MaxBatch {
							seq, err := l.AppendBatch(batch)
							require.NoError(t, err)
							for j, p := range batch {
								model = append(model, entry{seq + uint64(j), p})
							}
						}
					} else {
						p := payload(rng, uint64(i), n)
						seq, err := l.Append(p)
						require.NoError(t, err)
						model = append(model, entry{seq, p})
					}
					require.Equal(t, min(8192, size-walog.HeaderSize), walog.StageLen(l))
					if i%10 == 9 {
						require.NoError(t, l.Close())
						l = mustOpen(t, r, o)
						require.Zero(t, walog.StageLen(l))
					}
					requireEntries(t, model, all(t, l), "step %d", i)
				}
				require.Greater(t, wraps, 3)
			})
		}
	}
}

func sizes(ps [][]byte) []int {
	var s []int
	for _, p := range ps {
		s = append(s, len(p))
	}
	return s
}
