package crash

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/internal/simword"
)

// A machine is a set of simulated regions that share fences and crash
// together: the workload's machine (depth 0), the machine a crash image is
// recovered on (depth 1), and the machine of a crash during that recovery
// (depth 2).
type machine struct {
	run      *state
	depth    int
	mu       sync.Mutex
	regions  []*simRegion
	byName   map[string]*simRegion
	fences   int
	events   int
	tracking bool // false: an image nobody crashes again; flushes and fences are ignored

	// Crash testing of a recovery (depth 1 only): enabled while > 0, and
	// the first failure found in it.
	nestedBudget int
	nestedErr    *Failure

	stack stackAt // of the crash point being checked

	// The workload's last fence and operation label (depth 0): what a
	// crash at the end of the workload names.
	lastFence stackAt
	lastLabel string

	// Concurrent workloads (depth 0): the scheduler of Run.Go's threads
	// and the reads that may race with persistence (conc.go).
	sched *sched
	reads []pendingRead
	seq   uint32 // captures and reads so far
}

// simRegion is one simulated region: the memory the program sees (live),
// what a power failure would leave (media), and what is in flight between
// them (flushed or streamed but not yet fenced).
type simRegion struct {
	m        *machine
	spec     Spec
	idx      int
	live     []byte
	liveW    []uint64
	media    []byte
	mediaW   []uint64
	region   *persist.Region
	pend     []capture
	pendBits []uint64
	event    int32
	closed   bool
	store    imageStore
	overlay  *overlayStore // when media is an overlay: told of every media write
	track    dirtyTracker  // when set: the pages of live that may differ from media

	// The words stored atomically (persist.Store64, streaming stores),
	// with the last value each was so given: the simulator makes
	// persist.Store64's stores into the region itself (simword), under
	// the machine's lock.
	atomicW   map[int32]uint64
	stopWatch func()
	conc      *concState // once threads exist (conc.go)
}

// capture is one 8-byte word flushed or streamed and not yet fenced, with
// its value at that moment; event groups the words of one line write-back;
// atomic says the value was stored with one 8-byte store; th is the
// thread that flushed it, whose fence makes it durable.
type capture struct {
	word   int32
	event  int32
	val    uint64
	th     int32
	seq    uint32 // when it was taken (concurrent workloads: see pendingRead)
	atomic bool
}

// words views an 8-byte-aligned byte slice as native words.
func words(b []byte) []uint64 {
	if len(b) == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)&7 != 0 {
		panic("crash: region memory is not 8-byte aligned")
	}
	return unsafe.Slice((*uint64)(p), len(b)/8)
}

func newMachine(st *state, depth int, tracking bool) *machine {
	return &machine{run: st, depth: depth, tracking: tracking, byName: map[string]*simRegion{}}
}

// addRegion simulates a region over live, with media as its durable image
// (nil: a copy of live is made when tracking).
func (m *machine) addRegion(spec Spec, live, media []byte, store imageStore) (*simRegion, error) {
	s := &simRegion{m: m, spec: spec, idx: len(m.regions), live: live, liveW: words(live), store: store}
	if m.tracking {
		if media == nil {
			media = make([]byte, len(live))
			copy(media, live)
		}
		s.media, s.mediaW = media, words(media)
		s.pendBits = make([]uint64, (len(live)/8+63)/64)
		s.atomicW = map[int32]uint64{}
		s.stopWatch = simword.Register(live, s)
	}
	r, err := persist.NewSimulated(live, m.run.cfg.Mode, s, spec.Options)
	if err != nil {
		return nil, fmt.Errorf("crash: region %q: %w", spec.Name, err)
	}
	s.region = r
	m.regions = append(m.regions, s)
	m.byName[spec.Name] = s
	return s, nil
}

func (m *machine) region(name string) *simRegion {
	s, ok := m.byName[name]
	if !ok {
		e := &regionError{name: name}
		for _, r := range m.regions {
			e.names = append(e.names, r.spec.Name)
		}
		panic(e)
	}
	return s
}

// regionError is what Run.Region, Run.Reopen and Image.Region panic with
// on a name the Config does not have. Check recovers it and returns it as
// it is: one line, without the stack other panics get (the name says
// where the bug is).
type regionError struct {
	name  string
	names []string
}

