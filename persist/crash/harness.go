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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braid-pm/braid/persist"
)

// ReplayEnv is the environment variable that replays one failing crash
// image: "seq=N image=I" names the crash point and the image there,
// "keep=K:C,..." the surviving units exactly as the failure was reported
// (after shrinking), "rseq=R rimage=J" a crash during recovery, and
// "test=NAME call=C" the Test call it belongs to (other calls run
// normally). Failures print the exact command line; Failure.ReplayKey
// holds the value.
const ReplayEnv = "BRAID_CRASH_REPLAY"

// Run is the workload's view of the simulated machine.
type Run struct{ m *machine }

// Region returns the simulated region named in the Config. It panics on an
// unknown name (a bug in the test), and Check returns that panic as a
// one-line error wrapping ErrConfig that names the region asked for and
// the Config's regions.
func (w *Run) Region(name string) *persist.Region { return w.m.region(name).region }

// Reopen returns a fresh Region over the same memory, as a program sees
// the file after a clean restart (typically after Close). An unknown name
// panics as in Region.
func (w *Run) Reopen(name string) *persist.Region {
	s := w.m.region(name)
	r, err := persist.NewSimulated(s.live, w.m.run.cfg.Mode, s, s.spec.Options)
	if err != nil {
		panic(err) // the same arguments succeeded before
	}
	s.region, s.closed = r, false
	return r
}

// Boundary marks the end of an operation: a crash point when Config.Points
// has AtBoundaries.
func (w *Run) Boundary(label string) {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashPoint(Point{Kind: KindBoundary, Label: label}, 2)
}

// Durable marks a durability point: everything the workload wrote so far
// must be durable now (an operation has returned to its caller, say). A
// store not yet flushed and fenced is reported as a failure. It is also an
// operation boundary.
func (w *Run) Durable(label string) {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.run
	if !st.dry && !st.stopped && st.replay == nil {
		var dirty []Word
		for _, s := range m.regions {
			dirty = append(dirty, s.dirtyWords(8)...)
		}
		if len(dirty) > 0 {
			site, fn, caller, _ := callSite(2)
			f := &Failure{
				Point:      Point{Seq: st.events + 1, Kind: KindDurable, Label: label, Fence: m.fences, Site: site, Func: fn, Caller: caller},
				NotDurable: dirty,
				Err:        fmt.Errorf("written but not durable at durability point %q: %s", label, describeWords(dirty)),
			}
			if st.scope != nil {
				f.Replay = st.scope.cmd("") // the run is deterministic: run it again
			}
			st.fail(f)
		}
	}
	m.crashPoint(Point{Kind: KindDurable, Label: label}, 2)
}

// Crash is a crash point on demand: always tested.
func (w *Run) Crash(label string) {
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashPoint(Point{Kind: KindCrash, Label: label}, 2)
}

// Fences returns the number of fences so far.
func (w *Run) Fences() int {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	return w.m.fences
}

// Image is one crash image, handed to the check function: fresh simulated
// regions holding what survived.
type Image struct {
	m          *machine
	point      Point
	stack      *stackAt // where point's site comes from while the check runs
	index      int
	inRecovery bool
}

// Region returns the crash image of the named region as a fresh simulated
// region. Recovery runs on it; its fences may themselves be crash points (a
// crash during recovery). An unknown name panics as in Run.Region.
func (img *Image) Region(name string) *persist.Region { return img.m.region(name).region }

// Point is where the crash happened (for a crash during recovery: where
// in the recovery).
func (img *Image) Point() Point {
	if img.point.Site == "" && img.stack != nil {
		img.point.Site, img.point.Func, img.point.Caller = img.stack.site()
	}
	return img.point
}

// Index is the image's number at its crash point.
func (img *Image) Index() int { return img.index }

// InRecovery reports whether this image is of a crash during a recovery.
func (img *Image) InRecovery() bool { return img.inRecovery }

