package crash_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// twoWordHeader writes a header of two words (id, then version) the way
// the paper's CoW page slot does: id, fence, version, persist. It is
// correct only when a line is written back whole.
func twoWordHeader(w *crash.Run) error {
	r := w.Region("r")
	b := r.Bytes()
	for v := uint64(1); v <= 3; v++ {
		put(b, 0, v*7) // id
		must(r.Flush(b[0:8]))
		must(r.Drain())
		put(b, 8, v) // version
		must(r.Persist(b[0:16]))
	}
	return nil
}

func checkHeader(img *crash.Image) error {
	b := img.Region("r").Bytes()
	id, v := u64(b, 0), u64(b, 8)
	if v != 0 && id != v*7 && id != (v+1)*7 {
		return fmt.Errorf("version %d with id %d", v, id)
	}
	return nil
}

func TestLineAtomicModel(t *testing.T) {
	// Two words of one line written together and persisted once: whole
	// under the line model, torn under the word model.
	cfg := crash.Config{Regions: region("r", 4096)}
	rep, err := crash.Check(cfg, func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for v := uint64(1); v <= 3; v++ {
			put(b, 0, v*7)
			put(b, 8, v)
			must(r.Persist(b[0:16])) // two words, one line, one write-back
		}
		return nil
	}, func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if id, v := u64(b, 0), u64(b, 8); id != v*7 {
			return fmt.Errorf("torn header: id %d version %d", id, v)
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, rep.Failed(), "word-atomic model must tear a line")
	t.Logf("word-atomic: %s", rep.Failures[0].Summary())

	cfg.LineAtomic = true
	rep, err = crash.Check(cfg, func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for v := uint64(1); v <= 3; v++ {
			put(b, 0, v*7)
			put(b, 8, v)
			must(r.Persist(b[0:16]))
		}
		return nil
	}, func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if id, v := u64(b, 0), u64(b, 8); id != v*7 {
			return fmt.Errorf("torn header: id %d version %d", id, v)
		}
		return nil
	})
	require.NoError(t, err)
	require.False(t, rep.Failed(), "line-atomic model keeps a line whole: %v", rep.Failures)
	t.Logf("line-atomic: %s", rep)

	// The paper's two-step header passes in both models.
	for _, line := range []bool{false, true} {
		cfg.LineAtomic = line
		rep, err = crash.Check(cfg, twoWordHeader, checkHeader)
		require.NoError(t, err)
		require.False(t, rep.Failed(), "line=%v: %v", line, rep.Failures)
	}
}

func TestEADRMode(t *testing.T) {
	// On eADR a store is durable once fenced: no flushes needed.
	cfg := crash.Config{Regions: region("r", 4096), Mode: persist.ModeEADR}
	ok, broken := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for i := uint64(1); i <= 3; i++ {
			put(b, 64, i)
			must(r.Drain())
			persist.Store64(b[0:], i)
			must(r.Drain())
		}
		return nil
	}, func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for i := uint64(1); i <= 3; i++ {
			put(b, 64, i)
			persist.Store64(b[0:], i) // no fence between data and flag
			must(r.Drain())
		}
		return nil
	}
	ck := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if f := u64(b, 0); f != 0 && u64(b, 64) < f {
			return fmt.Errorf("flag %d, data %d", f, u64(b, 64))
		}
		return nil
	}
	rep, err := crash.Check(cfg, ok, ck)
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v", rep.Failures)
	rep, err = crash.Check(cfg, broken, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed())
	t.Logf("eADR, missing fence: caught (%s)", rep.Failures[0].Summary())
}

func TestMsyncMode(t *testing.T) {
	// msync syncs whole pages: data on the flag's page is durable with it.
	cfg := crash.Config{Regions: region("r", 16384), Mode: persist.ModeMsync}
	ck := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if f := u64(b, 0); f != 0 && u64(b, 8192) < f {
			return fmt.Errorf("flag %d, data %d", f, u64(b, 8192))
		}
		return nil
	}
	for _, c := range []struct {
		name   string
		broken bool
	}{{"data page synced first", false}, {"only the flag page synced", true}} {
		rep, err := crash.Check(cfg, func(w *crash.Run) error {
			r := w.Region("r")
			b := r.Bytes()
			for i := uint64(1); i <= 3; i++ {
				put(b, 8192, i)
				if !c.broken {
					must(r.Flush(b[8192:8200]))
				}
				persist.Store64(b[0:], i)
				must(r.Flush(b[0:8]))
			}
			return nil
		}, ck)
		require.NoError(t, err)
		require.Equal(t, c.broken, rep.Failed(), c.name)
	}
}

func TestFindings(t *testing.T) {
	rep, err := crash.Check(crash.Config{Regions: region("r", 4096), Points: crash.AtEnd}, func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		put(b, 0, 1)
		must(r.Persist(b[0:8]))
		must(r.Persist(b[0:8])) // nothing new: redundant flush and fence
		put(b, 64, 2)           // never flushed
		return r.Close()
	}, func(*crash.Image) error { return nil })
	require.NoError(t, err)
	require.False(t, rep.Failed(), "findings are reported, not failed")
	kinds := map[string]int{}
	for _, f := range rep.Findings {
		kinds[f.Kind] += f.Count
		require.Contains(t, f.Site, "harness_test.go", f.Kind)
	}
	require.Equal(t, 1, kinds[crash.KindRedundantFlush])
	require.Equal(t, 1, kinds[crash.KindRedundantFence])
	require.Equal(t, 1, kinds[crash.KindUnflushedAtClose])
	t.Log(rep)
}

