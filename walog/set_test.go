package walog_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// readSet reads a set through its merged iterator: the entries of each
// member, checking that sequence numbers grow along the merge.
func readSet(s *walog.Set) ([][]entry, error) {
	got := make([][]entry, s.Len())
	it := s.Iter()
	prev := uint64(0)
	for it.Next() {
		if it.Seq() <= prev {
			return nil, fmt.Errorf("set iterator: seq %d after %d", it.Seq(), prev)
		}
		prev = it.Seq()
		m := it.Member()
		got[m] = append(got[m], entry{it.Seq(), bytes.Clone(it.Entry())})
	}
	return got, it.Err()
}

func TestSet(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 1<<20)
			parts, err := walog.Split(r, 4)
			require.NoError(t, err)
			s, err := walog.CreateSet(parts, &walog.Options{Format: f, Chunk: 4096})
			require.NoError(t, err)
			require.Equal(t, 4, s.Len())

			// Concurrent appenders, one member each: sequence numbers are
			// unique and grow along each member.
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					l := s.Log(g)
					for i := range 300 {
						p := fmt.Appendf(nil, "m%d-%d", g, i)
						var err error
						if i%7 == 0 {
							_, err = l.AppendBatch([][]byte{p})
						} else {
							_, err = l.Append(p)
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			got, err := readSet(s)
			require.NoError(t, err)
			for m := range 4 {
				require.Len(t, got[m], 300)
				for i, e := range got[m] {
					require.Equal(t, fmt.Sprintf("m%d-%d", m, i), string(e.data))
				}
			}
			require.Equal(t, uint64(1201), s.NextSeq())

			// Reopen: the same, and numbering goes on.
			require.NoError(t, s.Close())
			require.ErrorIs(t, s.Close(), walog.ErrClosed)
			s.Close() // a restart: the old handle goes first
			s, err = walog.OpenSet(parts, nil)
			require.NoError(t, err)
			again, err := readSet(s)
			require.NoError(t, err)
			require.Equal(t, got, again)
			seq, err := s.Log(2).Append([]byte("x"))
			require.NoError(t, err)
			require.Equal(t, uint64(1201), seq)

			// Reset empties every member; numbering goes on.
			require.NoError(t, s.Reset())
			got, err = readSet(s)
			require.NoError(t, err)
			for m := range got {
				require.Empty(t, got[m])
			}
			seq, err = s.Log(0).Append([]byte("y"))
			require.NoError(t, err)
			require.Equal(t, uint64(1202), seq)
			s.Close() // a restart: the old handle goes first
			s, err = walog.OpenSet(parts, nil)
			require.NoError(t, err)
			got, err = readSet(s)
			require.NoError(t, err)
			require.Equal(t, []entry{{1202, []byte("y")}}, got[0])
		})
	}
}

func TestSetBadInput(t *testing.T) {
	r := anon(t, 64<<10)
	_, err := walog.Split(r, 0)
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.Split(r, 1000)
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.CreateSet(nil, nil)
	require.ErrorIs(t, err, walog.ErrInvalid)
	_, err = walog.CreateSet([]walog.Part{{Region: r, Size: 8192}, {Region: r, Offset: 4096, Size: 8192}}, nil)
	require.ErrorIs(t, err, walog.ErrInvalid, "overlapping members")
	_, err = walog.CreateSet([]walog.Part{{Region: nil}}, nil)
	require.ErrorIs(t, err, walog.ErrInvalid)

	parts, err := walog.Split(r, 2)
	require.NoError(t, err)
	_, err = walog.CreateSet(parts, nil)
	require.NoError(t, err)
	_, err = walog.Open(r, nil)
	require.ErrorIs(t, err, walog.ErrBadFormat, "a member is not a standalone log")
	_, err = walog.OpenSet(parts[:1], nil)
	require.ErrorIs(t, err, walog.ErrBadFormat, "a set of 2 opened as 1")
	_, err = walog.OpenSet([]walog.Part{parts[1], parts[0]}, nil)
	require.ErrorIs(t, err, walog.ErrBadFormat, "members swapped")
	_, err = walog.OpenSet(parts, &walog.Options{Format: walog.Classic})
	require.ErrorIs(t, err, walog.ErrInvalid)

	r2 := anon(t, 64<<10)
	other, err := walog.Split(r2, 2)
	require.NoError(t, err)
	_, err = walog.CreateSet(other, nil)
	require.NoError(t, err)
	_, err = walog.OpenSet([]walog.Part{parts[0], other[1]}, nil)
	require.ErrorIs(t, err, walog.ErrBadFormat, "a member of another set")

	solo := anon(t, 16<<10)
	mustCreate(t, solo, nil)
	_, err = walog.OpenSet([]walog.Part{{Region: solo}}, nil)
	require.ErrorIs(t, err, walog.ErrBadFormat, "a standalone log is not a set")
}

