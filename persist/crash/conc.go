package crash

import (
	"bytes"
	"fmt"
	"strings"
)

// Concurrent workloads: which thread wrote each word, and the reads of
// words another thread had not made durable (persistency races).
//
// Threads are the goroutines of the scheduler (sched.go). Ordinary stores
// are not seen one by one: at every change of turn the live memory is
// compared with a shadow of it, and the words that changed belong to the
// thread whose turn ends (only it ran). Store64 is seen as it happens.

// concState is a region's bookkeeping once threads exist.
type concState struct {
	owner  []int32  // per word: the thread that stored it last
	shadow []uint64 // live memory at the last change of turn
	site   map[int32]*stackAt
}

// pendingRead is a Load64 by one thread of a value another thread stored
// and had not made durable: a persistency race if the reader acknowledges
// (Run.Durable) before the value is durable.
type pendingRead struct {
	reader, writer int32
	reg            *simRegion
	word           int32
	val            uint64
	seq            uint32 // when it was read
	readAt         stackAt
	storedAt       *stackAt // where the writer stored it (Store64), or its next persist operation
}

// enableConc starts the bookkeeping (the first Run.Go): what is in the
// regions so far is thread 0's.
func (m *machine) enableConc() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.regions {
		if s.conc != nil || s.media == nil {
			continue
		}
		c := &concState{owner: make([]int32, len(s.liveW)), shadow: make([]uint64, len(s.liveW)), site: map[int32]*stackAt{}}
		copyWords(c.shadow, s.liveW)
		s.conc = c
	}
}

// attributeTo gives thread id the words stored since the last change of
// turn.
func (m *machine) attributeTo(id int) {
	m.mu.Lock()
	m.attributeLocked(id)
	m.mu.Unlock()
}

func (m *machine) attributeLocked(id int) {
	if m.sched != nil && (m.sched.mixed.Swap(false) || m.sched.nblocked.Load() > 0) {
		// A thread unblocked by Go's synchronization ran beside the one
		// with the turn since the last change of turn, or one counted
		// blocked may be running (a spinner whose lock was released):
		// what changed is nobody's to answer for at Run.Durable (crash
		// images still hold it).
		id = -1
	}
	var at *stackAt
	for _, s := range m.regions {
		c := s.conc
		if c == nil {
			continue
		}
		changed(s.liveW, c.shadow, func(w int) {
			if at == nil {
				at = &stackAt{}
				at.capture(3)
			}
			c.owner[w] = int32(id)
			c.site[int32(w)] = at
		})
	}
}

// changed calls fn with every word where live differs from shadow and
// updates shadow. The simulator reads memory other goroutines may be
// writing (a goroutine blocked or not scheduled): not a race of the
// program's, so the race detector is not told.
//
//go:norace
func changed(live, shadow []uint64, fn func(w int)) {
	for w := range live {
		if v := live[w]; v != shadow[w] {
			shadow[w] = v
			fn(w)
		}
	}
}

//go:norace
func copyWords(dst, src []uint64) { copy(dst, src) }

