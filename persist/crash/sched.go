package crash

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The scheduler: the goroutines a workload starts with Run.Go (threads)
// run one at a time, and change turns only at persist operations (stores
// through persist.Store64, loads through persist.Load64, flushes,
// streaming stores, fences) and at the harness's own points (Run.Go,
// Run.Yield, Run.Boundary, Run.Durable, Run.Crash). At each such point
// the schedule — seeded — picks the thread that runs next, so the same
// seed and schedule number give the same interleaving at any GOMAXPROCS.
//
// A thread that blocks on another through Go's synchronization (a
// sync.Mutex held by a thread waiting for its turn, a channel) is noticed
// by a watchdog that reads the goroutine's state from the runtime's stack
// dump, and the turn passes on; a thread so unblocked is waited for at
// the next turn change until it waits for its turn or blocks again. What
// the watchdog cannot make reproducible: a thread that waits for a
// goroutine the harness does not schedule (one a structure started itself).

type threadState uint8

const (
	tReady   threadState = iota // waiting for its turn
	tRunning                    // has the turn
	tBlocked                    // blocked in Go's synchronization (seen by the watchdog)
	tWaiting                    // thread 0 in Run.Wait or at the end of the workload
	tDone
)

// thread is a goroutine the harness schedules: thread 0 is the
// workload's, the others were started with Run.Go.
type thread struct {
	id   int
	goid uint64
	wake chan struct{}
	st   threadState
	prio int // PCT
}

// Schedule policies.
const (
	policyRandom   = iota // a seeded random ready thread at every point
	policyPCT             // the ready thread of highest priority; a few seeded priority changes
	policyPCTEarly        // PCT whose changes come at random decisions (1 in 8), early
)

type sched struct {
	m        *machine
	mu       sync.Mutex
	threads  []*thread
	byGoid   map[uint64]*thread
	cur      *thread // the thread whose turn it is; nil while every thread is blocked
	policy   int
	depth    int          // PCT: priority changes
	changes  map[int]bool // PCT: the steps where the running thread's priority drops
	low      int          // PCT: the next low priority
	rng      *rand.Rand
	steps    int // turn decisions so far
	switches int
	blocked  int // turns passed on by the watchdog
	live     int // threads started and not done (thread 0 excepted)

	on        atomic.Bool   // threads were started
	curID     atomic.Int32  // cur's id, read under the machine's lock (lock order: s.mu, then m.mu)
	progress  atomic.Uint64 // points reached, for the watchdog
	busy      atomic.Int32  // > 0 while the thread with the turn waits inside the harness
	mixed     atomic.Bool   // a thread unblocked ran beside the one with the turn (conc.go)
	nblocked  atomic.Int32  // threads in tBlocked
	stop      chan struct{}
	wdone     chan struct{}   // closed when the watchdog has returned
	unmanaged map[uint64]bool // goroutines not scheduled that reached a point
	errs      []error
}

// schedulePolicy is the policy of schedule k, in turn: random; PCT with
// 1, 2 or 3 priority changes spread evenly over the decisions schedule 0
// made; PCT whose running thread drops with probability 1/8 at each
// decision, up to 1, 2 or 3 times (changes early in the run).
func schedulePolicy(k int) (policy, depth int) {
	switch k % 3 {
	case 0:
		return policyRandom, 0
	case 1:
		return policyPCT, 1 + (k/3)%3
	}
	return policyPCTEarly, 1 + (k/3)%3
}

func schedName(k int) string {
	p, d := schedulePolicy(k)
	switch p {
	case policyRandom:
		return fmt.Sprintf("schedule %d (random)", k)
	case policyPCT:
		return fmt.Sprintf("schedule %d (PCT, %d priority changes)", k, d)
	}
	return fmt.Sprintf("schedule %d (PCT, up to %d early priority changes)", k, d)
}

// newSched is the scheduler of schedule k; est is the number of
// scheduling decisions schedule 0 made (PCT spreads its priority changes
// over them).
func newSched(m *machine, seed uint64, k, est int) *sched {
	s := &sched{m: m, byGoid: map[uint64]*thread{}, unmanaged: map[uint64]bool{},
		rng: rand.New(rand.NewPCG(seed^0x5c4ed, uint64(k)+1))}
	s.policy, s.depth = schedulePolicy(k)
	if s.policy == policyPCT {
		s.changes = map[int]bool{}
		for range s.depth {
			s.changes[1+s.rng.IntN(max(est, 1))] = true
		}
	}
	return s
}