// TestCrashSet crashes every fence of a set workload: appends and batches
// to three members (one region, split), member wraps, a Set.Reset and a
// clean reopen. Recovery returns, per member, a prefix holding every
// acknowledged entry, and Set.Reset is all or nothing across members.
func TestCrashSet(t *testing.T) {
	for _, f := range formats {
		for seed := range uint64(*crashSeeds) {
			t.Run(fmt.Sprintf("%s/seed%d", f, seed), func(t *testing.T) {
				workload, check := crashSet(walog.Options{Format: f, MaxEntry: 300, Chunk: 256}, seed)
				cfg := crashConfig(seed)
				cfg.Regions[0].Size = 3 * 1024
				cfg.MaxImages = 16 // bounded for make test: three members, many crash points
				crash.Test(t, cfg, workload, check)
				require.Positive(t, wraps, "the workload wraps a member")
			})
		}
	}
}

// wraps counts the member wraps of the last set workload (the test checks
// that the workload exercises them).
var wraps int

func crashSet(o walog.Options, seed uint64) (func(*crash.Run) error, func(*crash.Image) error) {
	const members = 3
	var (
		created bool
		state   [][]entry
		allowed [][][]entry
		next    uint64
		batch   []entry
		target  int
	)
	clone := func(st [][]entry) [][]entry {
		c := make([][]entry, len(st))
		for i := range st {
			c[i] = slices.Clone(st[i])
		}
		return c
	}
	with := func(m int, es []entry) [][]entry {
		c := clone(state)
		c[m] = es
		return c
	}
	workload := func(w *crash.Run) error {
		created, state, next, wraps = false, make([][]entry, members), 1, 0
		allowed = [][][]entry{state}
		opts := o
		opts.Wrap = true
		opts.Checkpoint = func(l *walog.Log) error {
			allowed = append(allowed, with(l.Member(), nil))
			for _, p := range prefixes(nil, batch) {
				allowed = append(allowed, with(l.Member(), p))
			}
			return nil
		}
		parts, err := walog.Split(w.Region("log"), members)
		if err != nil {
			return err
		}
		s, err := walog.CreateSet(parts, &opts)
		if err != nil {
			return err
		}
		created = true
		rng := structtest.NewRand(seed<<32 | 5)
		sizes := []int{1, 8, 9, 40, 64, 100, 250, 300}
		for i := range 40 {
			allowed = [][][]entry{clone(state)}
			switch op := rng.Intn(20); {
			case i == 25:
				for m := range state {
					if len(state[m]) > 0 {
						allowed = append(allowed, make([][]entry, members))
						break
					}
				}
				if err := s.Reset(); err != nil {
					return err
				}
				state = make([][]entry, members)
			case i == 15:
				if err := s.Close(); err != nil {
					return err
				}
				parts, err = walog.Split(w.Reopen("log"), members)
				if err != nil {
					return err
				}
				if s, err = walog.OpenSet(parts, &opts); err != nil {
					return err
				}
			default:
				target = rng.Intn(members)
				k := 1
				if op < 5 {
					k = 2 + rng.Intn(2)
				}
				batch = nil
				var ps [][]byte
				for j := range k {
					p := crashPayload(next+uint64(j), sizes[rng.Intn(len(sizes))])
					ps = append(ps, p)
					batch = append(batch, entry{next + uint64(j), p})
				}
				for _, p := range prefixes(state[target], batch) {
					allowed = append(allowed, with(target, p))
				}
				l := s.Log(target)
				before := l.Stats().Entries
				if _, err := l.AppendBatch(ps); errors.Is(err, walog.ErrTooLarge) {
					break // a batch larger than a member: nothing appended
				} else if err != nil {
					return fmt.Errorf("op %d: %w", i, err)
				}
				if l.Stats().Entries < before+k {
					state[target] = nil // it wrapped
				}
				state[target] = append(state[target], batch...)
				next += uint64(k)
			}
			allowed = [][][]entry{clone(state)}
			w.Durable("op")
		}
		for m := range members {
			wraps += s.Log(m).Stats().Wraps
		}
		return nil
	}
	check := func(img *crash.Image) error {
		parts, err := walog.Split(img.Region("log"), members)
		if err != nil {
			return err
		}
		copts := o
		s, err := walog.OpenSet(parts, &copts)
		if err != nil {
			if !created && (errors.Is(err, walog.ErrNoLog) || errors.Is(err, walog.ErrBadFormat)) {
				return nil
			}
			return fmt.Errorf("open set: %w", err)
		}
		got, err := readSet(s)
		if err != nil {
			return err
		}
		base := clone(got)
		if n := len(got[0]); n > 0 && bytes.HasPrefix(got[0][n-1].data, []byte(probePrefix)) {
			base[0] = got[0][:n-1]
		}
		ok := false
		for _, a := range allowed {
			if slices.EqualFunc(a, base, func(x, y []entry) bool { return entriesEqual(x, y) }) {
				ok = true
				break
			}
		}
		if !ok {
			var want []string
			for _, a := range allowed {
				want = append(want, fmt.Sprint(listEntries(a[0]), listEntries(a[1]), listEntries(a[2])))
			}
			return fmt.Errorf("recovered %s %s %s; allowed %q", listEntries(got[0]), listEntries(got[1]), listEntries(got[2]), want)
		}
		// The numbering goes on past every recovered entry.
		for _, es := range got {
			for _, e := range es {
				if e.seq >= s.NextSeq() {
					return fmt.Errorf("next seq %d, but entry %d recovered", s.NextSeq(), e.seq)
				}
			}
		}
		probe := fmt.Appendf(nil, "%s%d", probePrefix, len(got[0]))
		if _, err := s.Log(0).Append(probe); err != nil && !errors.Is(err, walog.ErrFull) {
			return fmt.Errorf("append after recovery: %w", err)
		}
		return nil
	}
	return workload, check
}

