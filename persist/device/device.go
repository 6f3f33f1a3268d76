package device

import (
	"fmt"
	"github.com/braid-pm/braid/internal/numa"
	"math"
	"slices"
	"sync"
	"time"
)

// A Model is the part of a device profile that an emulated Device runs
// (the BRAID properties of papers/000 made measurable): the bandwidth of
// each access type as a function of the number of accessors using the
// device at once, the device's internal access unit, the read-under-write
// interference (Profile.Interference) and latencies.
type Model struct {
	// SeqRead, RandRead and Write are the bandwidth curves: the device's
	// total bandwidth (GB/s, 1e9 bytes) with Threads accessors of that
	// kind at once, in increasing Threads from 1. Between two points the
	// curve is linear; past the last it stays at the last point's value.
	SeqRead  []Level `json:"seq_read"`
	RandRead []Level `json:"rand_read"`
	Write    []Level `json:"write"`
	// Granularity is the device's internal access unit in bytes (Optane's
	// XPLine: 256): a read costs every unit it touches, a write every
	// unit it touches unless the unit is still in the write buffer.
	Granularity int `json:"granularity"`
	// WriteBuffer is the bytes of the device's write-combining buffer
	// (Optane's XPBuffer: 16 KiB per DIMM), 0 for none. A partial write to
	// a unit that a recent write brought into the buffer costs only its
	// own bytes; otherwise it costs the whole unit.
	WriteBuffer int `json:"write_buffer"`
	// ReadNs and WriteNs are the latencies of one random read and of one
	// durable write (0: not modelled). They floor the time of a call's
	// accesses: k random reads by one of n readers take at least
	// k*ReadNs/n of device time.
	ReadNs  float64 `json:"read_ns"`
	WriteNs float64 `json:"write_ns"`
	// RemoteRead and RemoteWrite are how many times more device time a
	// read or a write costs when it comes from a CPU on another NUMA node
	// than the device's (Options.NUMA): SKYE's O6 on Optane, 2.5 and 3
	// (papers/002 §3). 0 or 1: no penalty.
	RemoteRead  float64 `json:"remote_read,omitempty"`
	RemoteWrite float64 `json:"remote_write,omitempty"`
}

// Level is one point of a bandwidth curve.
type Level struct {
	Threads int     `json:"threads"`
	GBs     float64 `json:"gbs"`
}

func (m *Model) validate() error {
	for name, c := range map[string][]Level{"seq_read": m.SeqRead, "rand_read": m.RandRead, "write": m.Write} {
		if len(c) == 0 {
			return fmt.Errorf("%w: profile model has no %s curve", ErrInvalid, name)
		}
		for i, l := range c {
			if l.Threads < 1 || !(l.GBs > 0) || math.IsInf(l.GBs, 0) || (i > 0 && l.Threads <= c[i-1].Threads) {
				return fmt.Errorf("%w: profile model %s point %d (%d threads, %g GB/s): want threads from 1, increasing, and a bandwidth > 0", ErrInvalid, name, i, l.Threads, l.GBs)
			}
		}
	}
	switch {
	case m.Granularity < 1 || m.Granularity > 1<<20:
		return fmt.Errorf("%w: profile model granularity %d: want 1 to 1 MiB", ErrInvalid, m.Granularity)
	case m.WriteBuffer < 0 || m.WriteBuffer > 1<<30:
		return fmt.Errorf("%w: profile model write_buffer %d: want 0 to 1 GiB", ErrInvalid, m.WriteBuffer)
	case m.ReadNs < 0 || m.WriteNs < 0 || math.IsInf(m.ReadNs+m.WriteNs, 0) || math.IsNaN(m.ReadNs+m.WriteNs):
		return fmt.Errorf("%w: profile model latencies %g/%g ns: want >= 0", ErrInvalid, m.ReadNs, m.WriteNs)
	case m.RemoteRead < 0 || m.RemoteWrite < 0 || m.RemoteRead > 100 || m.RemoteWrite > 100 || math.IsNaN(m.RemoteRead+m.RemoteWrite):
		return fmt.Errorf("%w: profile model remote_read/remote_write %g/%g: want 0 (none) to 100", ErrInvalid, m.RemoteRead, m.RemoteWrite)
	}
	return nil
}