// active reports whether threads were started: only then do points
// change turns.
func (s *sched) active() bool { return s != nil && s.on.Load() }

// goid is the current goroutine's id, from the first line of its stack
// trace ("goroutine 17 [running]:").
func goid() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	b := bytes.TrimPrefix(buf[:n], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// start makes the calling goroutine thread 0 (the first Run.Go).
func (s *sched) start() {
	t0 := &thread{id: 0, goid: goid(), wake: make(chan struct{}, 1), st: tRunning}
	t0.prio = s.rng.IntN(1 << 20)
	s.threads = append(s.threads, t0)
	s.byGoid[t0.goid] = t0
	s.cur = t0
	s.low = -1
	s.stop, s.wdone = make(chan struct{}), make(chan struct{})
	s.on.Store(true)
	go s.watchdog()
}

// spawn starts fn as a new thread, ready, and returns it once its
// goroutine is known.
func (s *sched) spawn(fn func() error) {
	s.busy.Add(1) // waiting for the new goroutine is not blocking
	defer s.busy.Add(-1)
	s.mu.Lock()
	if len(s.threads) == 0 {
		s.start()
	}
	t := &thread{id: len(s.threads), wake: make(chan struct{}, 1), st: tReady, prio: s.rng.IntN(1 << 20)}
	s.threads = append(s.threads, t)
	s.live++
	s.mu.Unlock()
	known := make(chan struct{})
	go func() {
		id := goid()
		s.mu.Lock()
		t.goid = id
		s.byGoid[id] = t
		s.mu.Unlock()
		close(known)
		<-t.wake
		err := guarded(fmt.Sprintf("panic in goroutine %d (Run.Go)", t.id), fn)
		s.finish(t, err)
	}()
	<-known
}

// current is the thread of the calling goroutine, nil for one the
// harness does not schedule.
func (s *sched) current() *thread {
	id := goid()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.byGoid[id]
	if t == nil && !s.unmanaged[id] {
		s.unmanaged[id] = true
	}
	return t
}

// turnID is the thread whose operations the simulator sees now: the one
// with the turn (goroutines not scheduled count as it).
func (s *sched) turnID() int32 {
	if !s.active() {
		return 0
	}
	return s.curID.Load()
}

// point is a scheduling point reached by the calling goroutine: the
// schedule picks who runs next. It returns when the caller has the turn.
// Called without the machine's lock.
func (s *sched) point() { s.pointAt(false) }

// pointAt is point; with yield the caller cannot progress (a spin loop's
// Run.Yield): another ready thread runs first if there is one.
func (s *sched) pointAt(yield bool) {
	if !s.active() {
		return
	}
	s.progress.Add(1)
	t := s.current()
	if t == nil {
		return // not scheduled: runs as part of the thread with the turn
	}
	// Inside the harness (waiting for s.mu, settling): not blocked by the
	// workload, whatever the runtime says.
	s.busy.Add(1)
	s.mu.Lock()
	s.busy.Add(-1)
	if s.cur == nil {
		// Everyone was blocked; this one got free.
		if t.st == tBlocked {
			s.mixed.Store(true)
			s.nblocked.Add(-1)
		}
		s.cur, t.st = t, tRunning
		s.curID.Store(int32(t.id))
	}
	if s.cur != t {
		// Unblocked by the thread with the turn (or just started):
		// wait for the turn.
		if t.st == tBlocked {
			s.mixed.Store(true) // it ran beside the thread with the turn
			s.nblocked.Add(-1)
		}
		t.st = tReady
		s.mu.Unlock()
		<-t.wake
		return
	}
	s.settle()
	if yield && s.policy != policyRandom {
		// A spinning thread waits for others: it drops below them
		// (else the highest priority would spin forever).
		t.prio = s.low
		s.low--
	}
	next := s.pick(t)
	if yield && next == t {
		if other := s.pick(nil); other != nil {
			next = other
		}
	}
	if next == t {
		s.mu.Unlock()
		return
	}
	s.m.attributeTo(t.id) // the stores t made in its turn are t's
	t.st = tReady
	s.handoff(next)
	s.mu.Unlock()
	<-t.wake
}

// handoff gives the turn to t (s.mu held).
func (s *sched) handoff(t *thread) {
	s.cur = t
	if t == nil {
		return
	}
	s.switches++
	s.curID.Store(int32(t.id))
	t.st = tRunning
	t.wake <- struct{}{}
}

// pick chooses the next thread among the ready ones and self (when it
// can go on).
func (s *sched) pick(self *thread) *thread {
	var cand []*thread
	for _, t := range s.threads {
		if t == self && t.st == tRunning || t != self && t.st == tReady {
			cand = append(cand, t)
		}
	}
	if len(cand) == 0 {
		if t0 := s.threads[0]; t0.st == tWaiting && s.live == 0 {
			return t0
		}
		return nil
	}
	s.steps++
	if s.policy == policyRandom {
		return cand[s.rng.IntN(len(cand))]
	}
	// PCT: the highest priority runs; at a few seeded points the
	// running thread drops below every other.
	change := s.changes[s.steps]
	if s.policy == policyPCTEarly && s.depth > 0 && s.rng.IntN(8) == 0 {
		s.depth--
		change = true
	}
	if self != nil && self.st == tRunning && change {
		self.prio = s.low
		s.low--
	}
	best := cand[0]
	for _, t := range cand[1:] {
		if t.prio > best.prio {
			best = t
		}
	}
	return best
}

// finish ends thread t and passes the turn on.
func (s *sched) finish(t *thread, err error) {
	s.progress.Add(1)
	s.busy.Add(1)
	s.mu.Lock()
	s.busy.Add(-1)
	s.m.attributeTo(t.id)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("goroutine %d: %w", t.id, err))
	}
	if t.st == tBlocked {
		s.mixed.Store(true)
		s.nblocked.Add(-1)
	}
	t.st = tDone
	s.live--
	if s.cur == t || s.cur == nil {
		s.settle()
		s.handoff(s.pick(nil))
	}
	s.mu.Unlock()
}