// Word is an 8-byte word of a region.
type Word struct {
	Region string
	Off    int    // byte offset
	Media  uint64 // durable value before the crash
	Value  uint64 // value found in the crash image (or the live value)
	More   int    // on the last word of a truncated list: how many more
}

func (w Word) String() string {
	return fmt.Sprintf("%s+%#x: %#016x -> %#016x", w.Region, w.Off, w.Media, w.Value)
}

func describeWords(ws []Word) string {
	parts := make([]string, 0, len(ws))
	more := 0
	for _, w := range ws {
		parts = append(parts, w.String())
		more += w.More
	}
	s := strings.Join(parts, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// Failure is a crash image whose check failed (or a durability point that
// found data not durable).
type Failure struct {
	Point      Point
	Image      int  // image number at Point
	Images     int  // images at Point
	Exhaustive bool // all images of Point were enumerated
	Seed       uint64
	// Survived are the words that reached media beyond the durable state
	// in this image, shrunk to the fewest that still fail.
	Survived []Word
	// A crash during recovery: where in the recovery, the image there and
	// its surviving words.
	Recovery         *Point
	RecoveryImage    int
	RecoverySurvived []Word
	// NotDurable lists words written but not durable at a durability point.
	NotDurable []Word
	Err        error // what the check returned
	// Replay is the command line that replays exactly this image (Test
	// only): the check runs once, on the image as reported.
	Replay string
	// ReplayKey is the ReplayEnv value that replays this image (with
	// Check: set the variable and call Check again).
	ReplayKey string
}

// Summary is a one-line description.
func (f *Failure) Summary() string {
	if f.NotDurable != nil {
		return fmt.Sprintf("not durable at %s: %d words", f.Point, len(f.NotDurable))
	}
	s := fmt.Sprintf("%s, image %d/%d, %d words survived", f.Point, f.Image, f.Images, len(f.Survived))
	if f.Recovery != nil {
		s += fmt.Sprintf("; crash during recovery at %s, image %d", f.Recovery, f.RecoveryImage)
	}
	return s + ": " + f.Err.Error()
}

func (f *Failure) Error() string {
	var b strings.Builder
	if f.NotDurable != nil {
		fmt.Fprintf(&b, "crash: at %s: %v\n", f.Point, f.Err)
		if f.Replay != "" {
			fmt.Fprintf(&b, "  rerun: %s\n", f.Replay)
		}
		return b.String()
	}
	mode := "sampled"
	if f.Exhaustive {
		mode = "exhaustive"
	}
	fmt.Fprintf(&b, "crash: check failed after a crash at %s\n", f.Point)
	fmt.Fprintf(&b, "  image %d of %d (%s), seed %d\n", f.Image, f.Images, mode, f.Seed)
	writeWords(&b, "survived (reached media beyond the last fence)", f.Survived)
	if f.Recovery != nil {
		fmt.Fprintf(&b, "  then a crash during recovery at %s, image %d\n", f.Recovery, f.RecoveryImage)
		writeWords(&b, "survived in recovery", f.RecoverySurvived)
	}
	fmt.Fprintf(&b, "  check: %v\n", f.Err)
	if f.Replay != "" {
		fmt.Fprintf(&b, "  replay: %s\n", f.Replay)
	}
	return b.String()
}

func writeWords(b *strings.Builder, title string, ws []Word) {
	fmt.Fprintf(b, "  %s: %d words\n", title, len(ws))
	for i, w := range ws {
		if i == 16 {
			fmt.Fprintf(b, "    ... %d more\n", len(ws)-16)
			break
		}
		fmt.Fprintf(b, "    %s\n", w)
	}
}

// Finding kinds: performance and hygiene, reported, never failed.
const (
	KindRedundantFlush   = "redundant flush"    // a flush of lines with nothing new to write back
	KindRedundantFence   = "redundant fence"    // a fence with nothing flushed since the last one
	KindUnflushedAtClose = "unflushed at close" // stores not durable when a region was closed
)

// Finding counts one kind of finding at one call site.
type Finding struct {
	Kind   string
	Site   string
	Func   string
	Caller string // as Point.Caller: the first caller outside braid's packages
	Count  int
	Detail string // of the first occurrence
}

// Report is the outcome of a crash test.
type Report struct {
	Fences         int // fences the workload issued
	Points         int // crash points tested
	Images         int // crash images checked
	RecoveryPoints int // crash points inside recoveries
	RecoveryImages int // images of crashes inside recoveries
	Elapsed        time.Duration
	Failures       []*Failure
	Findings       []Finding
	// Replayed is the ReplayEnv value this run replayed ("" for a full
	// run).
	Replayed string
}

// Failed reports whether any failure was found.
func (r *Report) Failed() bool { return len(r.Failures) > 0 }

func (r *Report) String() string {
	var b strings.Builder
	rate := 0.0
	if r.Elapsed > 0 {
		rate = float64(r.Images+r.RecoveryImages) / r.Elapsed.Seconds()
	}
	fmt.Fprintf(&b, "crash: %d fences, %d crash points, %d images, %d recovery crash points, %d recovery images in %v (%.0f images/s), %d failures",
		r.Fences, r.Points, r.Images, r.RecoveryPoints, r.RecoveryImages, r.Elapsed.Round(time.Millisecond), rate, len(r.Failures))
	if r.Replayed != "" {
		fmt.Fprintf(&b, " (replay of %s)", r.Replayed)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n  %s x%d at %s (%s)", f.Kind, f.Count, f.Site, f.Func)
		if f.Caller != "" {
			fmt.Fprintf(&b, ", called from %s", f.Caller)
		}
		fmt.Fprintf(&b, ": %s", f.Detail)
	}
	return b.String()
}

// replay is a parsed ReplayEnv.
type replay struct {
	seq, image, rseq, rimage int
	keep                     [][2]int // unit, candidate; nil: choose image by its number
	test                     string   // the Test it belongs to ("" for Check)
	call                     int
}

func parseReplay(s string) (*replay, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: %s=%q: %s (want seq=N image=I [keep=K:C,...] [rseq=R rimage=J] [test=NAME call=C])", ErrConfig, ReplayEnv, s, why)
	}
	r := &replay{image: -1, rimage: -1}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, bad(fmt.Sprintf("%q is not key=value", f))
		}
		switch k {
		case "test":
			r.test = v
			continue
		case "keep":
			r.keep = [][2]int{}
			if v == "" {
				continue
			}
			for _, kc := range strings.Split(v, ",") {
				a, b, ok := strings.Cut(kc, ":")
				u, err1 := strconv.Atoi(a)
				c, err2 := strconv.Atoi(b)
				if !ok || err1 != nil || err2 != nil || u < 0 || c < 1 {
					return nil, bad(fmt.Sprintf("keep entry %q: want unit:candidate", kc))
				}
				r.keep = append(r.keep, [2]int{u, c})
			}
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, bad(fmt.Sprintf("%s=%q is not a number", k, v))
		}
		switch k {
		case "seq":
			r.seq = n
		case "image":
			r.image = n
		case "rseq":
			r.rseq = n
		case "rimage":
			r.rimage = n
		case "call":
			r.call = n
		default:
			return nil, bad(fmt.Sprintf("unknown key %q", k))
		}
	}
	if r.seq == 0 {
		return nil, bad("seq=N is missing")
	}
	return r, nil
}