// Store64 implements simword.Owner: persist.Store64 into the region. The
// simulator stores and notes the word as stored atomically in one step,
// so no flush or crash point sees the new value before it is known to be
// whole. With threads it is a scheduling point.
func (s *simRegion) Store64(off int, p *uint64, v uint64) {
	m := s.m
	if m.depth == 0 {
		m.sched.point()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w := int32(off / 8)
	if c := s.conc; c != nil {
		id := m.sched.turnID()
		m.attributeLocked(int(id))
		at := &stackAt{}
		at.capture(4)
		c.owner[w], c.site[w] = id, at
		c.shadow[w] = v
	}
	*p = v
	if s.atomicW != nil {
		s.atomicW[w] = v
	}
}

// Load64 implements simword.Owner: persist.Load64 from the region. A
// thread that reads a value another thread stored and has not made
// durable is noted: it must not acknowledge what it read before the
// value is durable (Run.Durable checks).
func (s *simRegion) Load64(off int, p *uint64) uint64 {
	m := s.m
	if m.depth == 0 {
		m.sched.point()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v := *p
	c := s.conc
	if c == nil {
		return v
	}
	id := m.sched.turnID()
	m.attributeLocked(int(id))
	w := int32(off / 8)
	if c.owner[w] != id && s.mediaW[w] != v {
		m.seq++
		r := pendingRead{reader: id, writer: c.owner[w], reg: s, word: w, val: v, seq: m.seq, storedAt: c.site[w]}
		r.readAt.capture(4)
		m.reads = append(m.reads, r)
	}
	return v
}

// resolved drops the pending reads of word w of s that capture c, now
// durable, answers: the value read, or one captured after the read (the
// word moved on durably: what was read was overwritten, not lost).
func (m *machine) resolved(s *simRegion, c capture) {
	keep := m.reads[:0]
	for _, r := range m.reads {
		if r.reg != s || r.word != c.word || c.val != r.val && c.seq < r.seq {
			keep = append(keep, r)
		}
	}
	m.reads = keep
}

// racesOf returns thread id's reads of values still not durable.
func (m *machine) racesOf(id int32) []pendingRead {
	var out []pendingRead
	for _, r := range m.reads {
		if r.reader == id {
			out = append(out, r)
		}
	}
	return out
}

// dropReads forgets thread id's pending reads (reported).
func (m *machine) dropReads(id int32) {
	keep := m.reads[:0]
	for _, r := range m.reads {
		if r.reader != id {
			keep = append(keep, r)
		}
	}
	m.reads = keep
}

// describeRace is a persistency race as a data-race report names it:
// both accesses, both goroutines, both call sites.
func describeRace(label string, races []pendingRead) string {
	var b strings.Builder
	r := races[0]
	fmt.Fprintf(&b, "persistency race: goroutine %d acknowledged (Durable %q) a value it read that goroutine %d stored and had not made durable\n", r.reader, label, r.writer)
	site, fn, caller := r.readAt.site()
	fmt.Fprintf(&b, "    read %s+%#x = %#x by goroutine %d at %s (%s)%s\n", r.reg.spec.Name, 8*int(r.word), r.val, r.reader, site, fn, callerSuffix(caller))
	if r.storedAt != nil {
		site, fn, caller = r.storedAt.site()
		fmt.Fprintf(&b, "    stored by goroutine %d at %s (%s)%s, not durable (media %#x)", r.writer, site, fn, callerSuffix(caller), r.reg.mediaW[r.word])
	} else {
		fmt.Fprintf(&b, "    stored by goroutine %d, not durable (media %#x)", r.writer, r.reg.mediaW[r.word])
	}
	if len(races) > 1 {
		fmt.Fprintf(&b, "\n    and %d more such reads", len(races)-1)
	}
	return b.String()
}

func callerSuffix(caller string) string {
	if caller == "" {
		return ""
	}
	return ", called from " + caller
}

// ownDirty lists up to max words thread id wrote that are not durable
// (all dirty words before threads exist).
func (s *simRegion) ownDirty(id int32, max int) []Word {
	if s.conc == nil {
		return s.dirtyWords(max)
	}
	all := s.dirtyWords(len(s.liveW))
	var out []Word
	more := 0
	for _, w := range all {
		if s.conc.owner[w.Off/8] != id {
			continue
		}
		if len(out) == max {
			more++
			continue
		}
		out = append(out, w)
	}
	if more > 0 {
		out[len(out)-1].More = more
	}
	return out
}

// fenceThread makes thread th's captures durable, in order; a capture of
// another thread older than one of th's to the same word is dropped (the
// line's later value reached media: the cache does not write an older
// one back after it), and so is one of the value now on media. It reports whether th had anything in flight.
func (s *simRegion) fenceThread(th int32) bool {
	last := map[int32]int{}
	for i, c := range s.pend {
		if c.th == th {
			last[c.word] = i
		}
	}
	newest := map[int32]uint64{} // the value th's fence leaves on media
	for _, c := range s.pend {
		if c.th == th {
			newest[c.word] = c.val
		}
	}
	if len(last) == 0 {
		return false
	}
	keep := make([]capture, 0, len(s.pend)-len(last))
	for i, c := range s.pend {
		if c.th == th {
			s.mediaW[c.word] = c.val
			if s.overlay != nil {
				s.overlay.wrote(int(c.word))
			}
			if len(s.m.reads) > 0 {
				s.m.resolved(s, c)
			}
			continue
		}
		if j, ok := last[c.word]; ok && (i < j || c.val == newest[c.word]) {
			continue // older than th's, or the value now on media
		}
		keep = append(keep, c)
	}
	for _, c := range s.pend {
		s.pendBits[c.word>>6] &^= 1 << (uint(c.word) & 63)
	}
	s.pend = append(s.pend[:0], keep...)
	for _, c := range s.pend {
		s.pendBits[c.word>>6] |= 1 << (uint(c.word) & 63)
	}
	return true
}

// loadWord reads word w of live memory, which a goroutine blocked or not
// scheduled may be writing (see changed).
//
//go:norace
func loadWord(live []uint64, w int) uint64 { return live[w] }

// equalPage reports whether [p, end) of live memory equals media: with
// the race detector word by word, uninstrumented (see changed), else with
// bytes.Equal.
func (s *simRegion) equalPage(p, end int) bool {
	if raceEnabled {
		return equalMem(s.liveW[p/8:end/8], s.mediaW[p/8:end/8])
	}
	return bytes.Equal(s.live[p:end], s.media[p:end])
}

//go:norace
func equalMem(live, media []uint64) bool {
	for i, v := range live {
		if v != media[i] {
			return false
		}
	}
	return true
}

// loadWords copies words of live memory (see changed).
//
//go:norace
func loadWords(live []uint64) []uint64 {
	out := make([]uint64, len(live))
	copy(out, live)
	return out
}