// TestSetMember resets and truncates members one by one: the set's
// numbering goes on, and the other members keep their entries.
func TestSetMember(t *testing.T) {
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := anon(t, 256<<10)
			parts, err := walog.Split(r, 3)
			require.NoError(t, err)
			s, err := walog.CreateSet(parts, &walog.Options{Format: f, Chunk: 1024})
			require.NoError(t, err)
			for i := range 30 {
				_, err := s.Log(i % 3).Append(fmt.Appendf(nil, "e%d", i))
				require.NoError(t, err)
			}
			require.NoError(t, s.Log(1).Reset())
			require.NoError(t, s.Log(2).Truncate(15)) // member 2 holds 3, 6, ..., 30: keeps 3..12
			seq, err := s.Log(1).Append([]byte("after"))
			require.NoError(t, err)
			require.Equal(t, uint64(31), seq)
			check := func(s *walog.Set) {
				got, err := readSet(s)
				require.NoError(t, err)
				require.Len(t, got[0], 10)
				require.Equal(t, []entry{{31, []byte("after")}}, got[1])
				require.Len(t, got[2], 4)
				require.Equal(t, uint64(12), got[2][3].seq)
			}
			check(s)
			s.Close() // a restart: the old handle goes first
			s, err = walog.OpenSet(parts, nil)
			require.NoError(t, err)
			check(s)
			require.Equal(t, uint64(32), s.NextSeq())
			for _, rep := range s.Recovery() {
				require.NoError(t, rep.Stop)
				require.Equal(t, uint64(32), rep.NextSeq)
			}
		})
	}
}