// replayKey is the ReplayEnv value of image i at crash point seq, with
// the units of choice that survived.
func replayKey(seq, image int, choice []int, rseq, rimage int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seq=%d image=%d keep=", seq, image)
	sep := ""
	for k, c := range choice {
		if c != 0 {
			fmt.Fprintf(&b, "%s%d:%d", sep, k, c)
			sep = ","
		}
	}
	if rseq > 0 {
		fmt.Fprintf(&b, " rseq=%d rimage=%d", rseq, rimage)
	}
	return b.String()
}

// apply sets choice to the replayed survivors, checking they fit plan.
func (r *replay) apply(plan *imagePlan, choice []int) error {
	clear(choice)
	for _, kc := range r.keep {
		if kc[0] >= len(plan.units) || kc[1] >= plan.units[kc[0]].n {
			return fmt.Errorf("%s: keep=%d:%d does not exist at crash point seq=%d (%d units): the code or the test changed since the failure was printed", ReplayEnv, kc[0], kc[1], r.seq, len(plan.units))
		}
		choice[kc[0]] = kc[1]
	}
	return nil
}

// testScope is the Test call a crash test runs in.
type testScope struct {
	name string
	call int
	cmd  func(key string) string
}

// state is one crash test.
type state struct {
	cfg       Config
	check     func(*Image) error
	report    *Report
	events    int
	stopped   bool
	dry       bool
	sample    map[int]bool
	stacks    map[uint64]struct{}
	replay    *replay
	findings  map[[2]string]*Finding
	scope     *testScope
	inImage   int // > 0 while a check runs: its findings are not the workload's
	replayHit bool
	replayErr error
}

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
// summary and findings. See Check. Each failure carries a command line
// that replays exactly the image reported, once: it sets ReplayEnv, and
// names this test and this call of Test within it, so other crash tests
// run normally.
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
		if key == "" {
			return fmt.Sprintf("(cd %s && go test -count=1%s -run %s -v .)", shellQuote(dir), flags, shellQuote(run))
		}
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

