package device

import (
	"container/heap"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// simClock is simulated time for a fixed set of goroutines: it stands
// still while any of them runs and jumps to the earliest wake-up once all
// are asleep, so a run is a discrete-event simulation of the device whose
// figures do not depend on the machine's load.
type simClock struct {
	mu      sync.Mutex
	t       float64
	active  int
	waiting wakeHeap
	seq     int
}

type wake struct {
	at  float64
	seq int // ties wake in the order they slept
	ch  chan struct{}
}

type wakeHeap []wake

func (h wakeHeap) Len() int { return len(h) }
func (h wakeHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].seq < h[j].seq)
}
func (h wakeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)   { *h = append(*h, x.(wake)) }
func (h *wakeHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

func (c *simClock) now() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) sleep(ns float64) {
	c.mu.Lock()
	w := wake{at: c.t + ns, seq: c.seq, ch: make(chan struct{})}
	c.seq++
	heap.Push(&c.waiting, w)
	c.advance()
	c.mu.Unlock()
	<-w.ch
}

// advance wakes the earliest sleeper once every active goroutine sleeps.
func (c *simClock) advance() {
	if c.active > 0 && c.waiting.Len() == c.active {
		w := heap.Pop(&c.waiting).(wake)
		c.t = max(c.t, w.at)
		close(w.ch)
	}
}

// run runs n goroutines of body on the simulated clock and returns the
// simulated time they took.
func (c *simClock) run(n int, body func(i int)) time.Duration {
	c.mu.Lock()
	start := c.t
	c.active = n
	c.mu.Unlock()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body(i)
			c.mu.Lock()
			c.active--
			c.advance()
			c.mu.Unlock()
		})
	}
	wg.Wait()
	return time.Duration(c.t - start)
}

// stepClock is simulated time for one goroutine: a sleep moves it on.
type stepClock struct{ t float64 }

func (c *stepClock) now() float64     { return c.t }
func (c *stepClock) sleep(ns float64) { c.t += ns }

func simDevice(t testing.TB, p *Profile) (*Device, *simClock) {
	d, err := New(p, &Options{Burst: time.Nanosecond})
	require.NoError(t, err)
	c := &simClock{}
	d.clk = c
	return d, c
}

func optane(t testing.TB) *Profile {
	p, err := Shipped("optane-1dimm")
	require.NoError(t, err)
	return p
}

// simBandwidth runs n accessors of class charging chunks of size bytes
// (unit-aligned) until they have charged total bytes between them (the
// device serves them in order of arrival, not fairly, so a fixed share
// each would finish at different times), and returns the bandwidth (GB/s)
// in simulated time.
func simBandwidth(d *Device, c *simClock, class, n, size int, total int64) float64 {
	chunks := total / int64(size)
	var next atomic.Int64
	el := c.run(n, func(i int) {
		addr := uintptr(i) << 20 // whole units: overlaps between accessors do not matter
		for k := int64(0); next.Add(1) <= chunks; k++ {
			a := addr + uintptr(k)*uintptr(size)
			switch class {
			case write:
				d.chargeWrite(a, size)
			default:
				d.chargeRead(class, d.readUnits(a, size), 1)
			}
		}
	})
	return float64(chunks*int64(size)) / float64(el.Nanoseconds())
}

// TestDeviceCurves: n accessors of each kind, 1 to 16, get the profile's
// bandwidth at n within 20% (the bound; the simulation is within a
// few per cent).
func TestDeviceCurves(t *testing.T) {
	p := optane(t)
	for _, class := range []struct {
		name  string
		class int
		curve []Level
		size  int
	}{{"seq-read", seqRead, p.Model.SeqRead, 64 << 10}, {"rand-read", randRead, p.Model.RandRead, 4096}, {"write", write, p.Model.Write, 64 << 10}} {
		for _, n := range []int{1, 2, 3, 4, 6, 8, 12, 16} {
			t.Run(fmt.Sprintf("%s/%d", class.name, n), func(t *testing.T) {
				d, c := simDevice(t, p)
				got := simBandwidth(d, c, class.class, n, class.size, 256<<20)
				want := At(class.curve, n)
				t.Logf("%d accessors: %.3f GB/s, profile %.3f", n, got, want)
				require.InEpsilon(t, want, got, 0.2, "%d accessors: %.2f GB/s, profile %.2f", n, got, want)
				st := d.Stats()
				require.Positive(t, st.Sleeps)
			})
		}
	}
}