// At returns the bandwidth of curve c with n accessors (GB/s).
func At(c []Level, n int) float64 {
	if len(c) == 0 {
		return 0
	}
	if n <= c[0].Threads {
		return c[0].GBs
	}
	for i := 1; i < len(c); i++ {
		if n <= c[i].Threads {
			a, b := c[i-1], c[i]
			return a.GBs + (b.GBs-a.GBs)*float64(n-a.Threads)/float64(b.Threads-a.Threads)
		}
	}
	return c[len(c)-1].GBs
}

// Options tune how a Device turns device time into sleeps. A nil
// *Options means the defaults.
type Options struct {
	// MinSleep: an accessor sleeps once the device time it owes reaches
	// this (default DefaultMinSleep); below it, the debt is carried to its
	// next access. Larger means fewer, longer sleeps: less CPU, coarser
	// time.
	MinSleep time.Duration
	// Burst is the depth of the token bucket (default DefaultBurst): a
	// device left idle may run that much device time ahead of the clock,
	// which absorbs late wake-ups on a loaded machine. It makes the first
	// Burst of a run free, so small runs should set it smaller.
	Burst time.Duration
	// NUMA places the device on a node: an access from a CPU on another
	// node costs the model's RemoteRead/RemoteWrite times more device
	// time. Nil: no node (every access local, as before NUMA was
	// modelled).
	NUMA *NUMA
}

// NUMA says where an emulated device sits.
type NUMA struct {
	// Node is the device's node.
	Node int
	// SysfsRoot is where the topology is read (default /sys): a test
	// builds a fake two-node machine there (the node of a CPU).
	SysfsRoot string
}

// Defaults of Options.
const (
	DefaultMinSleep = 250 * time.Microsecond
	DefaultBurst    = 2 * time.Millisecond
)

// concurrencyWindow is how long a count of concurrent accessors is
// remembered: accessors that sleep most of the time are not all asleep at
// every instant, so the device takes the most it saw asleep at once over
// the last one to two windows.
const concurrencyWindow = 5 * time.Millisecond

// interferenceWindow: reads pay the interference factor while the write
// lane is busy or was within this time.
const interferenceWindow = time.Millisecond

// A Device is an emulated BRAID device: regions mapped with it
// (Options.Device, BRAID_DEVICE) charge it for their writes (Copy, Set,
// Flush, Persist) and for the reads they declare (ReadSeq, ReadRand,
// ReadStrided, Load), and the calling goroutine sleeps for the device time
// its bytes cost. Device time is virtual, one clock per lane (reads,
// writes): a charge of b bytes by one of n accessors of its kind advances
// the lane by b / bandwidth(n) (reads by 1/Interference more while writes
// are in flight), and the caller sleeps until its bytes are through once
// that is at least MinSleep ahead of now. So n goroutines together get
// the curve's bandwidth at n, each sleeps rather than spins, and a goroutine
// whose own CPU work is slower than the device never sleeps.
//
// The number of accessors is counted, not declared: it is the largest
// number of goroutines asleep on the lane at once over the last few
// milliseconds (at least the caller). All the regions of one device share
// it (a kv device's segment files, a sort's input, runs and output); make
// one Device per emulated device. A Device is safe for concurrent use.
type Device struct {
	name  string
	prof  Profile
	m     *Model // nil: nothing to emulate (the dram profile)
	gran  uint64
	inter float64 // read bandwidth factor while writes are in flight
	clk   clock

	minSleep, burst float64 // ns

	node     int        // Options.NUMA's node, -1 for none
	cpuNodes []int      // CPU -> node, from the topology (nil: no NUMA)
	whereAmI func() int // the calling thread's CPU (numa.CPU; a test's fake)

	mu    sync.Mutex
	read  lane
	write lane
	wbuf  map[uint64]struct{} // units in the write buffer
	wring []uint64            // the same, oldest first (FIFO eviction)
	wpos  int
	st    Stats
}

// lane is one access class's virtual clock and accessor count.
type lane struct {
	busy     float64 // clock ns at which the lane has served everything charged
	sleepers int
	peak     int // most sleepers at once in the current window
	prevPeak int // ... in the previous window
	winStart float64
}

