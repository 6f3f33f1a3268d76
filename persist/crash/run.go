package crash

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

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
// has AtBoundaries. The label names the operation in a failure at the
// end of the workload.
func (w *Run) Boundary(label string) {
	m := w.m
	m.sched.point()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastLabel = label
	m.crashPoint(Point{Kind: KindBoundary, Label: label}, 2)
}

// Durable marks a durability point: everything the calling goroutine
// wrote so far must be durable now (an operation has returned to its
// caller, say), and every value it read with persist.Load64 that another
// goroutine (Run.Go) stored must be durable too — else it acknowledged
// what a crash can take back (a persistency race). A store not yet
// flushed and fenced is reported as a failure, a race with both call
// sites, each with a replay key like any other. Words other goroutines
// (Run.Go) wrote are theirs to make durable. It is also an operation
// boundary.
func (w *Run) Durable(label string) {
	m := w.m
	m.sched.point()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastLabel = label
	st := m.run
	seq := st.events + 1
	replayed := st.replay != nil && st.replay.durable && st.replay.seq == seq
	if !st.dry && !st.stopped && (st.replay == nil || replayed) {
		if replayed {
			st.replayHit = true
		}
		th := m.sched.turnID()
		if m.sched.active() {
			m.attributeLocked(int(th))
		}
		var dirty []Word
		for _, s := range m.regions {
			dirty = append(dirty, s.ownDirty(th, 8)...)
		}
		var err error
		if races := m.racesOf(th); len(races) > 0 {
			err = errors.New(describeRace(label, races))
			m.dropReads(th)
		} else if len(dirty) > 0 {
			err = fmt.Errorf("written but not durable at durability point %q: %s", label, describeWords(dirty))
		}
		if err != nil {
			site, fn, caller, _ := callSite(2)
			f := &Failure{
				Point:      Point{Seq: seq, Kind: KindDurable, Label: label, Fence: m.fences, Site: site, Func: fn, Caller: caller},
				NotDurable: dirty,
				Err:        err,
				ReplayKey:  st.key(fmt.Sprintf("seq=%d durable", seq)),
				Schedule:   st.schedule(),
				Seed:       st.cfg.Seed,
			}
			if f.NotDurable == nil {
				f.NotDurable = []Word{}
			}
			if st.scope != nil {
				f.Replay = st.scope.cmd(f.ReplayKey)
			}
			st.fail(f)
		}
	}
	m.crashPoint(Point{Kind: KindDurable, Label: label}, 2)
}

// Go starts fn as a goroutine the harness schedules (a thread): the
// workload's goroutines then run one at a time and change turns at
// persist operations (Store64, Load64, flushes, streaming stores, fences)
// and at Run's own calls, in an order the seed and the schedule number
// choose (Config.Schedules). Each thread's flushes are made durable only
// by its own fences. An error or panic of fn is the workload's error.
// The workload waits for its threads with Wait, or when it returns.
func (w *Run) Go(fn func() error) {
	m := w.m
	if m.sched == nil {
		panic("crash: Run.Go outside the workload")
	}
	if !m.sched.active() {
		m.enableConc()
	}
	m.sched.spawn(fn)
	m.sched.point()
}

// Yield is a scheduling point where the caller cannot progress by itself
// (a spin loop waiting for another thread): another ready thread runs
// first, if there is one.
func (w *Run) Yield() { w.m.sched.pointAt(true) }

// Wait waits until every thread started with Go is done. Only the
// workload's own goroutine waits.
func (w *Run) Wait() { w.m.sched.wait() }

// Crash is a crash point on demand: always tested.
func (w *Run) Crash(label string) {
	m := w.m
	m.sched.point()
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