// TestDeviceWritesPastTheKnee: more writers than the knee make the device
// slower, not faster (the D property).
func TestDeviceWritesPastTheKnee(t *testing.T) {
	p := optane(t)
	bw := map[int]float64{}
	for _, n := range []int{1, 4, 16} {
		d, c := simDevice(t, p)
		bw[n] = simBandwidth(d, c, write, n, 64<<10, 128<<20)
	}
	require.Greater(t, bw[4], bw[1])
	require.Less(t, bw[16], 0.6*bw[4], "16 writers: %.2f GB/s, 4: %.2f", bw[16], bw[4])
}

// TestDeviceInterference: readers next to writers get Interference of
// their bandwidth alone.
func TestDeviceInterference(t *testing.T) {
	p := optane(t)
	d, c := simDevice(t, p)
	alone := simBandwidth(d, c, seqRead, 4, 64<<10, 64<<20)

	d, c = simDevice(t, p)
	var readBytes int64
	var mu sync.Mutex
	stop := false
	el := c.run(6, func(i int) {
		addr := uintptr(i) << 20 // whole units: overlaps between accessors do not matter
		if i >= 4 {              // two writers, until the readers are done
			for k := 0; ; k++ {
				mu.Lock()
				s := stop
				mu.Unlock()
				if s {
					return
				}
				d.chargeWrite(addr+uintptr(k)<<16, 64<<10)
			}
		}
		for k := range 256 {
			d.chargeRead(seqRead, d.readUnits(addr+uintptr(k)<<16, 64<<10), 1)
		}
		mu.Lock()
		readBytes += 256 << 16
		if readBytes == 4*256<<16 {
			stop = true
		}
		mu.Unlock()
	})
	mixed := float64(readBytes) / float64(el.Nanoseconds())
	require.InEpsilon(t, p.Interference, mixed/alone, 0.2, "reads alone %.2f GB/s, next to writers %.2f", alone, mixed)
}

// TestDeviceGranularity: whole units, the write buffer, the read helpers.
func TestDeviceGranularity(t *testing.T) {
	p := optane(t)
	d, _ := simDevice(t, p)
	d.clk = &stepClock{}
	charged := func(f func()) (r, w int64) {
		before := d.Stats()
		f()
		after := d.Stats()
		return after.ReadBytes - before.ReadBytes, after.WriteBytes - before.WriteBytes
	}
	const base = uintptr(1) << 30
	_, w := charged(func() { d.chargeWrite(base, 10) })
	require.EqualValues(t, 256, w, "a 10-byte write costs its unit")
	_, w = charged(func() { d.chargeWrite(base+64, 64) })
	require.EqualValues(t, 64, w, "a write into a unit in the write buffer costs its bytes")
	_, w = charged(func() { d.chargeWrite(base+200, 100) })
	require.EqualValues(t, 56+256, w, "across a unit boundary: the buffered part, then a new unit")
	_, w = charged(func() { d.chargeWrite(base+4096, 4096) })
	require.EqualValues(t, 4096, w, "whole units cost themselves")
	_, w = charged(func() { d.chargeWrite(base+8192+16, 4096) })
	require.EqualValues(t, 4096+256, w, "a misaligned 4 KiB write touches 17 units")

	// 128 units overflow the 16 KiB buffer (64 units): the first is evicted.
	for k := range 128 {
		d.chargeWrite(base+1<<20+uintptr(k)*256, 8)
	}
	_, w = charged(func() { d.chargeWrite(base+1<<20+8, 8) })
	require.EqualValues(t, 256, w, "evicted from the write buffer")

	r, _ := charged(func() { d.readRange(randRead, make([]byte, 10)) })
	require.True(t, r == 256 || r == 512, "a 10-byte read costs the unit(s) it touches: %d", r)
	r, _ = charged(func() { d.readRandN(1000, 100) })
	require.EqualValues(t, 1000*(256+99), r, "1000 random 100-byte reads: 1 + 99/256 units each")
	r, _ = charged(func() { d.readRandN(10, 512) })
	require.EqualValues(t, 10*(512+255), r)
	mem := make([]byte, 1<<20)
	aligned := mem[256-int(uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%256):][:100<<10]
	r, _ = charged(func() { d.readStrided(aligned, 100, 10) })
	require.EqualValues(t, 400*256, r, "10-byte keys every 100 bytes: every unit")
	r, _ = charged(func() { d.readStrided(aligned, 1000, 10) })
	require.EqualValues(t, 103*(256+9), r, "10-byte keys every 1000 bytes: random reads")
}