// Stats are what a device was charged since it was made.
type Stats struct {
	Reads, Writes         int64         // charges (a call is charged in pieces of at most 64 KiB)
	ReadBytes, WriteBytes int64         // bytes charged, in whole units (Granularity)
	ReadTime, WriteTime   time.Duration // device time charged
	Sleeps                int64         // sleeps of the accessors
	RemoteBytes           int64         // bytes charged from a CPU on another node (Options.NUMA)
	Slept                 time.Duration // their total (asked for, not the late wake-ups)
}

// clock is real time, or a test's simulated time.
type clock interface {
	now() float64 // ns
	sleep(ns float64)
}

type realClock struct{ epoch time.Time }

func (c realClock) now() float64   { return float64(time.Since(c.epoch)) }
func (realClock) sleep(ns float64) { time.Sleep(time.Duration(ns)) }
func newRealClock() realClock      { return realClock{epoch: time.Now()} }

// Name is the profile's device name (Shipped's name for a shipped
// one).
func (d *Device) Name() string   { return d.name }
func (d *Device) String() string { return d.name }

// Profile returns the profile the device runs (a copy).
func (d *Device) Profile() Profile { return d.prof }

// Emulating reports whether the device has a model to run: false for a nil
// device and for the dram profile, whose regions run as without a device.
func (d *Device) Emulating() bool { return d != nil && d.m != nil }

// New returns an emulated device running the profile's Model. A
// profile without a model (dram) gives a device that charges nothing:
// a region mapped with it runs the code of a region without a device.
func New(p *Profile, opts *Options) (*Device, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil profile for a device", ErrInvalid)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	o := Options{MinSleep: DefaultMinSleep, Burst: DefaultBurst}
	if opts != nil {
		if opts.MinSleep < 0 || opts.Burst < 0 {
			return nil, fmt.Errorf("%w: negative MinSleep or Burst", ErrInvalid)
		}
		if opts.MinSleep > 0 {
			o.MinSleep = opts.MinSleep
		}
		if opts.Burst > 0 {
			o.Burst = opts.Burst
		}
	}
	d := &Device{name: p.Device, prof: *p, clk: newRealClock(),
		minSleep: float64(o.MinSleep), burst: float64(o.Burst), node: -1, whereAmI: numa.CPU}
	if opts != nil && opts.NUMA != nil {
		if err := d.place(opts.NUMA); err != nil {
			return nil, err
		}
	}
	if d.name == "" {
		d.name = "device"
	}
	if p.Model == nil {
		return d, nil
	}
	m := *p.Model
	m.SeqRead, m.RandRead, m.Write = slices.Clone(m.SeqRead), slices.Clone(m.RandRead), slices.Clone(m.Write)
	d.prof.Model, d.m = &m, &m
	d.gran = uint64(m.Granularity)
	d.inter = p.Interference
	if d.inter <= 0 || d.inter > 1 {
		d.inter = 1
	}
	if k := m.WriteBuffer / m.Granularity; k > 0 {
		d.wbuf = make(map[uint64]struct{}, k)
		d.wring = make([]uint64, k)
		for i := range d.wring {
			d.wring[i] = math.MaxUint64
		}
	}
	return d, nil
}

// Stats returns what the device was charged so far.
func (d *Device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
}

// Access classes of a charge.
const (
	seqRead = iota
	randRead
	write
)

// chargeWrite charges a write of n bytes at address addr.
func (d *Device) chargeWrite(addr uintptr, n int) {
	if n <= 0 {
		return
	}
	f := d.remote(d.m.RemoteWrite)
	now := d.clk.now()
	d.mu.Lock()
	d.charge(now, write, d.writtenUnits(uint64(addr), uint64(n)), 1, f)
}

// piece is the most device bytes one charge accounts at a time: a large
// read or write is charged piece by piece, each at the concurrency seen
// when it is charged, so that the first of several accessors that start
// together does not pay for all of its bytes at the bandwidth of one
// (TestDeviceLargeCharges).
const piece = 64 << 10

