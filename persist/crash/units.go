package crash

import (
	"encoding/binary"
	"sort"
)

// unit is one thing that survives a crash or not: an 8-byte word, or a
// line in LineAtomic mode. Its candidates are the values it may hold after
// the crash, oldest (media) first, newest (live) last; torn values (a word
// with only some of its bytes new) sit before the value they tear.
type unit struct {
	reg   *simRegion
	word  int // first word
	nw    int // words per candidate: 1 or 8
	start int // first candidate in the pool
	n     int // number of candidates (>= 2)
}

func (u *unit) cand(pool []uint64, c int) []uint64 {
	return pool[u.start+c*u.nw : u.start+(c+1)*u.nw]
}

// unitSet is what can survive at one crash point: the units and their
// candidates (pool), and which candidates are torn values.
type unitSet struct {
	units []unit
	pool  []uint64
	torn  []bool // parallel to pool (word units only)
}

func (us *unitSet) isTorn(u *unit, c int) bool { return us.torn[u.start+c*u.nw] }

// add appends candidate ws to the last unit unless it equals the previous
// candidate, and reports whether it did.
func (us *unitSet) add(u *unit, ws []uint64, torn bool) bool {
	if u.n > 0 && equalWords(ws, us.pool[len(us.pool)-u.nw:]) {
		return false
	}
	us.pool = append(us.pool, ws...)
	for range ws {
		us.torn = append(us.torn, torn)
	}
	u.n++
	return true
}

// collectUnits builds the units of every region at this instant.
func (m *machine) collectUnits() *unitSet {
	us := &unitSet{}
	cfg := &m.run.cfg
	line := cfg.LineAtomic
	step := 1
	if line {
		step = 8
	}
	for _, s := range m.regions {
		// Captures of each word (or line) in program order.
		caps := append([]capture(nil), s.pend...)
		sort.SliceStable(caps, func(i, j int) bool { return caps[i].word/int32(step) < caps[j].word/int32(step) })
		ci := 0
		for _, w := range s.dirtyUnits(caps, step) {
			for ci < len(caps) && int(caps[ci].word) < w {
				ci++
			}
			var u unit
			if line {
				u, ci = s.lineUnit(us, w, caps, ci)
			} else {
				u, ci = s.wordUnit(us, w, caps, ci, cfg.Tear)
			}
			if u.n >= 2 {
				us.units = append(us.units, u)
			} else {
				us.pool, us.torn = us.pool[:u.start], us.torn[:u.start]
			}
		}
	}
	return us
}

// wordUnit is word w's unit: media, each value captured in flight, the
// live value, and before each of those that was not stored atomically the
// values it tears into. caps[ci:] are the captures from w on.
func (s *simRegion) wordUnit(us *unitSet, w int, caps []capture, ci int, tear Tear) (unit, int) {
	u := unit{reg: s, word: w, nw: 1, start: len(us.pool)}
	prev := s.mediaW[w]
	us.add(&u, []uint64{prev}, false)
	next := func(v uint64, atomic bool) {
		if v == prev {
			return
		}
		if !atomic && tear != TearOff {
			for _, t := range tearMixes(prev, v, tear) {
				if !s.isCandidate(us, &u, t) {
					us.add(&u, []uint64{t}, true)
				}
			}
		}
		us.add(&u, []uint64{v}, false)
		prev = v
	}
	for ci < len(caps) && int(caps[ci].word) == w {
		next(caps[ci].val, caps[ci].atomic)
		ci++
	}
	next(loadWord(s.liveW, w), s.storedAtomically(w, loadWord(s.liveW, w)))
	return u, ci
}

func (s *simRegion) isCandidate(us *unitSet, u *unit, v uint64) bool {
	for c := 0; c < u.n; c++ {
		if us.pool[u.start+c] == v {
			return true
		}
	}
	return false
}

// lineUnit is line w/8's unit: media, then one candidate per write-back
// event (each applied on top of the previous one), then live.
func (s *simRegion) lineUnit(us *unitSet, w int, caps []capture, ci int) (unit, int) {
	end := min(w+8, len(s.liveW))
	u := unit{reg: s, word: w, nw: end - w, start: len(us.pool)}
	us.add(&u, s.mediaW[w:end], false)
	for ci < len(caps) && int(caps[ci].word) < end {
		ev := caps[ci].event
		cur := append([]uint64(nil), us.pool[len(us.pool)-u.nw:]...)
		for ci < len(caps) && int(caps[ci].word) < end && caps[ci].event == ev {
			cur[int(caps[ci].word)-w] = caps[ci].val
			ci++
		}
		us.add(&u, cur, false)
	}
	us.add(&u, loadWords(s.liveW[w:end]), false)
	return u, ci
}

// byteShift[i] is the shift of memory byte i inside a native word.
var byteShift = func() (s [8]uint) {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 0x0706050403020100)
	for shift := uint(0); shift < 64; shift += 8 {
		s[b[shift/8]] = shift
	}
	return s
}()

// tearMixes lists the torn values between a word's value a and the value
// b stored over it with ordinary stores, in address order: with Tear4 the
// two mixes of 4-byte halves (when both halves change), with Tear1 also
// every state of a byte loop running up or down over the changed bytes.
func tearMixes(a, b uint64, tear Tear) []uint64 {
	var out []uint64
	push := func(m uint64) {
		v := a&^m | b&m
		if v == a || v == b {
			return
		}
		for _, x := range out {
			if x == v {
				return
			}
		}
		out = append(out, v)
	}
	var lo uint64
	for i := 0; i < 4; i++ {
		lo |= 0xff << byteShift[i]
	}
	if tear == Tear1 {
		var changed []uint64 // masks of the changed bytes, in address order
		for i := 0; i < 8; i++ {
			m := uint64(0xff) << byteShift[i]
			if (a^b)&m != 0 {
				changed = append(changed, m)
			}
		}
		var up, down uint64
		for k := 0; k+1 < len(changed); k++ {
			up |= changed[k]
			push(up)
		}
		for k := len(changed) - 1; k > 0; k-- {
			down |= changed[k]
			push(down)
		}
	}
	push(lo)
	push(^lo)
	return out
}

// dirtyUnits lists, in order, the first word of every unit (word, or line
// when step is 8) that differs from media or has captures in flight. Pages
// equal to media are skipped with one comparison each, or not looked at
// when the tracker says the workload never wrote them.
func (s *simRegion) dirtyUnits(caps []capture, step int) []int {
	var out []int
	last := -1
	add := func(w int) {
		w -= w % step
		if w != last {
			out = append(out, w)
			last = w
		}
	}
	ci := 0
	flushCaps := func(upto int) {
		for ci < len(caps) && int(caps[ci].word) < upto {
			add(int(caps[ci].word))
			ci++
		}
	}
	s.dirtyPages(0, len(s.live), func(p, end int) {
		for w := p / 8; w < end/8; w++ {
			if loadWord(s.liveW, w) != s.mediaW[w] {
				flushCaps(w)
				add(w)
			}
		}
	})
	flushCaps(len(s.liveW))
	if len(out) > 1 && !sort.IntsAreSorted(out) {
		// Captures of clean words came after dirty words of later pages.
		sort.Ints(out)
		out = slicesCompact(out)
	}
	return out
}

func slicesCompact(xs []int) []int {
	if len(xs) == 0 {
		return xs
	}
	j := 1
	for i := 1; i < len(xs); i++ {
		if xs[i] != xs[j-1] {
			xs[j] = xs[i]
			j++
		}
	}
	return xs[:j]
}

func equalWords(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
