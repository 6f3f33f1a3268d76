package ycsb

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// The generators of YCSB's core package (site.ycsb.generator), written
// from their definitions. Each draws from a *rand.Rand the caller owns
// (one per client goroutine: no shared random state), so a run is
// reproducible from its seed as far as the clients' interleaving allows.

// ZipfianConstant is YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT.
const ZipfianConstant = 0.99

// The constants of YCSB's ScrambledZipfianGenerator: it draws from a
// zipfian over ItemCount items, whose zeta(ItemCount, 0.99) is Zetan
// (precomputed there, so that construction is O(1)), then hashes the item
// into the key space.
const (
	scrambledItemCount = 10_000_000_000
	scrambledZetan     = 26.46902820178302
)

// FNV-64 (FNV-1a over the eight bytes of a long, low byte first), as
// YCSB's Utils.fnvhash64.
const (
	fnvOffset64 = 0xCBF29CE484222325
	fnvPrime64  = 1099511628211
)

// FNVHash64 is YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes of v (low
// byte first), as a non-negative Java long (Math.abs; the one value whose
// absolute value overflows stays negative there, and here).
func FNVHash64(v int64) int64 {
	h := uint64(fnvOffset64)
	u := uint64(v)
	for range 8 {
		h ^= u & 0xff
		u >>= 8
		h *= fnvPrime64
	}
	s := int64(h)
	if s < 0 {
		s = -s
	}
	return s
}

// Uniform draws integers uniformly from [Min, Max] (UniformLongGenerator).
type Uniform struct{ Min, Max int64 }

// Next returns the next value.
func (u Uniform) Next(r *rand.Rand) int64 { return u.Min + r.Int64N(u.Max-u.Min+1) }

// Zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases", SIGMOD 1994): item Min+i is drawn
// with probability proportional to 1/(i+1)^theta. Items 0 and 1 are exact;
// the rest follow Gray's closed form. The item count may grow (NextN), as
// SkewedLatestGenerator needs: zeta is then extended incrementally.
//
// A Zipfian is a value: copy it to give each client its own (the zeta
// state is updated by NextN).
type Zipfian struct {
	base, items  int64
	theta, alpha float64
	zeta2theta   float64
	zetan, eta   float64
	countForZeta int64
}

// NewZipfian returns a zipfian over [min, max] with the given constant
// (ZipfianConstant in YCSB's workloads); it computes zeta(max-min+1), which
// is O(items).
func NewZipfian(min, max int64, theta float64) Zipfian {
	n := max - min + 1
	return newZipfianZeta(min, max, theta, zetaFrom(0, n, theta, 0))
}

func newZipfianZeta(min, max int64, theta, zetan float64) Zipfian {
	z := Zipfian{base: min, items: max - min + 1, theta: theta, alpha: 1 / (1 - theta),
		zeta2theta: zetaFrom(0, 2, theta, 0), zetan: zetan, countForZeta: max - min + 1}
	z.eta = z.etaFor(z.items)
	return z
}

// zetaFrom adds 1/(i+1)^theta for i in [st, n) to sum (YCSB's zetastatic).
func zetaFrom(st, n int64, theta, sum float64) float64 {
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// etaFor is Gray's eta for n items. (YCSB's ZipfianGenerator uses its
// initial item count here after the count grows; this uses the current
// one, as Gray's formula has it.)
func (z *Zipfian) etaFor(n int64) float64 {
	return (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
}

// Next returns an item of [min, max].
func (z *Zipfian) Next(r *rand.Rand) int64 { return z.NextN(r, z.items) }

// NextN returns an item of [min, min+n) for n items, n at least the
// count given to NewZipfian (YCSB's nextLong(itemcount); a smaller count
// keeps the larger zeta, as YCSB does when the count may not decrease).
func (z *Zipfian) NextN(r *rand.Rand, n int64) int64 {
	if n > z.countForZeta {
		z.zetan = zetaFrom(z.countForZeta, n, z.theta, z.zetan)
		z.countForZeta = n
		z.eta = z.etaFor(n)
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return z.base + 1
	}
	return z.base + int64(float64(n)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator: a zipfian over
// 10^10 items with constant 0.99, each drawn item hashed (FNVHash64) into
// [Min, Max], so that the popular keys are spread over the key space
// instead of being the smallest ones.
type ScrambledZipfian struct {
	min, n int64
	gen    Zipfian
}

// NewScrambledZipfian returns a scrambled zipfian over [min, max] with
// YCSB's constant (0.99) and its precomputed zeta.
func NewScrambledZipfian(min, max int64) ScrambledZipfian {
	return ScrambledZipfian{min: min, n: max - min + 1,
		gen: newZipfianZeta(0, scrambledItemCount, ZipfianConstant, scrambledZetan)}
}

// Next returns an item of [min, max].
func (s *ScrambledZipfian) Next(r *rand.Rand) int64 {
	return s.min + FNVHash64(s.gen.Next(r))%s.n
}

// Counter hands out consecutive integers from a start
// (CounterGenerator); safe for concurrent use.
type Counter struct{ next atomic.Int64 }

// NewCounter returns a counter whose first value is start.
func NewCounter(start int64) *Counter {
	c := &Counter{}
	c.next.Store(start)
	return c
}

// Next returns the next integer.
func (c *Counter) Next() int64 { return c.next.Add(1) - 1 }

// ackWindow is AcknowledgedCounterGenerator's window: how many handed-out
// values may be outstanding (not yet acknowledged) past the limit.
const ackWindow = 1 << 20

// Acked is YCSB's AcknowledgedCounterGenerator: it hands out insert key
// numbers like Counter, and Last is the highest value below which every
// value handed out has been acknowledged (the insert is durable), so that
// "latest" reads only keys that exist. Safe for concurrent use.
type Acked struct {
	Counter
	mu     sync.Mutex
	window []bool
	limit  atomic.Int64
}

// NewAcked returns an acknowledged counter whose first value is start;
// Last is start-1 until start is acknowledged.
func NewAcked(start int64) *Acked {
	a := &Acked{window: make([]bool, ackWindow)}
	a.next.Store(start)
	a.limit.Store(start - 1)
	return a
}

// Acknowledge records that v (a value Next returned) is done. It reports
// false when v is more than the window ahead of the limit (an insert
// stuck while 2^20 later ones finished), which YCSB treats as an error.
func (a *Acked) Acknowledge(v int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	lim := a.limit.Load()
	if v <= lim || v-lim > ackWindow {
		return false
	}
	a.window[v%ackWindow] = true
	for {
		s := (lim + 1) % ackWindow
		if !a.window[s] {
			break
		}
		a.window[s] = false
		lim++
	}
	a.limit.Store(lim)
	return true
}

// Last returns the highest value such that it and every value before it
// were acknowledged.
func (a *Acked) Last() int64 { return a.limit.Load() }

// Latest is YCSB's SkewedLatestGenerator: the most recently acknowledged
// insert is the most likely key, older ones less likely along a zipfian
// (next = last - zipfian(last)). Each client has its own (the zipfian's
// zeta grows with the inserts).
type Latest struct {
	basis *Acked
	zipf  Zipfian
}

// NewLatest returns a generator over basis's acknowledged values; base
// is a zipfian made for basis.Last() items (shared, copied).
func NewLatest(basis *Acked, base Zipfian) *Latest {
	return &Latest{basis: basis, zipf: base}
}

// Next returns a value in (0, basis.Last()].
func (l *Latest) Next(r *rand.Rand) int64 {
	last := l.basis.Last()
	return last - l.zipf.NextN(r, max(last, 1))
}