// charge accounts bytes in ops accesses of class, piece by piece (the
// ops spread over the pieces). Called with d.mu held and now read before
// it was taken; returns with it released.
func (d *Device) charge(now float64, class int, bytes, ops int64, f float64) {
	for {
		b, o := bytes, ops
		if b > piece {
			b = piece
			o = ops * piece / bytes
		}
		bytes, ops = bytes-b, ops-o
		d.account(now, class, b, o, f)
		if bytes <= 0 {
			return
		}
		now = d.clk.now()
		d.mu.Lock()
	}
}

// writtenUnits is the bytes a write of [a, a+n) costs: whole units, except
// a partial unit found in the write buffer, which costs its own bytes.
// Called with d.mu held.
func (d *Device) writtenUnits(a, n uint64) int64 {
	g := d.gran
	first, last := a/g, (a+n-1)/g
	cost := (last - first + 1) * g
	edge := func(u, covered uint64) {
		if covered == g || d.wbuf == nil {
			return
		}
		if _, ok := d.wbuf[u]; ok {
			cost -= g - covered
			return
		}
		if old := d.wring[d.wpos]; old != math.MaxUint64 {
			delete(d.wbuf, old)
		}
		d.wring[d.wpos] = u
		d.wpos = (d.wpos + 1) % len(d.wring)
		d.wbuf[u] = struct{}{}
	}
	if first == last {
		edge(first, n)
	} else {
		edge(first, (first+1)*g-a)
		edge(last, a+n-last*g)
	}
	return int64(cost)
}

// chargeRead charges reads of bytes (whole units) in ops accesses.
func (d *Device) chargeRead(class int, bytes int64, ops int64) {
	if bytes <= 0 {
		return
	}
	f := d.remote(d.m.RemoteRead)
	now := d.clk.now()
	d.mu.Lock()
	d.charge(now, class, bytes, ops, f)
}

// account advances the lane of class by the cost of bytes in ops accesses
// and sleeps the caller when it owes MinSleep or more. Called with d.mu
// held; returns with it released. Stats count the pieces as calls. f is
// the remote factor (1 for a local access).
func (d *Device) account(now float64, class int, bytes, ops int64, f float64) {
	l, curve, lat := &d.read, d.m.SeqRead, 0.0
	switch class {
	case randRead:
		curve, lat = d.m.RandRead, d.m.ReadNs
	case write:
		l, curve, lat = &d.write, d.m.Write, d.m.WriteNs
	}
	n := l.accessors(now)
	bw := At(curve, n) // bytes per ns
	if class != write && d.inter < 1 && d.write.busy+float64(interferenceWindow) > now {
		bw *= d.inter
	}
	cost := float64(bytes) / bw
	if lat > 0 {
		cost = max(cost, float64(ops)*lat/float64(n))
	}
	if f > 1 {
		cost *= f
		d.st.RemoteBytes += bytes
	}
	l.busy = max(l.busy, now-d.burst) + cost
	wait := l.busy - now
	if class == write {
		d.st.Writes++
		d.st.WriteBytes += bytes
		d.st.WriteTime += time.Duration(cost)
	} else {
		d.st.Reads++
		d.st.ReadBytes += bytes
		d.st.ReadTime += time.Duration(cost)
	}
	if wait < d.minSleep {
		d.mu.Unlock()
		return
	}
	l.sleepers++
	l.peak = max(l.peak, l.sleepers)
	d.st.Sleeps++
	d.st.Slept += time.Duration(wait)
	d.mu.Unlock()
	d.clk.sleep(wait)
	d.mu.Lock()
	l.sleepers--
	d.mu.Unlock()
}

// accessors is the lane's count of concurrent accessors at now, the
// caller included.
func (l *lane) accessors(now float64) int {
	if w := float64(concurrencyWindow); now-l.winStart >= w {
		l.prevPeak = l.peak
		if now-l.winStart >= 2*w {
			l.prevPeak = l.sleepers
		}
		l.peak, l.winStart = l.sleepers, now
	}
	return max(l.sleepers+1, l.peak, l.prevPeak)
}

// readUnits is the bytes of whole units that [a, a+n) touches.
func (d *Device) readUnits(a uintptr, n int) int64 {
	g := d.gran
	first, last := uint64(a)/g, (uint64(a)+uint64(n)-1)/g
	return int64((last - first + 1) * g)
}
