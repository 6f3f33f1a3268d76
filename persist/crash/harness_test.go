package crash_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
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

	t.Setenv(crash.ReplayEnv, fmt.Sprintf("seq=%d image=9999", f.Point.Seq))
	_, err = crash.Check(v.cfg, wl, ck)
	require.ErrorIs(t, err, crash.ErrConfig)
	require.ErrorContains(t, err, fmt.Sprintf("crash point seq=%d has %d images here, no image 9999", f.Point.Seq, f.Images))

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

	// Data not durable at a durability point: where, which words, and
	// the command that runs the test again.
	for _, v := range suite() {
		if v.name == "last store of an operation never made durable" {
			wl, ck := v.build(true)
			ft := &fakeT{TB: t}
			crash.Test(ft, v.cfg, wl, ck)
			require.True(t, ft.failed)
			msg := ft.msgs.String()
			for _, want := range []string{`at durable "op returned" (after fence 1) at crash/suite_test.go:`, "written but not durable", "r+0x0: 0x0000000000000000 -> 0x0000000000000001", "replay: (cd ", crash.ReplayEnv + "='seq=2 durable test=TestFailureMessage call=", "go test -count=1"} {
				require.Contains(t, msg, want)
			}
			t.Log(msg)
		}
	}
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
	if os.Getenv("BRAID_CRASH_TARGET") == "" {
		// This package's tests set the variable themselves.
		os.Unsetenv(crash.ReplayEnv)
	}
	os.Exit(m.Run())
}

// TestReplayExact replays a reported failure from its ReplayKey: the check
// runs once, on the image as reported (shrunk), and fails the same way.
func TestReplayExact(t *testing.T) {
	v := suite()[0]
	wl, ck := v.build(true)
	rep, err := crash.Check(v.cfg, wl, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed())
	f := rep.Failures[0]
	require.Contains(t, f.ReplayKey, "keep=")

	t.Setenv(crash.ReplayEnv, f.ReplayKey)
	wl, ck = v.build(true)
	calls := 0
	again, err := crash.Check(v.cfg, wl, func(img *crash.Image) error { calls++; return ck(img) })
	require.NoError(t, err)
	require.Equal(t, 1, calls, "an exact replay checks the reported image only")
	require.Equal(t, f.Summary(), again.Failures[0].Summary())
	require.Equal(t, f.Survived, again.Failures[0].Survived)

	// A replay whose survivors do not exist any more is an error.
	t.Setenv(crash.ReplayEnv, fmt.Sprintf("seq=%d image=%d keep=99:1", f.Point.Seq, f.Image))
	_, err = crash.Check(v.cfg, wl, ck)
	require.ErrorContains(t, err, "does not exist")
	// A replay for another Test call leaves Check alone.
	t.Setenv(crash.ReplayEnv, f.ReplayKey+" test=TestSomethingElse call=1")
	all, err := crash.Check(v.cfg, wl, ck)
	require.NoError(t, err)
	require.Greater(t, all.Images, 1)
	// A crash during recovery replays as the outer image and the image
	// of the recovery's crash: two checks.
	for _, v := range suite() {
		if v.name != "recovery that breaks if it crashes itself" {
			continue
		}
		t.Setenv(crash.ReplayEnv, "")
		wl, ck := v.build(true)
		rep, err := crash.Check(v.cfg, wl, ck)
		require.NoError(t, err)
		f := rep.Failures[0]
		require.NotNil(t, f.Recovery)
		require.Contains(t, f.ReplayKey, " rseq=")
		t.Setenv(crash.ReplayEnv, f.ReplayKey)
		wl, ck = v.build(true)
		calls := 0
		again, err := crash.Check(v.cfg, wl, func(img *crash.Image) error { calls++; return ck(img) })
		require.NoError(t, err)
		require.Equal(t, 2, calls)
		require.Equal(t, f.Summary(), again.Failures[0].Summary())
	}
	for _, bad := range []string{"seq=2 image=1 keep=0:0", "seq=2 keep=a:1", "seq=2 keep=3-1", "seq=2 drop=1:2", "seq=2 oops", "seq=2 color=3"} {
		t.Setenv(crash.ReplayEnv, bad)
		_, err = crash.Check(v.cfg, wl, ck)
		require.ErrorIs(t, err, crash.ErrConfig, bad)
	}
}

// TestReplayTarget is run by TestReplayCommand in a child process: two
// crash tests in one test, the second broken.
func TestReplayTarget(t *testing.T) {
	if os.Getenv("BRAID_CRASH_TARGET") == "" {
		t.Skip("run by TestReplayCommand")
	}
	v := suite()[1] // missing fence between data and commit flag
	wl, ck := v.build(false)
	crash.Test(t, v.cfg, wl, ck)
	wl, ck = v.build(true)
	crash.Test(t, v.cfg, wl, ck)
}

