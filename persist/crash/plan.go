package crash

import "math/rand/v2"

// Image classes: how the images of a crash point were chosen.
const (
	ClassNothing    = iota // nothing survived
	ClassEverything        // everything survived
	ClassAlone             // one unit alone lost, alone survived, or alone at a torn or intermediate value
	ClassCover             // a row of the covering array
	ClassPairs             // two units lost together, all others survived
	ClassRandom            // seeded random, distinct from every other image of the point
	ClassMixed             // an exhaustive plan's image of none of the classes above
	NumClasses
)

// ClassNames are the classes' names in reports.
var ClassNames = [NumClasses]string{"nothing", "everything", "alone", "cover", "pairs", "random", "mixed"}

// imagePlan enumerates the images of one crash point, each once.
type imagePlan struct {
	*unitSet
	total      float64 // number of distinct images
	exhaustive bool
	seed       uint64
	seq        int

	// Sampled plans: the classes' sizes in order, the covering array and
	// how many random images end the plan.
	size     [NumClasses]int
	cover    *coverArray
	pairs    bool
	planned  int   // images planned
	alone    []int // the units that get alone images, in order (all unless bounded)
	aloneCut int   // units left without alone images
	limit    int   // random images are drawn while fewer images than this were handed out

	// Iteration.
	next    int // next image number handed out
	class   int
	k       int // position in class
	seen    map[uint64]struct{}
	rng     *rand.Rand
	targets [NumClasses][]int // positions in class that get recovery crashes
	counted [NumClasses]int   // exhaustive plans: images of each class so far
	owed    [NumClasses]int   // recovery crashes owed by a class (its target was a repeat)
}

// newPlan plans the images of a crash point of the workload or, with a
// smaller maxImages, of a recovery; pairs says whether pairs of units are
// checked here; done counts the recoveries crashed so far by class (nil:
// none are, inside a recovery).
func newPlan(us *unitSet, cfg *Config, maxImages int, pairs bool, seq int, done *[NumClasses]int) *imagePlan {
	p := &imagePlan{unitSet: us, total: 1, seed: cfg.Seed, seq: seq, seen: map[uint64]struct{}{}}
	for _, u := range us.units {
		p.total *= float64(u.n)
		if p.total > 1e18 {
			break
		}
	}
	n := len(us.units)
	if p.total <= float64(maxImages) {
		p.exhaustive = true
		p.planned = int(p.total)
		p.classifyExhaustive()
	} else {
		p.size[ClassNothing], p.size[ClassEverything] = 1, 1
		p.cover = newCover(cfg.Strength, n)
		if p.cover != nil {
			p.size[ClassCover] = len(p.cover.rows)
		}
		alone := n
		switch {
		case maxImages < cfg.MaxImages:
			// Inside a recovery the budget holds: as many units alone
			// as fit after nothing, everything and the covering array.
			alone = min(n, max(1, (maxImages-2-p.size[ClassCover])/2))
		case cfg.MaxAlone > 0:
			alone = min(n, cfg.MaxAlone)
		}
		p.chooseAlone(alone)
		for _, k := range p.alone {
			p.size[ClassAlone] += us.units[k].n
		}
		if pairs {
			p.pairs = true
			p.size[ClassPairs] = n * (n - 1) / 2
		}
		sys := 0
		for _, s := range p.size {
			sys += s
		}
		p.size[ClassRandom] = max(0, maxImages-sys) // for the recovery-crash targets; see limit
		p.limit = maxImages
		p.planned = max(sys, maxImages)
		p.rng = rand.New(rand.NewPCG(cfg.Seed^0x9e3779b97f4a7c15, uint64(seq)))
	}
	if done != nil {
		p.chooseTargets(cfg.RecoveryCrashes, done)
	}
	return p
}

// chooseAlone picks the m units (of n) that get alone images: all of
// them, or, bounded, m consecutive ones from a start seeded by the crash
// point, so that the crash points of a path cover different units.
func (p *imagePlan) chooseAlone(m int) {
	n := len(p.units)
	off := 0
	if m < n {
		off = int(mix64(p.seed^uint64(p.seq)<<1) % uint64(n))
	}
	p.alone = make([]int, m)
	for j := range p.alone {
		p.alone[j] = (off + j) % n
	}
	p.aloneCut = n - m
}

// classifyExhaustive counts the images of each class in an exhaustive plan.
func (p *imagePlan) classifyExhaustive() {
	choice := make([]int, len(p.units))
	for i := 0; i < p.planned; i++ {
		p.radix(i, choice)
		p.size[p.classOf(choice)]++
	}
}

// classOf is the class an image of an exhaustive plan belongs to.
func (p *imagePlan) classOf(choice []int) int {
	lost, newest := 0, 0
	for k, u := range p.units {
		switch choice[k] {
		case 0:
			lost++
		case u.n - 1:
			newest++
		}
	}
	n := len(p.units)
	switch {
	case lost == n:
		return ClassNothing
	case newest == n:
		return ClassEverything
	case newest == n-1 || lost == n-1 && newest == 1:
		return ClassAlone
	case lost == 2 && newest == n-2:
		return ClassPairs
	}
	return ClassMixed
}

