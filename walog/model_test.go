package walog_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/walog"
	"github.com/stretchr/testify/require"
)

// TestModel runs random operation sequences against a log and a plain
// slice that models it, reopening the log (a clean restart) at random,
// and compares them after every step.
func TestModel(t *testing.T) {
	for _, f := range formats {
		for _, align := range []int{8, 64, 256} {
			for seed := range uint64(4) {
				t.Run(fmt.Sprintf("%s/align%d/seed%d", f, align, seed), func(t *testing.T) {
					runModel(t, f, align, seed, 400)
				})
			}
		}
	}
}

func runModel(t *testing.T, f walog.Format, align int, seed uint64, steps int) {
	rng := structtest.NewRand(seed<<32 | uint64(f)<<8 | uint64(align))
	size := []int{4 << 10, 16 << 10, 64 << 10}[rng.Intn(3)]
	r := anon(t, size+512)
	wrap := rng.Intn(2) == 0
	checkpoints := 0
	o := &walog.Options{Format: f, Align: align, Offset: 256, Size: size, MaxEntry: 700, Chunk: 256 << rng.Intn(4), Wrap: wrap}
	var model []entry
	if wrap {
		o.Checkpoint = func(*walog.Log) error { checkpoints++; model = nil; return nil }
	}
	l := mustCreate(t, r, o)
	next := uint64(1)
	for step := range steps {
		op := rng.Intn(100)
		switch {
		case op < 60:
			p := payload(rng, next, randSize(rng, 700))
			seq, err := l.Append(p)
			if errors.Is(err, walog.ErrFull) {
				require.False(t, wrap)
				continue
			}
			require.NoError(t, err, "step %d", step)
			require.Equal(t, next, seq)
			model = append(model, entry{seq, p})
			next++
		case op < 75:
			var batch [][]byte
			for range 1 + rng.Intn(8) {
				batch = append(batch, payload(rng, next, randSize(rng, 300)))
			}
			seq, err := l.AppendBatch(batch)
			if errors.Is(err, walog.ErrFull) || errors.Is(err, walog.ErrTooLarge) {
				continue
			}
			require.NoError(t, err, "step %d", step)
			require.Equal(t, next, seq)
			for _, p := range batch {
				model = append(model, entry{next, p})
				next++
			}
		case op < 80:
			require.NoError(t, l.Reset())
			model = nil
		case op < 87:
			var cut uint64
			if len(model) > 0 {
				cut = model[rng.Intn(len(model))].seq
			} else {
				cut = next
			}
			require.NoError(t, l.Truncate(cut))
			for i, e := range model {
				if e.seq >= cut {
					model = model[:i]
					next = e.seq
					break
				}
			}
		default:
			require.NoError(t, l.Close())
			l = mustOpen(t, r, o)
			rep := l.Recovery()
			require.NoError(t, rep.Stop)
			require.Zero(t, rep.Scrubbed, "%v", rep)
			require.Equal(t, len(model), rep.Entries)
		}
		requireEntries(t, model, all(t, l), "step %d", step)
		require.NoError(t, l.CheckFree(), "step %d op %d", step, op)
		st := l.Stats()
		require.Equal(t, next, st.NextSeq)
		require.Equal(t, len(model), st.Entries)
	}
	if wrap {
		t.Logf("%d checkpoints", checkpoints)
	}
}