// TestReplayCommand runs the replay line a failure prints, as a user
// would paste it (with this test binary in place of go test): it must
// check that one image once and fail the same way, and leave the other
// crash test of the same test alone.
func TestReplayCommand(t *testing.T) {
	if os.Getenv("BRAID_CRASH_TARGET") != "" {
		t.Skip("in the child")
	}
	run := func(env ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestReplayTarget$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), append([]string{"BRAID_CRASH_TARGET=1"}, env...)...)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the target fails:\n%s", out)
		return string(out)
	}
	first := run()
	re := regexp.MustCompile(`replay: \(cd (\S+) && ` + crash.ReplayEnv + `='([^']*)' go test -count=1[^(]* -run '(\S+)' -v \.\)`)
	m := re.FindStringSubmatch(first)
	require.NotNil(t, m, "no replay line in:\n%s", first)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, wd, m[1])
	require.Equal(t, "^TestReplayTarget$", m[3])
	require.Contains(t, m[2], "test=TestReplayTarget call=2")

	second := run(crash.ReplayEnv + "=" + m[2])
	failure := func(out string) string {
		i := strings.Index(out, "crash: check failed")
		require.GreaterOrEqual(t, i, 0, out)
		j := strings.Index(out[i:], "replay:")
		return out[i : i+j]
	}
	require.Equal(t, failure(first), failure(second))
	require.Contains(t, second, "1 crash points, 1 images", "the replay checks one image:\n%s", second)
	require.Equal(t, strings.Count(first, "0 failures"), strings.Count(second, "0 failures"), "the first crash test runs in full both times")
	require.Contains(t, second, "13 crash points, 80 images", "the first crash test runs in full:\n%s", second)
	t.Logf("replayed %s", m[2])
}

// TestShrinkFewest: the reported image keeps only the words the failure
// needs, also when a unit becomes removable only after a later one went.
func TestShrinkFewest(t *testing.T) {
	cfg := crash.Config{Regions: region("r", 4096), Points: crash.AtEnd, MaxImages: 2, RecoveryCrashes: -1}
	rep, err := crash.Check(cfg, func(w *crash.Run) error {
		b := w.Region("r").Bytes()
		put(b, 0, 1) // A
		put(b, 8, 2) // B
		put(b, 16, 3)
		return nil // C
	}, func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		a, bb, c := u64(b, 0) != 0, u64(b, 8) != 0, u64(b, 16) != 0
		if a && !c || a && bb && c {
			return errors.New("A survived")
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, rep.Failed())
	f := rep.Failures[0]
	require.Equal(t, 1, f.Image, "everything survived fails first")
	require.Equal(t, []crash.Word{{Region: "r", Off: 0, Media: 0, Value: 1}}, f.Survived)
}

// TestStreamingCapturesOnlyItsWords: a streaming copy into a line makes
// only the words it wrote durable at the fence; a flush of the same line
// takes the whole line, an ordinary store next to the copy included.
func TestStreamingCapturesOnlyItsWords(t *testing.T) {
	for _, temporal := range []bool{false, true} {
		cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 4096, Options: &persist.Options{MovntThreshold: 8}}}, Points: crash.AtEnd}
		var src [56]byte
		for k := 0; k < 7; k++ {
			le.PutUint64(src[8*k:], uint64(k)+1)
		}
		lost := 0
		rep, err := crash.Check(cfg, func(w *crash.Run) error {
			r := w.Region("r")
			b := r.Bytes()
			put(b, 56, 99) // an ordinary store to the copy's line
			var fl persist.Flags
			if temporal {
				fl = persist.Temporal
			}
			return r.Copy(b[0:56], src[:], fl)
		}, func(img *crash.Image) error {
			b := img.Region("r").Bytes()
			if string(b[0:56]) != string(src[:]) {
				return fmt.Errorf("copied words not durable after the fence: % x", b[0:56])
			}
			if u64(b, 56) == 0 {
				lost++
			}
			return nil
		})
		require.NoError(t, err)
		require.False(t, rep.Failed(), "%v", rep.Failures)
		if temporal {
			require.Zero(t, lost, "the flush of the line took the word stored next to the copy")
		} else {
			require.NotZero(t, lost, "the streaming copy must not make the word next to it durable")
		}
	}
}