// chooseTargets picks the images whose recovery is crashed too: the
// nothing-survived and the everything-survived image, and k images of one
// other class present here — the one whose recoveries were crashed least
// so far in this test (done), so that every class gets its turn — spread
// over it with the seed.
func (p *imagePlan) chooseTargets(k int, done *[NumClasses]int) {
	if k <= 0 {
		return
	}
	other := -1
	for c, size := range p.size {
		switch {
		case size == 0:
		case c == ClassNothing || c == ClassEverything:
			p.targets[c] = []int{0}
		case other < 0 || done[c] < done[other]:
			other = c
		}
	}
	if other < 0 {
		return
	}
	size := p.size[other]
	off := int(mix64(mix64(p.seed)^uint64(p.seq)) % uint64(size))
	for j := 0; j < min(k, size); j++ {
		p.targets[other] = append(p.targets[other], (off+j*size/min(k, size))%size)
	}
}

// mix64 is splitmix64's finalizer: a deterministic hash of a word.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// fingerprint identifies an image of the plan.
func fingerprint(choice []int) uint64 {
	h := uint64(len(choice))
	for _, c := range choice {
		h = mix64(h ^ uint64(c))
	}
	return h
}

// radix is image i of an exhaustive plan: mixed-radix counting.
func (p *imagePlan) radix(i int, choice []int) {
	x := i
	for k, u := range p.units {
		choice[k] = x % u.n
		x /= u.n
	}
}

// nextImage fills choice with the plan's next image, one never handed out
// before at this crash point, and returns its number and class, and
// whether its recovery gets crashes too; ok is false at the end.
func (p *imagePlan) nextImage(choice []int) (i, class int, nested, ok bool) {
	for {
		if p.exhaustive {
			if p.next >= p.planned {
				return 0, 0, false, false
			}
			p.radix(p.next, choice)
			c := p.classOf(choice)
			pos := p.counted[c]
			p.counted[c]++
			p.next++
			return p.next - 1, c, p.wantNested(c, pos), true
		}
		for p.class < NumClasses && (p.class != ClassRandom && p.k >= p.size[p.class] || p.class == ClassRandom && p.next >= p.limit) {
			p.class, p.k = p.class+1, 0
		}
		if p.class >= NumClasses {
			return 0, 0, false, false
		}
		c, pos := p.class, p.k
		p.k++
		if !p.fill(c, pos, choice) {
			continue
		}
		if !p.fresh(choice) {
			if p.wantNested(c, pos) {
				p.owed[c]++ // to the class's next image
			}
			continue
		}
		p.next++
		nested := p.wantNested(c, pos)
		if !nested && p.owed[c] > 0 {
			p.owed[c]--
			nested = true
		}
		return p.next - 1, c, nested, true
	}
}

func (p *imagePlan) wantNested(c, pos int) bool {
	for _, t := range p.targets[c] {
		if t == pos {
			return true
		}
	}
	return false
}

// fresh reports whether choice was not handed out before, and records it.
func (p *imagePlan) fresh(choice []int) bool {
	x := fingerprint(choice)
	if _, dup := p.seen[x]; dup {
		return false
	}
	p.seen[x] = struct{}{}
	return true
}

// fill sets choice to image pos of class c of a sampled plan; false when
// there is none (a random image that could not be drawn fresh).
func (p *imagePlan) fill(c, pos int, choice []int) bool {
	n := len(p.units)
	newest := func() {
		for k, u := range p.units {
			choice[k] = u.n - 1
		}
	}
	switch c {
	case ClassNothing:
		clear(choice)
	case ClassEverything:
		newest()
	case ClassAlone:
		// Per unit: alone lost, alone survived, then alone at each
		// value between (torn, or captured in flight).
		for _, k := range p.alone {
			u := p.units[k]
			if pos >= u.n {
				pos -= u.n
				continue
			}
			switch pos {
			case 0:
				newest()
				choice[k] = 0
			case 1:
				clear(choice)
				choice[k] = u.n - 1
			default:
				newest()
				choice[k] = pos - 1
			}
			return true
		}
	case ClassCover:
		for k, u := range p.units {
			choice[k] = 0
			if p.cover.bit(pos, k) {
				choice[k] = u.n - 1
			}
		}
	case ClassPairs:
		// pos -> (i, j), i < j, in order (0,1), (0,2), ..., (1,2), ...
		i := 0
		for pos >= n-1-i {
			pos -= n - 1 - i
			i++
		}
		newest()
		choice[i], choice[i+1+pos] = 0, 0
	case ClassRandom:
		return p.random(choice)
	}
	return true
}

// random draws a seeded random image not handed out before: a few
// tries, then the next unused image in counting order from a random
// start (the plan is sampled, so fewer images were handed out than
// exist).
func (p *imagePlan) random(choice []int) bool {
	for try := 0; try < 64; try++ {
		for k, u := range p.units {
			choice[k] = p.rng.IntN(u.n)
		}
		if p.peekFresh(choice) {
			return true
		}
	}
	for try := 0; try < 1<<16; try++ {
		// Count up from the last draw.
		for k := range choice {
			choice[k]++
			if choice[k] < p.units[k].n {
				break
			}
			choice[k] = 0
		}
		if p.peekFresh(choice) {
			return true
		}
	}
	return false
}

func (p *imagePlan) peekFresh(choice []int) bool {
	_, dup := p.seen[fingerprint(choice)]
	return !dup
}
