package crash

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// state is one crash test.
type state struct {
	cfg          Config
	check        func(*Image) error
	report       *Report
	events       int
	stopped      bool
	dry          bool
	keys         []pathKey // the counting run's fences, for sampling
	sample       map[int]bool
	stacks       map[pathKey]struct{} // PerStack: the paths seen
	pairPaths    map[pathKey]struct{} // the paths whose pairs were planned (or skipped)
	replay       *replay
	findings     map[[2]string]*Finding
	scope        *testScope
	inImage      int // > 0 while a check runs: its findings are not the workload's
	replayHit    bool
	replayImages int // images planned at the replayed crash point (-1: not reached)
	replayErr    error

	sched      int      // the schedule running (concurrent workloads)
	est        int      // scheduling decisions in schedule 0 (PCT's estimate)
	cur        *machine // the workload's machine running
	concurrent bool     // some schedule started threads
}

func (st *state) curConc() bool { return st.cur != nil && st.cur.sched.active() }

func (st *state) finding(kind string, skip int, detail string) {
	if st.dry || st.inImage > 0 {
		return
	}
	site, fn, caller, _ := callSite(skip + 1)
	k := [2]string{kind, site}
	if f := st.findings[k]; f != nil {
		f.Count++
		return
	}
	st.findings[k] = &Finding{Kind: kind, Site: site, Func: fn, Caller: caller, Count: 1, Detail: detail}
}

func (st *state) fail(f *Failure) {
	st.report.Failures = append(st.report.Failures, f)
	if !st.cfg.KeepGoing {
		st.stopped = true
	}
}