func TestPointSelection(t *testing.T) {
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for i := 0; i < 20; i++ {
			put(b, 8*i, uint64(i)+1)
			must(r.Persist(b[8*i : 8*i+8]))
			w.Boundary("op")
		}
		w.Crash("on demand")
		return nil
	}
	count := func(cfg crash.Config) *crash.Report {
		var points []string
		rep, err := crash.Check(cfg, wl, func(img *crash.Image) error {
			p := img.Point()
			points = append(points, fmt.Sprintf("%s/%d/%d", p.Kind, p.Fence, p.Seq))
			return nil
		})
		require.NoError(t, err)
		return rep
	}
	base := crash.Config{Regions: region("r", 4096), MaxImages: 1}
	require.Equal(t, 22, count(base).Points, "20 fences + on demand + end")
	c := base
	c.Points = crash.AtBoundaries
	require.Equal(t, 21, count(c).Points, "20 boundaries + on demand")
	c = base
	c.Fences = []int{3, 7}
	require.Equal(t, 4, count(c).Points)
	c = base
	c.SampleFences = 5
	require.Equal(t, 7, count(c).Points)
	c = base
	c.PerStack = true
	require.Equal(t, 3, count(c).Points, "one fence stack + on demand + end")
}

func TestReplay(t *testing.T) {
	v := suite()[0] // missing flush before commit flag
	wl, ck := v.build(true)
	rep, err := crash.Check(v.cfg, wl, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed())
	f := rep.Failures[0]

	t.Setenv(crash.ReplayEnv, fmt.Sprintf("seq=%d image=%d", f.Point.Seq, f.Image))
	wl, ck = v.build(true)
	again, err := crash.Check(v.cfg, wl, ck)
	require.NoError(t, err)
	require.Equal(t, 1, again.Points)
	require.Equal(t, f.Summary(), again.Failures[0].Summary())

	t.Setenv(crash.ReplayEnv, "seq=9999 image=0")
	_, err = crash.Check(v.cfg, wl, ck)
	require.ErrorContains(t, err, "not reached", "a replay that matches nothing must not pass silently")

	t.Setenv(crash.ReplayEnv, "seq=x")
	_, err = crash.Check(v.cfg, wl, ck)
	require.ErrorIs(t, err, crash.ErrConfig)
}

// TestFailureMessage checks what a user sees: the seed, the fence and its
// call site, the surviving words and the replay line.
func TestFailureMessage(t *testing.T) {
	v := suite()[0]
	wl, ck := v.build(true)
	ft := &fakeT{TB: t}
	crash.Test(ft, v.cfg, wl, ck)
	require.True(t, ft.failed)
	msg := ft.msgs.String()
	for _, want := range []string{"check failed after a crash at fence", "suite_test.go:", "seed 0", "survived", "r+0x0:", "replay: (cd ", crash.ReplayEnv + "='seq="} {
		require.Contains(t, msg, want)
	}
	t.Log(msg)
}

type fakeT struct {
	testing.TB
	failed bool
	msgs   strings.Builder
}

func (f *fakeT) Error(args ...any) { f.failed = true; fmt.Fprintln(&f.msgs, args...) }
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed = true
	fmt.Fprintf(&f.msgs, format+"\n", args...)
}
func (f *fakeT) Log(args ...any) { fmt.Fprintln(&f.msgs, args...) }
func (f *fakeT) Helper()         {}

func TestMultipleCapturesOfOneWord(t *testing.T) {
	// A word flushed twice with different values before one fence may
	// end up with either value (or the old one), never anything else.
	seen := map[uint64]bool{}
	rep, err := crash.Check(crash.Config{Regions: region("r", 4096), Points: crash.AtFences}, func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		put(b, 0, 1)
		must(r.Flush(b[0:8]))
		put(b, 0, 2)
		must(r.Flush(b[0:8]))
		put(b, 0, 3)
		return r.Drain()
	}, func(img *crash.Image) error {
		seen[u64(img.Region("r").Bytes(), 0)] = true
		return nil
	})
	require.NoError(t, err)
	require.False(t, rep.Failed())
	require.Equal(t, map[uint64]bool{0: true, 1: true, 2: true, 3: true}, seen)
}

func TestGarbageIsSeeded(t *testing.T) {
	var first []byte
	for i := 0; i < 2; i++ {
		_, err := crash.Check(crash.Config{Regions: []crash.Spec{{Name: "r", Size: 64, Garbage: true}}, Seed: 42, Points: crash.AtEnd},
			func(w *crash.Run) error {
				b := w.Region("r").Bytes()
				if first == nil {
					first = append([]byte(nil), b...)
				} else {
					require.Equal(t, first, b)
				}
				return nil
			}, func(*crash.Image) error { return nil })
		require.NoError(t, err)
	}
	require.NotEqual(t, make([]byte, 64), first)
}

func TestMain(m *testing.M) {
	os.Unsetenv(crash.ReplayEnv)
	os.Exit(m.Run())
}
