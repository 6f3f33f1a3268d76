package ycsb

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func newRand(t *testing.T, seed uint64) *rand.Rand {
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 1))
}

// FNVHash64 is FNV-1a over the long's 8 little-endian bytes, made
// non-negative; the first keys are YCSB's (user6284781860667377211 is the
// key of record 0 in every YCSB load with hashed inserts).
func TestFNVHash64AndKeys(t *testing.T) {
	r := newRand(t, 1)
	for i := range 1000 {
		v := int64(i)
		if i > 100 {
			v = int64(r.Uint64())
		}
		h := fnv.New64a()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
		want := int64(h.Sum64())
		if want < 0 {
			want = -want
		}
		require.Equal(t, want, FNVHash64(v), "%d", v)
	}
	require.Equal(t, "user6284781860667377211", string(KeyFormat{}.Append(nil, 0)))
	require.Equal(t, "user8517097267634966620", string(KeyFormat{}.Append(nil, 1)))
	require.Equal(t, "user42", string(KeyFormat{Ordered: true}.Append(nil, 42)))
	require.Equal(t, "user0000000042", string(KeyFormat{Ordered: true, ZeroPadding: 10}.Append(nil, 42)))
}

func zeta(n int64, theta float64) float64 { return zetaFrom(0, n, theta, 0) }

// The zipfian draws item i with probability 1/((i+1)^theta zeta(n)): the
// first two exactly, the rest by Gray's approximation, whose top-1% share
// is that of the exact distribution within a point.
func TestZipfianProperties(t *testing.T) {
	const n, draws = 10000, 400_000
	r := newRand(t, 2)
	z := NewZipfian(0, n-1, ZipfianConstant)
	counts := make([]int64, n)
	for range draws {
		v := z.Next(r)
		if v < 0 || v >= n {
			t.Fatalf("%d out of range", v)
		}
		counts[v]++
	}
	zn := zeta(n, ZipfianConstant)
	p0, p1 := 1/zn, math.Pow(0.5, ZipfianConstant)/zn
	within(t, "P(item 0)", float64(counts[0])/draws, p0, draws)
	within(t, "P(item 1)", float64(counts[1])/draws, p1, draws)
	top := slices.Clone(counts)
	slices.Sort(top)
	slices.Reverse(top)
	var share int64
	for _, c := range top[:n/100] {
		share += c
	}
	want := zeta(n/100, ZipfianConstant) / zn
	got := float64(share) / draws
	t.Logf("top 1%% share %.4f, exact zipfian %.4f", got, want)
	require.InDelta(t, want, got, 0.02)
	// The popular items are the smallest.
	require.Greater(t, counts[0], counts[10])
	require.Greater(t, counts[10], counts[1000])
}

// within checks an observed frequency against p with 5 standard
// deviations of a binomial of n draws.
func within(t *testing.T, what string, got, p float64, n int) {
	t.Helper()
	sd := math.Sqrt(p * (1 - p) / float64(n))
	t.Logf("%s: %.5f, want %.5f ± %.5f", what, got, p, 5*sd)
	require.InDelta(t, p, got, 5*sd, what)
}

// The scrambled zipfian is a zipfian over 10^10 items (zeta 26.469...)
// hashed into the key space: the hottest key is FNVHash64(0) mod n with at
// least 1/zeta of the draws, the hottest 1% take at least the 10^10-item
// zipfian's share of its first n/100 items, and the hot keys are spread
// over the space, not the smallest.
func TestScrambledZipfianProperties(t *testing.T) {
	const n, draws = 10000, 400_000
	require.InDelta(t, scrambledZetan, zeta(1_000_000, ZipfianConstant)+
		(math.Pow(scrambledItemCount, 0.01)-math.Pow(1_000_000, 0.01))/0.01, 0.01,
		"YCSB's ZETAN against an integral tail estimate")
	r := newRand(t, 3)
	s := NewScrambledZipfian(0, n-1)
	counts := make([]int64, n)
	for range draws {
		v := s.Next(r)
		if v < 0 || v >= n {
			t.Fatalf("%d out of range", v)
		}
		counts[v]++
	}
	hottest := int64(slices.Index(counts, slices.Max(counts)))
	require.Equal(t, FNVHash64(0)%n, hottest)
	require.GreaterOrEqual(t, float64(counts[hottest])/draws, 1/scrambledZetan-0.002)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(counts[b] - counts[a]) })
	var share int64
	var sum float64
	for _, k := range order[:n/100] {
		share += counts[k]
		sum += float64(k)
	}
	got, floor := float64(share)/draws, zeta(n/100, ZipfianConstant)/scrambledZetan
	t.Logf("top 1%% share %.4f (at least %.4f); mean hot key %.0f of %d", got, floor, sum/(n/100), n)
	require.GreaterOrEqual(t, got, floor-0.005)
	require.InDelta(t, n/2, sum/(n/100), n/8, "hot keys spread over the key space")
}

// Uniform covers its range evenly.
func TestUniform(t *testing.T) {
	r := newRand(t, 4)
	u := Uniform{10, 19}
	counts := make([]int, 10)
	const draws = 100_000
	for range draws {
		v := u.Next(r)
		if v < 10 || v > 19 {
			t.Fatalf("%d out of [10, 19]", v)
		}
		counts[v-10]++
	}
	for i, c := range counts {
		within(t, "uniform bucket "+string(rune('0'+i)), float64(c)/draws, 0.1, draws)
	}
}