func (e *regionError) Error() string {
	q := make([]string, len(e.names))
	for i, n := range e.names {
		q[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("no region %q (the Config's regions are %s)", e.name, strings.Join(q, ", "))
}

func (e *regionError) Unwrap() error { return ErrConfig }

func (s *simRegion) pending(w int) bool { return s.pendBits[w>>6]&(1<<(uint(w)&63)) != 0 }

// lastPending returns the newest value of word w captured by thread th.
func (s *simRegion) lastPending(w int, th int32) (uint64, bool) {
	for i := len(s.pend) - 1; i >= 0; i-- {
		if c := &s.pend[i]; int(c.word) == w && c.th == th {
			return c.val, true
		}
	}
	return 0, false
}

// captureWord records word w's live value as in flight for thread th; it
// reports whether that adds anything (a value not already on media or in
// flight last for th). streamed says a streaming store wrote it:
// atomically.
func (s *simRegion) captureWord(w int, ev int32, streamed bool, th int32) bool {
	v := loadWord(s.liveW, w)
	if streamed {
		s.storedAtomic(8*w, v)
	}
	last, ok := uint64(0), false
	if s.pending(w) {
		last, ok = s.lastPending(w, th)
	}
	if ok && last == v || !ok && v == s.mediaW[w] && !s.pending(w) {
		return false
	}
	s.m.seq++
	s.pend = append(s.pend, capture{word: int32(w), event: ev, val: v, th: th, seq: s.m.seq, atomic: streamed || s.storedAtomically(w, v)})
	s.pendBits[w>>6] |= 1 << (uint(w) & 63)
	return true
}

// storedAtomic notes that the word at byte offset off was given v with
// one 8-byte store.
func (s *simRegion) storedAtomic(off int, v uint64) {
	if off&7 != 0 {
		return // persist.Store64 refuses unaligned words; not ours
	}
	s.atomicW[int32(off/8)] = v
}

// storedAtomically reports whether word w holds v from an atomic store:
// the last one made to it stored v. (An ordinary store of the same value
// afterwards cannot be told apart; it changes nothing a crash could show.)
func (s *simRegion) storedAtomically(w int, v uint64) bool {
	a, ok := s.atomicW[int32(w)]
	return ok && a == v
}

// Flush implements persist.Domain: the lines of [off, off+n) are written
// back with their content now.
func (s *simRegion) Flush(off, n int) {
	m := s.m
	if !m.tracking {
		return
	}
	if m.depth == 0 {
		m.sched.point()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	th := m.sched.turnID()
	lo := off &^ 63
	hi := min((off+n+63)&^63, len(s.live))
	useful := false
	flushLine := func(line int) {
		s.event++
		for w := line / 8; w < line/8+8 && w < len(s.liveW); w++ {
			if s.captureWord(w, s.event, false, th) {
				useful = true
			}
		}
	}
	if hi-lo < bigFlush {
		for line := lo; line < hi; line += 64 {
			flushLine(line)
		}
	} else {
		// Only a word that differs from media or is in flight can add
		// anything: visit the lines holding one, in order.
		var lines []int
		s.dirtyPages(lo, hi, func(p, end int) {
			for w := p / 8; w < end/8; w++ {
				if loadWord(s.liveW, w) != s.mediaW[w] && (len(lines) == 0 || lines[len(lines)-1] != w&^7) {
					lines = append(lines, w&^7)
				}
			}
		})
		for _, c := range s.pend {
			if w := int(c.word); w >= lo/8 && w < hi/8 {
				lines = append(lines, w&^7)
			}
		}
		sort.Ints(lines)
		for _, l := range slicesCompact(lines) {
			flushLine(8 * l)
		}
	}
	if !useful {
		m.run.finding(KindRedundantFlush, 2, fmt.Sprintf("%s [%d, %d): nothing new to write back", s.spec.Name, off, off+n))
	}
}

// Stream implements persist.Domain: streaming stores wrote the words of
// [off, off+n).
func (s *simRegion) Stream(off, n int) {
	m := s.m
	if !m.tracking {
		return
	}
	if m.depth == 0 {
		m.sched.point()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	th := m.sched.turnID()
	line := -1
	for w := off / 8; w < (off+n)/8 && w < len(s.liveW); w++ {
		if w/8 != line {
			line = w / 8
			s.event++
		}
		s.captureWord(w, s.event, true, th)
	}
}

// Fence implements persist.Domain: a crash point, then every capture of
// every region of the machine reaches media.
func (s *simRegion) Fence() {
	m := s.m
	if !m.tracking {
		return
	}
	if m.depth == 0 {
		m.sched.point()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fences++
	if m.depth == 0 {
		m.lastFence.capture(2)
	}
	m.crashPoint(Point{Kind: KindFence, Fence: m.fences}, 2)
	m.applyFence(2, m.sched.turnID())
}

// applyFence makes what thread th flushed and streamed durable (as SFENCE
// does for its core); with eADR, every store so far.
func (m *machine) applyFence(skip int, th int32) {
	any := false
	if m.run.cfg.Mode == persist.ModeEADR {
		// Every store so far is durable. Pages equal to media are
		// skipped with one comparison (and stay untouched in a
		// copy-on-write media).
		for _, r := range m.regions {
			if r.syncMedia() {
				any = true
			}
			r.clearPending()
		}
		m.reads = m.reads[:0] // every value read is durable now
		if !any {
			m.run.finding(KindRedundantFence, skip+1, "nothing stored since the previous fence")
		}
		return
	}
	for _, r := range m.regions {
		if r.conc != nil {
			if r.fenceThread(th) {
				any = true
			}
			continue
		}
		if len(r.pend) > 0 {
			any = true
		}
		for _, c := range r.pend {
			r.mediaW[c.word] = c.val
			if r.overlay != nil {
				r.overlay.wrote(int(c.word))
			}
		}
		r.clearPending()
	}
	if !any {
		m.run.finding(KindRedundantFence, skip+1, "nothing flushed since the previous fence")
	}
}

// syncMedia makes media equal to live and reports whether anything
// changed.
func (s *simRegion) syncMedia() bool {
	changed := false
	s.dirtyPages(0, len(s.live), func(p, end int) {
		changed = true
		for w := p / 8; w < end/8; w++ {
			if loadWord(s.liveW, w) != s.mediaW[w] {
				s.mediaW[w] = loadWord(s.liveW, w)
				if s.overlay != nil {
					s.overlay.wrote(w)
				}
			}
		}
	})
	return changed
}

// bigFlush is the flush size from which Flush visits only the lines
// that hold something to write back (a variable for tests).
var bigFlush = 64 << 10

// dirtyPages calls fn, in ascending order, with every page of [from, to)
// where live differs from media (clipped to [from, to); from and to are
// multiples of 8). With a tracker only the pages the workload wrote are
// compared, else all of them, one comparison each.
func (s *simRegion) dirtyPages(from, to int, fn func(p, end int)) {
	scan := func(lo, hi int) {
		lo, hi = max(lo, from&^(pageSize-1)), min(hi, to)
		for p := lo; p < hi; p += pageSize {
			end := min(p+pageSize, len(s.live))
			if !s.equalPage(p, end) {
				fn(max(p, from), min(end, to))
			}
		}
	}
	if s.track != nil {
		listed := 0
		if err := s.track.written(func(lo, hi int) {
			listed += hi - lo
			scan(lo, hi)
		}); err == nil {
			if invariants.Enabled {
				s.checkTracker()
			}
			if 2*listed > len(s.live) {
				// The workload has written most pages, and a written
				// page stays listed: comparing them all is cheaper
				// than asking the kernel first.
				s.track.close()
				s.track = nil
			}
			return
		}
		// The kernel stopped telling: compare everything from now on.
		s.track.close()
		s.track = nil
	}
	scan(from, to)
}

// checkTracker verifies that no page the tracker left out differs.
func (s *simRegion) checkTracker() {
	listed := make([]bool, (len(s.live)+pageSize-1)/pageSize)
	if s.track.written(func(lo, hi int) {
		for p := lo; p < hi; p += pageSize {
			listed[p/pageSize] = true
		}
	}) != nil {
		return
	}
	for i, ok := range listed {
		p := i * pageSize
		end := min(p+pageSize, len(s.live))
		if !ok && !s.equalPage(p, end) {
			panic(fmt.Sprintf("crash: region %q: page at %d differs from media but was not listed as written", s.spec.Name, p))
		}
	}
}

func (s *simRegion) clearPending() {
	if invariants.Enabled {
		// Every capture has its pending bit, and no other bit is set.
		n := 0
		for _, b := range s.pendBits {
			n += bits.OnesCount64(b)
		}
		seen := map[int32]bool{}
		for _, c := range s.pend {
			if !s.pending(int(c.word)) {
				panic("crash: capture without its pending bit")
			}
			seen[c.word] = true
		}
		if n != len(seen) {
			panic(fmt.Sprintf("crash: %d pending bits for %d captured words", n, len(seen)))
		}
	}
	for _, c := range s.pend {
		s.pendBits[c.word>>6] = 0
	}
	s.pend = s.pend[:0]
}

// Close implements persist.Domain.
func (s *simRegion) Close() error {
	m := s.m
	if !m.tracking {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s.closed = true
	if m.depth == 0 {
		if dirty := s.dirtyWords(8); len(dirty) > 0 {
			m.run.finding(KindUnflushedAtClose, 2, fmt.Sprintf("%s: %s", s.spec.Name, describeWords(dirty)))
		}
	}
	m.crashPoint(Point{Kind: KindClose, Label: s.spec.Name}, 2)
	return nil
}

// dirtyWords lists up to max words that differ from media or are in
// flight; the last one's More counts the words left out.
func (s *simRegion) dirtyWords(max int) []Word {
	var ws []int
	s.dirtyPages(0, len(s.live), func(p, end int) {
		for w := p / 8; w < end/8; w++ {
			if loadWord(s.liveW, w) != s.mediaW[w] {
				ws = append(ws, w)
			}
		}
	})
	for _, c := range s.pend {
		if loadWord(s.liveW, int(c.word)) == s.mediaW[c.word] {
			ws = append(ws, int(c.word)) // in flight, on a clean page
		}
	}
	sort.Ints(ws)
	ws = slicesCompact(ws)
	var out []Word
	for _, w := range ws[:min(max, len(ws))] {
		out = append(out, Word{Region: s.spec.Name, Off: 8 * w, Media: s.mediaW[w], Value: loadWord(s.liveW, w)})
	}
	if len(ws) > len(out) && len(out) > 0 {
		out[len(out)-1].More = len(ws) - len(out)
	}
	return out
}