// buildFlags are the go test flags that change what the simulator does
// (purego changes which copies stream), as this test binary was built.
func buildFlags() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var out string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "-race" && s.Value == "true":
			out += " -race"
		case s.Key == "-tags" && s.Value != "":
			out += " -tags " + shellQuote(s.Value)
		}
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Check runs the workload once on fresh simulated regions. At every
// selected crash point it builds crash images — each dirty or in-flight
// 8-byte word (or line, with LineAtomic) either reached media or did not —
// and calls check on each, synchronously, while the workload is paused:
// check may read what the workload has acknowledged so far. check recovers
// from the image's regions and returns an error when the result is wrong;
// a panic in check counts as an error. Some images also get crashes
// injected into their recovery (Config.RecoveryCrashes).
//
// The workload must start from scratch on every call: with SampleFences it
// runs twice. The returned error is a bad Config or a workload error;
// failures of check are in the Report.
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
	st := &state{cfg: c, check: check, report: &Report{}, stacks: map[uint64]struct{}{},
		findings: map[[2]string]*Finding{}, scope: scope}
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

	if c.SampleFences > 0 && st.replay == nil {
		st.dry = true
		m, err := st.newWorkloadMachine()
		if err != nil {
			return nil, err
		}
		err = runWorkload(m, workload)
		m.close()
		if err != nil {
			return nil, fmt.Errorf("crash: workload (counting run): %w", err)
		}
		st.sample = sampleFences(m.fences, c.SampleFences, c.Seed)
		st.dry, st.events = false, 0
	}

	m, err := st.newWorkloadMachine()
	if err != nil {
		return nil, err
	}
	werr := runWorkload(m, workload)
	if werr == nil {
		m.mu.Lock()
		m.crashPoint(Point{Kind: KindEnd}, 1)
		m.mu.Unlock()
	}
	rep := st.report
	rep.Fences = m.fences
	if st.replayErr != nil && werr == nil {
		werr = st.replayErr
	}
	if st.replay != nil && !st.replayHit && werr == nil {
		werr = fmt.Errorf("%s: crash point seq=%d image=%d was not reached (the run had %d events): the code or the test changed since the failure was printed", ReplayEnv, st.replay.seq, st.replay.image, st.events)
	}
	rep.Elapsed = time.Since(start)
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
	m.close()
	if werr != nil {
		return rep, fmt.Errorf("crash: workload: %w", werr)
	}
	return rep, nil
}

