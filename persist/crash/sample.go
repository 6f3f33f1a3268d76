package crash

import (
	"math/bits"
	"sort"
)

// pathKey tells crash points apart for sampling: the call stack of the
// fence and the shape of what is dirty there.
type pathKey struct{ stack, shape uint64 }

// shape summarizes the dirty set of every region of m: per region, the
// number of dirty words and of runs of adjacent ones (each rounded to a
// power of two), whether they overwrite bytes that were not zero on media
// (none, some, all), and whether anything is in flight. A rare path —
// the wrap of a ring, a split entry, a first write over old data — has a
// shape the common one does not.
func (m *machine) shape() uint64 {
	h := uint64(len(m.regions))
	for _, s := range m.regions {
		n, runs, over, last := 0, 0, 0, -2
		s.dirtyPages(0, len(s.live), func(p, end int) {
			for w := p / 8; w < end/8; w++ {
				if loadWord(s.liveW, w) == s.mediaW[w] {
					continue
				}
				n++
				if w != last+1 {
					runs++
				}
				last = w
				if s.mediaW[w] != 0 {
					over++
				}
			}
		})
		overClass := 0
		switch {
		case over == n && n > 0:
			overClass = 2
		case over > 0:
			overClass = 1
		}
		inFlight := 0
		if len(s.pend) > 0 {
			inFlight = 1
		}
		h = mix64(h ^ uint64(bits.Len(uint(n))))
		h = mix64(h ^ uint64(bits.Len(uint(runs))))
		h = mix64(h ^ uint64(overClass<<1|inFlight))
	}
	return h
}

// sampleFences chooses n of the fences whose keys (in fence order) the
// counting run recorded: first one fence of every distinct key, the
// rarest keys first (a key seen once is a path taken once), then seeded
// random fences among the rest. Every choice is seeded: the same seed
// samples the same fences.
func sampleFences(keys []pathKey, n int, seed uint64) map[int]bool {
	s := map[int]bool{}
	total := len(keys)
	if n >= total {
		for i := 1; i <= total; i++ {
			s[i] = true
		}
		return s
	}
	type group struct {
		first  int // fence number of the first occurrence
		fences []int
	}
	groups := map[pathKey]*group{}
	var order []*group
	for i, k := range keys {
		g := groups[k]
		if g == nil {
			g = &group{first: i + 1}
			groups[k] = g
			order = append(order, g)
		}
		g.fences = append(g.fences, i+1)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if len(a.fences) != len(b.fences) {
			return len(a.fences) < len(b.fences)
		}
		return mix64(seed^uint64(a.first)) < mix64(seed^uint64(b.first))
	})
	for _, g := range order {
		if len(s) == n {
			return s
		}
		s[g.fences[mix64(seed^uint64(g.first)<<1)%uint64(len(g.fences))]] = true
	}
	// The rest: seeded random fences not chosen yet.
	rest := make([]int, 0, total-len(s))
	for i := 1; i <= total; i++ {
		if !s[i] {
			rest = append(rest, i)
		}
	}
	x := mix64(seed ^ 0x5eed)
	for len(s) < n {
		x = mix64(x)
		j := int(x % uint64(len(rest)))
		s[rest[j]] = true
		rest[j] = rest[len(rest)-1]
		rest = rest[:len(rest)-1]
	}
	return s
}