// TestDeviceLatency: one accessor's small random reads are bound by the
// read latency, not the bandwidth.
func TestDeviceLatency(t *testing.T) {
	p := optane(t)
	d, _ := simDevice(t, p)
	c := &stepClock{}
	d.clk = c
	for range 100 {
		d.readRandN(1000, 64)
	}
	perRead := c.t / 1e5
	require.InEpsilon(t, p.Model.ReadNs, perRead, 0.05)
}

// TestDeviceLargeCharges: accessors that start together with one large
// charge each get the curve's bandwidth at their number, not the first
// paying all its bytes at the bandwidth of one: a charge is accounted in
// pieces, each at the concurrency seen when it is charged.
func TestDeviceLargeCharges(t *testing.T) {
	p := optane(t)
	for _, n := range []int{2, 4} {
		d, c := simDevice(t, p)
		const size = 8 << 20
		el := c.run(n, func(i int) { d.chargeWrite(uintptr(i)<<30, size) })
		got := float64(n*size) / float64(el.Nanoseconds())
		want := At(p.Model.Write, n)
		t.Logf("%d writers: %.3f GB/s, profile %.3f", n, got, want)
		require.InEpsilon(t, want, got, 0.05, "%d writers of one 8 MiB write each: %.2f GB/s, profile %.2f", n, got, want)
		require.EqualValues(t, n*size/piece, d.Stats().Writes, "charged in 64 KiB pieces")
	}
}

// TestDeviceSleepAccounting: the model's sleeps in simulated time (a
// sleep moves the clock on, nothing else does), so that the count does not
// depend on how fast the machine runs the copies (TestDeviceSleeps, in
// wall time, can only bound them from below: on a loaded machine the
// copies take longer than their device time and nothing sleeps). Charges
// of more than MinSleep each sleep their whole cost; smaller ones carry
// their debt until it reaches MinSleep, and what is left under it at the
// end is never slept.
func TestDeviceSleepAccounting(t *testing.T) {
	p := optane(t)
	p.Model.Write = []Level{{Threads: 1, GBs: 0.1}} // 0.1 bytes per ns
	for _, tc := range []struct {
		size, n    int
		sleeps     int64
		unslept    time.Duration // the debt under MinSleep left at the end
		pieceCostN time.Duration
	}{
		{size: 64 << 10, n: 32, sleeps: 32, pieceCostN: 655360},
		// 4 KiB cost 40,960 ns: the 7th charge brings the debt to
		// 286,720 ns >= 250 us, so every 7th sleeps; 32 charges sleep 4
		// times and owe 4 charges' cost at the end.
		{size: 4 << 10, n: 32, sleeps: 4, unslept: 4 * 40960, pieceCostN: 40960},
	} {
		d, err := New(p, &Options{Burst: time.Millisecond})
		require.NoError(t, err)
		d.clk = &stepClock{}
		const base = uintptr(1) << 30
		for i := range tc.n {
			d.chargeWrite(base+uintptr(i*tc.size), tc.size)
		}
		st := d.Stats()
		require.EqualValues(t, tc.n*tc.size, st.WriteBytes)
		require.Equal(t, time.Duration(tc.n)*tc.pieceCostN, st.WriteTime, "%d B charges", tc.size)
		require.Equal(t, tc.sleeps, st.Sleeps, "%d B charges", tc.size)
		require.Equal(t, st.WriteTime-tc.unslept, st.Slept, "%d B charges: slept all but the last debt", tc.size)
	}
}