// Acked's Last advances only over a prefix of acknowledged values, in
// whatever order they are acknowledged.
func TestAckedCounter(t *testing.T) {
	a := NewAcked(100)
	require.Equal(t, int64(99), a.Last())
	var vs []int64
	for range 10 {
		vs = append(vs, a.Next())
	}
	require.Equal(t, []int64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}, vs)
	require.True(t, a.Acknowledge(102))
	require.True(t, a.Acknowledge(101))
	require.Equal(t, int64(99), a.Last())
	require.True(t, a.Acknowledge(100))
	require.Equal(t, int64(102), a.Last())
	require.False(t, a.Acknowledge(101), "acknowledged twice")
	require.False(t, a.Acknowledge(103+ackWindow), "beyond the window")
	r := newRand(t, 5)
	rest := vs[3:]
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	for i, v := range rest {
		require.True(t, a.Acknowledge(v))
		if i < len(rest)-1 {
			require.Less(t, a.Last(), int64(109))
		}
	}
	require.Equal(t, int64(109), a.Last())
}

// Latest favours the most recent acknowledged insert: P(last) is
// 1/zeta(last), it never returns a value not yet acknowledged, and it
// follows new inserts.
func TestLatestRecency(t *testing.T) {
	const n, draws = 10000, 200_000
	a := NewAcked(n)
	l := NewLatest(a, NewZipfian(0, n-2, ZipfianConstant))
	r := newRand(t, 6)
	last := a.Last()
	var atLast, recent int
	for range draws {
		v := l.Next(r)
		if v <= 0 || v > last {
			t.Fatalf("%d out of (0, %d]", v, last)
		}
		if v == last {
			atLast++
		}
		if v > last-n/100 {
			recent++
		}
	}
	within(t, "P(latest)", float64(atLast)/draws, 1/zeta(last, ZipfianConstant), draws)
	share := float64(recent) / draws
	t.Logf("newest 1%% of the keys: %.3f of the reads", share)
	require.InDelta(t, zeta(n/100, ZipfianConstant)/zeta(last, ZipfianConstant), share, 0.02)
	// Inserts move it: the new key becomes the most likely.
	for range 100 {
		a.Acknowledge(a.Next())
	}
	require.Equal(t, last+100, a.Last())
	atLast = 0
	for range 100_000 {
		v := l.Next(r)
		if v > last+100 {
			t.Fatalf("%d not acknowledged", v)
		}
		if v == last+100 {
			atLast++
		}
	}
	within(t, "P(latest) after 100 inserts", float64(atLast)/100_000, 1/zeta(last+100, ZipfianConstant), 100_000)
}

// pick follows the workload's proportions.
func TestWorkloadMix(t *testing.T) {
	r := newRand(t, 7)
	for _, w := range Core {
		sum := w.Read + w.Update + w.Insert + w.Scan + w.RMW
		require.InDelta(t, 1, sum, 1e-9, w.Name)
		var counts [numOps]int
		const draws = 100_000
		for range draws {
			counts[w.pick(r.Float64())]++
		}
		for op, p := range map[Op]float64{Read: w.Read, Update: w.Update, Insert: w.Insert, Scan: w.Scan, ReadModifyWrite: w.RMW} {
			within(t, w.Name+" "+op.String(), float64(counts[op])/draws, p, draws)
		}
	}
	w, err := Lookup("workloadd")
	require.NoError(t, err)
	require.Equal(t, DistLatest, w.Distribution)
	_, err = Lookup("g")
	require.ErrorContains(t, err, `unknown workload "g"`)
}

// Values carry their version and key number; any other bytes are judged
// wrong, an acknowledged key that is absent missing, an older version than
// one acknowledged wrong.
func TestValuesAndJudge(t *testing.T) {
	f := KeyFormat{}
	key := f.Append(nil, 7)
	for _, size := range []int{16, 17, 23, 24, 100, 1024} {
		v := AppendValue(nil, 7, 3, size)
		require.Len(t, v, size)
		require.Equal(t, Correct, judge(f, 7, key, v, true, 3, 3))
		require.Equal(t, Correct, judge(f, 7, key, v, true, 2, 4))
		require.Equal(t, Wrong, judge(f, 7, key, v, true, 4, 5), "stale")
		require.Equal(t, Wrong, judge(f, 7, key, v, true, 1, 2), "from the future")
		require.Equal(t, Wrong, judge(f, 8, f.Append(nil, 8), v, true, 3, 3), "another key's")
		if size > MinValueSize {
			bad := slices.Clone(v)
			bad[size-1] ^= 1
			require.Equal(t, Wrong, judge(f, 7, key, bad, true, 3, 3), "flipped bit")
		}
		require.NotEqual(t, v, AppendValue(nil, 7, 4, size))
	}
	require.Equal(t, Wrong, judge(f, 7, key, []byte("short"), true, 1, 1))
	require.Equal(t, Missing, judge(f, 7, key, nil, false, 1, 1))
	require.Equal(t, Correct, judge(f, 7, key, nil, false, 0, 0))
}