// TestImageIsolation: what a check writes into one image never shows in
// another, for copied images and for copy-on-write images of a large
// region, and in the images of crashes during recovery.
func TestImageIsolation(t *testing.T) {
	for _, size := range []int{64 << 10, 8 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			dirty := []int{0, 4096 + 8, size / 2, size - 8}
			scribble := []int{64, 8192, size/2 + 8, size - 4096, dirty[1]}
			special := map[int]bool{}
			for _, o := range append(append([]int(nil), dirty...), scribble...) {
				special[o] = true
			}
			var offs []int
			for o := range special {
				offs = append(offs, o)
			}
			slices.Sort(offs)
			zero := make([]byte, size)
			cfg := crash.Config{Regions: region("r", size), Points: crash.AtEnd | crash.AtFences, RecoveryCrashes: 2}
			var images, nested int
			rep, err := crash.Check(cfg, func(w *crash.Run) error {
				r := w.Region("r")
				b := r.Bytes()
				for i, o := range dirty {
					put(b, o, uint64(i)+1)
				}
				return r.Persist(b[0:8]) // one word durable, the others dirty
			}, func(img *crash.Image) error {
				r := img.Region("r")
				b := r.Bytes()
				images++
				if img.InRecovery() {
					nested++
				}
				prev := 0
				for _, o := range offs {
					if !bytes.Equal(b[prev:o], zero[prev:o]) {
						return fmt.Errorf("image %d: bytes [%d, %d) are not what the workload left", img.Index(), prev, o)
					}
					v := u64(b, o)
					ok := v == 0
					if i := slices.Index(dirty, o); i >= 0 {
						ok = ok || v == uint64(i)+1
					}
					if slices.Contains(scribble, o) && img.InRecovery() {
						ok = ok || v == 0xbad0bad0bad0bad0
					}
					if !ok {
						return fmt.Errorf("image %d (in recovery %v): word at %d is %#x", img.Index(), img.InRecovery(), o, v)
					}
					prev = o + 8
				}
				if !bytes.Equal(b[prev:], zero[prev:]) {
					return fmt.Errorf("image %d: the tail is not what the workload left", img.Index())
				}
				for _, o := range scribble {
					persist.Store64(b[o:], 0xbad0bad0bad0bad0)
				}
				return r.Persist(b[scribble[0] : scribble[0]+8]) // a fence: a crash point in recovery
			})
			require.NoError(t, err)
			require.False(t, rep.Failed(), "%v", rep.Failures)
			require.Greater(t, images, 8)
			require.NotZero(t, nested)
			t.Log(rep)
		})
	}
}

// sampledImages returns the images checked at the end of a workload that
// leaves words dirty words, as bit masks (bit i: word i survived).
func sampledImages(t *testing.T, cfg crash.Config, words int) []uint64 {
	var out []uint64
	cfg.Regions, cfg.Points, cfg.RecoveryCrashes = region("r", 4096), crash.AtEnd, -1
	_, err := crash.Check(cfg, func(w *crash.Run) error {
		b := w.Region("r").Bytes()
		for i := 0; i < words; i++ {
			persist.Store64(b[8*i:], 1)
		}
		return nil
	}, func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		var mask uint64
		for i := 0; i < words; i++ {
			mask |= u64(b, 8*i) << i
		}
		out = append(out, mask)
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestSampling: beyond MaxImages the images are: nothing survived,
// everything survived, each word alone lost and alone survived, the
// covering array, every pair alone lost, then seeded random subsets —
// the same for the same seed, different for another; within the bound
// every combination is checked once.
func TestSampling(t *testing.T) {
	cfg := crash.Config{Seed: 1, Pairs: -1, MaxImages: 200}
	a, b := sampledImages(t, cfg, 40), sampledImages(t, cfg, 40)
	cfg.Seed = 2
	c := sampledImages(t, cfg, 40)
	require.Len(t, a, 200)
	require.Equal(t, a, b, "the same seed samples the same images")
	require.NotEqual(t, a, c, "another seed samples other images")
	all := uint64(1)<<40 - 1
	require.Equal(t, []uint64{0, all, all &^ 1, 1, all &^ 2, 2}, a[:6])
	// nothing, everything, alone, cover2(40): 9 rows, the first of which
	// (nothing survived) is not checked again.
	const systematic = 2 + 80 + 8
	require.Equal(t, a[:systematic], c[:systematic], "the systematic images do not depend on the seed")

	ex := sampledImages(t, crash.Config{}, 6)
	require.Len(t, ex, 64, "2^6 combinations, all checked")
	seen := map[uint64]bool{}
	for _, m := range ex {
		seen[m] = true
	}
	require.Len(t, seen, 64)
}

// TestNoRepeats: the images of a sampled crash point are distinct —
// random images are drawn without replacement and skip the systematic
// ones — also when the budget nearly exhausts the combinations (before:
// 69 distinct of 96 at 7 words, 331 of 500 at 9).
func TestNoRepeats(t *testing.T) {
	for _, c := range []struct{ words, max int }{{7, 96}, {9, 500}, {8, 255}, {12, 96}} {
		imgs := sampledImages(t, crash.Config{MaxImages: c.max, Pairs: -1}, c.words)
		seen := map[uint64]bool{}
		for _, m := range imgs {
			require.False(t, seen[m], "%d words, budget %d: image %#x checked twice", c.words, c.max, m)
			seen[m] = true
		}
		require.Len(t, imgs, c.max, "%d words, budget %d", c.words, c.max)
	}
}