// Test runs a crash test and fails t on every failure found; it logs the
// summary, the coverage and the findings. See Check. Each failure carries
// a command line that replays exactly the image reported, once: it sets
// ReplayEnv, and names this test and this call of Test within it, so
// other crash tests run normally.
func Test(t testing.TB, cfg Config, workload func(*Run) error, check func(*Image) error) *Report {
	t.Helper()
	name := t.Name()
	testCalls.Lock()
	testCalls.n[name]++
	call := testCalls.n[name]
	testCalls.Unlock()
	if call == 1 {
		t.Cleanup(func() {
			testCalls.Lock()
			delete(testCalls.n, name)
			testCalls.Unlock()
		})
	}
	dir, err := os.Getwd() // go test runs a test in its package's directory
	if err != nil {
		_, file, _, _ := runtime.Caller(1)
		dir = filepath.Dir(file)
	}
	run := "^" + strings.ReplaceAll(regexpQuote(name), "/", "$/^") + "$"
	flags := buildFlags()
	scope := &testScope{name: name, call: call, cmd: func(key string) string {
		env := fmt.Sprintf("%s test=%s call=%d", key, name, call)
		return fmt.Sprintf("(cd %s && %s=%s go test -count=1%s -run %s -v .)", shellQuote(dir), ReplayEnv, shellQuote(env), flags, shellQuote(run))
	}}
	rep, err := check0(cfg, workload, check, scope)
	if rep != nil {
		for _, f := range rep.Failures {
			t.Error(f.Error())
		}
		t.Log(rep.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// testCalls counts the calls of Test in each running test.
var testCalls = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// Check runs the workload once on fresh simulated regions. At every
// selected crash point it builds crash images — each dirty or in-flight
// 8-byte word (or line, with LineAtomic) either reached media or did not,
// or tore — and calls check on each, synchronously, while the workload is
// paused: check may read what the workload has acknowledged so far. check
// recovers from the image's regions and returns an error when the result
// is wrong; a panic in check counts as an error. Some images of every
// class also get crashes injected into their recovery
// (Config.RecoveryCrashes).
//
// The workload must start from scratch on every call: with SampleFences it
// runs twice. The returned error is a bad Config, a workload error or a
// replay (ReplayEnv) that does not fit the run; failures of check are in
// the Report.
func Check(cfg Config, workload func(*Run) error, check func(*Image) error) (*Report, error) {
	return check0(cfg, workload, check, nil)
}

func check0(cfg Config, workload func(*Run) error, check func(*Image) error, scope *testScope) (*Report, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if workload == nil || check == nil {
		return nil, fmt.Errorf("%w: nil workload or check", ErrConfig)
	}
	st := &state{cfg: c, check: poisonCheck(c, check), report: &Report{}, stacks: map[pathKey]struct{}{}, pairPaths: map[pathKey]struct{}{},
		findings: map[[2]string]*Finding{}, scope: scope, replayImages: -1}
	if st.replay, err = parseReplay(os.Getenv(ReplayEnv)); err != nil {
		return nil, err
	}
	if r := st.replay; r != nil && r.test != "" && (scope == nil || r.test != scope.name || r.call != scope.call) {
		st.replay = nil // the replay is for another crash test
	}
	if st.replay != nil {
		st.report.Replayed = os.Getenv(ReplayEnv)
	}
	start := time.Now()
	werr := st.runSchedules(workload)
	rep := st.report
	rep.Elapsed = time.Since(start)
	st.collectFindings()
	switch {
	case werr != nil:
		return rep, werr
	case st.replayErr != nil:
		return rep, st.replayErr
	case st.replay != nil && !st.replayHit && st.replayImages >= 0:
		return rep, fmt.Errorf("%w: %s: crash point seq=%d has %d images here, no image %d: %s", ErrConfig, ReplayEnv, st.replay.seq, st.replayImages, st.replay.image, st.replay.why)
	case st.replay != nil && !st.replayHit:
		return rep, fmt.Errorf("%w: %s: crash point seq=%d was not reached (the run had %d events): %s", ErrConfig, ReplayEnv, st.replay.seq, st.events, st.replay.why)
	case st.replay != nil && (rep.Blocked > 0 || st.replay.blocked > 0) && !rep.Failed():
		return rep, fmt.Errorf("%w: %s: the replayed image passed: %s", ErrConfig, ReplayEnv, st.replay.why)
	}
	return rep, nil
}

// runSchedules runs the workload once, and, when it started threads
// (Run.Go), again under every other schedule of Config.Schedules until
// one fails (all with KeepGoing). A replay runs its schedule only.
func (st *state) runSchedules(workload func(*Run) error) error {
	first, n := 0, st.cfg.Schedules
	if st.replay != nil {
		first, n = st.replay.sched, st.replay.sched+1
		st.est = st.replay.steps
		st.replay.why = st.replay.whyNot(nil)
	}
	for k := first; k < n; k++ {
		st.sched = k
		m, err := st.runOnce(workload, k)
		if err != nil {
			return err
		}
		conc := m.sched.active()
		if conc {
			rep := st.report
			rep.Schedules++
			rep.Threads = max(rep.Threads, len(m.sched.threads))
			rep.Switches += m.sched.switches
			if k == 0 {
				st.est = m.sched.steps
			}
			st.concurrent = true
			st.report.Blocked += m.sched.blocked
			if st.replay != nil {
				st.replay.why = st.replay.whyNot(m.sched)
			}
		}
		m.close()
		if !conc || st.stopped {
			break
		}
	}
	return nil
}

// runOnce runs the workload under schedule k (with SampleFences, once
// more beforehand to count its fences) and returns its machine, to close.
func (st *state) runOnce(workload func(*Run) error, k int) (*machine, error) {
	c := &st.cfg
	st.events = 0
	if c.SampleFences > 0 && st.replay == nil {
		st.dry = true
		st.keys = st.keys[:0]
		m, err := st.newWorkloadMachine(k)
		if err != nil {
			return nil, err
		}
		err = runWorkload(m, workload)
		m.close()
		if err != nil {
			return nil, fmt.Errorf("crash: workload (counting run): %w", err)
		}
		st.sample = sampleFences(st.keys, c.SampleFences, c.Seed)
		st.dry, st.events = false, 0
	}
	m, err := st.newWorkloadMachine(k)
	if err != nil {
		return nil, err
	}
	werr := runWorkload(m, workload)
	if werr == nil {
		m.mu.Lock()
		m.crashPoint(Point{Kind: KindEnd, Label: m.lastLabel}, 1)
		m.mu.Unlock()
	}
	st.report.Fences = max(st.report.Fences, m.fences)
	if werr != nil {
		m.close()
		return nil, fmt.Errorf("crash: workload: %w", werr)
	}
	return m, nil
}

// key is a replay key with the schedule of a concurrent run.
func (st *state) key(k string) string {
	if st.curConc() {
		if p, _ := schedulePolicy(st.sched); p == policyPCT {
			k = fmt.Sprintf("%s sched=%d steps=%d", k, st.sched, st.est)
		} else {
			k = fmt.Sprintf("%s sched=%d", k, st.sched)
		}
		if b := st.cur.sched.blocked; b > 0 {
			k = fmt.Sprintf("%s blocked=%d", k, b)
		}
	}
	return k
}

// schedule names the schedule of a concurrent run ("" for one goroutine).
func (st *state) schedule() string {
	if st.curConc() {
		return fmt.Sprintf("%s, goroutine %d's turn", schedName(st.sched), st.cur.sched.turnID())
	}
	return ""
}

func (st *state) collectFindings() {
	rep := st.report
	for _, f := range st.findings {
		rep.Findings = append(rep.Findings, *f)
	}
	sort.Slice(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Site < b.Site
	})
}

func (st *state) newWorkloadMachine(k int) (*machine, error) {
	m := newMachine(st, 0, true)
	m.sched = newSched(m, st.cfg.Seed, k, st.est)
	st.cur = m
	for i, spec := range st.cfg.Regions {
		store, live, media, track, err := newStore(spec.Size)
		if err != nil {
			m.close()
			return nil, err
		}
		if spec.Garbage {
			// Into media: where live is a mapping of media it shows
			// the garbage without a page of it counting as written.
			rng := rand.New(rand.NewPCG(st.cfg.Seed, uint64(i)+1))
			w := words(media)
			for j := range w {
				w[j] = rng.Uint64()
			}
			if _, ok := store.(*copyStore); ok {
				copy(live, media)
			}
		}
		s, err := m.addRegion(spec, live, media, store)
		if err != nil {
			store.close()
			if track != nil {
				track.close()
			}
			m.close()
			return nil, err
		}
		s.track = track
	}
	return m, nil
}

// close releases the memory of the machine's regions.
func (m *machine) close() {
	for _, s := range m.regions {
		if s.stopWatch != nil {
			s.stopWatch()
			s.stopWatch = nil
		}
		s.store.close()
		if s.track != nil {
			s.track.close()
			s.track = nil
		}
	}
}

// runWorkload runs the workload and waits for its threads.
func runWorkload(m *machine, workload func(*Run) error) error {
	err := guarded("panic", func() error { return workload(&Run{m: m}) })
	if m.sched.active() {
		m.sched.wait()
		m.sched.close()
		m.sched.mu.Lock()
		err = errors.Join(append([]error{err}, m.sched.errs...)...)
		m.sched.mu.Unlock()
	}
	return err
}

// guarded runs fn and returns a panic in it as an error: a regionError
// (an unknown region's name) as it is, any other with what and the stack.
func guarded(what string, fn func() error) (err error) {
	defer func() {
		switch p := recover().(type) {
		case nil:
		case *regionError:
			err = p
		default:
			err = fmt.Errorf("%s: %v\n%s", what, p, debug.Stack())
		}
	}()
	return fn()
}