// wait is Run.Wait: thread 0 waits until every other thread is done.
func (s *sched) wait() {
	if !s.active() {
		return
	}
	s.progress.Add(1)
	t := s.current()
	if t == nil || t.id != 0 {
		panic("crash: Run.Wait is for the workload's own goroutine")
	}
	s.busy.Add(1)
	s.mu.Lock()
	s.busy.Add(-1)
	if s.live == 0 {
		s.mu.Unlock()
		return
	}
	s.settle()
	s.m.attributeTo(0)
	t.st = tWaiting
	s.handoff(s.pick(nil))
	s.mu.Unlock()
	<-t.wake
}

// settle waits until no thread unblocked by Go's synchronization is
// running outside the schedule: each either waits for its turn, is done,
// or is blocked again (s.mu held; released while waiting).
func (s *sched) settle() {
	s.busy.Add(1)
	defer s.busy.Add(-1)
	for {
		var blocked []*thread
		for _, t := range s.threads {
			if t.st == tBlocked {
				blocked = append(blocked, t)
			}
		}
		if len(blocked) == 0 {
			return
		}
		states := goroutineStates()
		free := false
		for _, t := range blocked {
			if !states[t.goid].blocked() {
				free = true
			}
		}
		if free {
			s.mixed.Store(true)
		}
		if !free {
			return
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Microsecond)
		s.mu.Lock()
	}
}

// watchdog notices the thread with the turn blocked in Go's
// synchronization and passes the turn on. Its timing decides nothing:
// a thread counts as blocked only when the runtime says so and it has
// made no progress.
func (s *sched) watchdog() {
	defer close(s.wdone)
	last, still := uint64(0), 0
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(500 * time.Microsecond):
		}
		p := s.progress.Load()
		if p != last {
			last, still = p, 0
			continue
		}
		if still++; still < 2 {
			continue
		}
		s.mu.Lock()
		// A thread inside the simulator (a crash point's check) is not
		// blocked by the workload: the machine's lock tells.
		if t := s.cur; t != nil && t.st == tRunning && s.busy.Load() == 0 && s.m.mu.TryLock() {
			// Progress is counted before a point takes s.mu: a thread
			// waiting for s.mu (held here) has progressed.
			if s.progress.Load() == last && goroutineStates()[t.goid].blocked() && s.progress.Load() == last && s.busy.Load() == 0 {
				s.m.attributeLocked(t.id)
				t.st = tBlocked
				s.nblocked.Add(1)
				s.blocked++
				s.handoff(s.pick(nil))
			}
			s.m.mu.Unlock()
		}
		s.mu.Unlock()
	}
}

// close stops the watchdog and waits until it has returned, so that the
// counts it keeps (blocked, switches through its hand-offs) are read by
// the caller without a race.
func (s *sched) close() {
	if s != nil && s.stop != nil {
		close(s.stop)
		<-s.wdone
	}
}