func (st *state) newWorkloadMachine() (*machine, error) {
	m := newMachine(st, 0, true)
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
		s.store.close()
		if s.track != nil {
			s.track.close()
			s.track = nil
		}
	}
}

func runWorkload(m *machine, workload func(*Run) error) (err error) {
	defer func() {
		switch p := recover().(type) {
		case nil:
		case *regionError:
			err = p
		default:
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return workload(&Run{m: m})
}

func sampleFences(total, n int, seed uint64) map[int]bool {
	s := map[int]bool{}
	if total == 0 {
		return s
	}
	if n >= total {
		for i := 1; i <= total; i++ {
			s[i] = true
		}
		return s
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for _, i := range rng.Perm(total)[:n] {
		s[i+1] = true
	}
	return s
}

// errNested carries a failure found by a crash during recovery up to the
// image it happened in.
type errNested struct{ f *Failure }

func (e *errNested) Error() string { return e.f.Err.Error() }

// checkPoint checks the crash images of one crash point of machine m.
func (st *state) checkPoint(m *machine, pt Point) {
	pool, units := m.collectUnits(nil, nil)
	maxImages := st.cfg.MaxImages
	if m.depth > 0 {
		maxImages = max(8, maxImages/4)
		st.report.RecoveryPoints++
	} else {
		st.report.Points++
	}
	plan := newPlan(units, pool, maxImages, st.cfg.Seed, pt.Seq)
	choice := make([]int, len(units))
	for i := 0; i < plan.count; i++ {
		exact := false // the replay of a reported (shrunk) image
		if st.replay != nil {
			want := st.replay.image
			if m.depth > 0 {
				want = st.replay.rimage
			}
			if want >= 0 && i != want {
				continue
			}
		}
		plan.choose(i, choice)
		nested := m.depth == 0 && st.cfg.RecoveryCrashes > 0 && nestedImage(i, plan.count, st.cfg.RecoveryCrashes)
		if st.replay != nil && m.depth == 0 {
			st.replayHit = true
			nested = st.replay.rseq > 0
			if st.replay.keep != nil {
				if err := st.replay.apply(plan, choice); err != nil {
					st.replayErr, st.stopped = err, true
					return
				}
				exact = true
			}
		}
		err := st.runImage(m, pt, plan, i, choice, nested)
		if err == nil {
			continue
		}
		if pt.Site == "" {
			pt.Site, pt.Func, pt.Caller = m.stack.site()
		}
		if m.depth > 0 {
			// Report to the recovery's image; stop crashing this recovery.
			m.nestedBudget = 0
			m.nestedErr = &Failure{Recovery: &pt, RecoveryImage: i, RecoverySurvived: survived(plan, choice), Err: err}
			return
		}
		f := &Failure{Point: pt, Image: i, Images: plan.count, Exhaustive: plan.exhaustive, Seed: st.cfg.Seed, Err: err}
		var ne *errNested
		if errors.As(err, &ne) {
			// Not shrunk: the crash inside the recovery depends on
			// what the recovery found.
			f.Recovery, f.RecoveryImage, f.RecoverySurvived, f.Err = ne.f.Recovery, ne.f.RecoveryImage, ne.f.RecoverySurvived, ne.f.Err
		} else if !exact {
			choice = st.shrink(m, pt, plan, i, choice)
		}
		f.Survived = survived(plan, choice)
		rseq := 0
		if f.Recovery != nil {
			rseq = f.Recovery.Seq
		}
		f.ReplayKey = replayKey(pt.Seq, i, choice, rseq, f.RecoveryImage)
		if st.scope != nil {
			f.Replay = st.scope.cmd(f.ReplayKey)
		}
		st.fail(f)
		return
	}
}

// nestedImage spreads the images that get crashes during recovery evenly
// over the images of a point.
func nestedImage(i, count, n int) bool {
	if count <= n {
		return true
	}
	step := count / n
	return i%step == min(1, step-1) && i/step < n
}

// shrink greedily resets surviving units to their media value while the
// check still fails, pass after pass until no unit can go: every unit
// left is needed for the failure.
func (st *state) shrink(m *machine, pt Point, plan *imagePlan, i int, choice []int) []int {
	c := append([]int(nil), choice...)
	if st.cfg.NoShrink {
		return c
	}
	budget := 4096
	for changed := true; changed && budget > 0; {
		changed = false
		for k := range c {
			if c[k] == 0 || budget == 0 {
				continue
			}
			budget--
			old := c[k]
			c[k] = 0
			if st.runImage(m, pt, plan, i, c, false) == nil {
				c[k] = old
			} else {
				changed = true
			}
		}
	}
	return c
}

func survived(plan *imagePlan, choice []int) []Word {
	var ws []Word
	for k, u := range plan.units {
		if choice[k] == 0 {
			continue
		}
		old, cur := u.cand(plan.pool, 0), u.cand(plan.pool, choice[k])
		for x := range cur {
			if cur[x] != old[x] {
				ws = append(ws, Word{Region: u.reg.spec.Name, Off: 8 * (u.word + x), Media: old[x], Value: cur[x]})
			}
		}
	}
	return ws
}

// runImage materializes image i (choice) of machine m's crash point as
// fresh regions and runs the check on them.
func (st *state) runImage(m *machine, pt Point, plan *imagePlan, i int, choice []int, nested bool) error {
	im := newMachine(st, m.depth+1, nested)
	bufs := make([][]byte, len(m.regions))
	defer func() {
		for k, s := range m.regions {
			if bufs[k] != nil {
				s.store.put(bufs[k])
			}
		}
		im.close()
	}()
	for k, s := range m.regions {
		buf, err := s.store.get()
		if err != nil {
			return fmt.Errorf("crash: materialize image: %w", err)
		}
		bufs[k] = buf
	}
	bw := make([][]uint64, len(bufs))
	for k := range bufs {
		bw[k] = words(bufs[k])
	}
	for k, u := range plan.units {
		if choice[k] != 0 {
			copy(bw[u.reg.idx][u.word:u.word+u.nw], u.cand(plan.pool, choice[k]))
		}
	}
	for k, s := range m.regions {
		if !nested {
			if _, err := im.addRegion(s.spec, bufs[k], nil, nopStore{}); err != nil {
				return err
			}
			continue
		}
		// The image is crashed again: its media is another image of
		// the same crash, and what it keeps beyond s's media is told
		// to the overlay.
		media, err := s.store.get()
		if err != nil {
			return fmt.Errorf("crash: materialize image: %w", err)
		}
		ov := &overlayStore{base: s.store, media: media}
		mw := words(media)
		for j, u := range plan.units {
			if u.reg == s && choice[j] != 0 {
				for w := u.word; w < u.word+u.nw; w++ {
					mw[w] = bw[k][w]
					ov.wrote(w)
				}
			}
		}
		r, err := im.addRegion(s.spec, bufs[k], media, ov)
		if err != nil {
			ov.close()
			return err
		}
		r.overlay = ov
	}
	if nested {
		im.nestedBudget = 1
	}
	img := &Image{m: im, point: pt, stack: &m.stack, index: i, inRecovery: m.depth > 0}
	if m.depth == 0 {
		st.report.Images++
	} else {
		st.report.RecoveryImages++
	}
	st.inImage++
	err := callCheck(st.check, img)
	st.inImage--
	if err == nil && im.nestedErr != nil {
		return &errNested{f: im.nestedErr}
	}
	return err
}

func callCheck(check func(*Image) error, img *Image) (err error) {
	defer func() {
		switch p := recover().(type) {
		case nil:
		case *regionError:
			err = p
		default:
			err = fmt.Errorf("check panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return check(img)
}
