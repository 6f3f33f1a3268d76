package ycsb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Config is a benchmark's fixed part: the records, their keys and values,
// how many clients, and whether reads are verified.
type Config struct {
	Records   int64     `json:"records"`    // recordcount: key numbers [0, Records) are loaded
	ValueSize int       `json:"value_size"` // bytes per value, at least MinValueSize
	Keys      KeyFormat `json:"keys"`       // insertorder, zeropadding
	Clients   int       `json:"clients"`    // client goroutines (threadcount)
	Verify    bool      `json:"verify"`     // judge every value read (dataintegrity)
	Seed      uint64    `json:"seed"`       // of the clients' random streams (client i: Seed+i)
	// Progress, when set, is called about every 100 ms from one goroutine
	// with the work done and the total: operations, or milliseconds of a
	// run bounded by time only.
	Progress func(done, total int64) `json:"-"`
}

// Validate checks c.
func (c *Config) Validate() error {
	switch {
	case c.Records < 1:
		return fmt.Errorf("ycsb: %d records: want at least 1", c.Records)
	case c.Records > 1<<40:
		return fmt.Errorf("ycsb: %d records: want at most 2^40", c.Records)
	case c.ValueSize < MinValueSize:
		return fmt.Errorf("ycsb: value size %d: want at least %d bytes (the version and key number the values carry)", c.ValueSize, MinValueSize)
	case c.ValueSize > 64<<20:
		return fmt.Errorf("ycsb: value size %d: want at most 64 MiB", c.ValueSize)
	case c.Clients < 1 || c.Clients > 1<<16:
		return fmt.Errorf("ycsb: %d clients: want 1 to 65536", c.Clients)
	case c.Keys.ZeroPadding < 0 || c.Keys.ZeroPadding > 20:
		return fmt.Errorf("ycsb: zero padding %d: want 0 to 20 digits", c.Keys.ZeroPadding)
	}
	return nil
}

// Bench runs YCSB phases against one DB: Load, then any number of Runs,
// which share the key space (a run's inserts add keys after the loaded
// ones, as the transaction insert sequence of CoreWorkload) and, with
// Verify, the versions of every key.
type Bench struct {
	db      DB
	cfg     Config
	vers    versions
	inserts *Acked // transactioninsertkeysequence
	loaded  bool
}

// New returns a Bench over db.
func New(db DB, cfg Config) (*Bench, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Bench{db: db, cfg: cfg, inserts: NewAcked(cfg.Records)}, nil
}

// Run bounds a transaction phase: Operations in all (operationcount),
// or until Duration has passed (maxexecutiontime), whichever comes first;
// at least one of them is set.
type Run struct {
	Operations int64
	Duration   time.Duration
	Clients    int // 0: Config.Clients
}

// Result is one phase's outcome.
type Result struct {
	Workload    string        `json:"workload"`
	Clients     int           `json:"clients"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	Operations  int64         `json:"operations"` // transactions (a read-modify-write is one)
	Throughput  float64       `json:"ops_per_sec"`
	Ops         []OpResult    `json:"ops"`
	Verify      *Verify       `json:"verify,omitempty"`
	Interrupted bool          `json:"interrupted,omitempty"`
}

// OpResult is one operation type's figures (latencies in microseconds,
// from an HdrHistogram of nanoseconds with 3 significant digits).
type OpResult struct {
	Op        string  `json:"op"`
	Count     int64   `json:"count"`
	OpsPerSec float64 `json:"ops_per_sec"`
	MeanUs    float64 `json:"mean_us"`
	P50Us     float64 `json:"p50_us"`
	P99Us     float64 `json:"p99_us"`
	P999Us    float64 `json:"p999_us"`
	MaxUs     float64 `json:"max_us"`
}

// Latency histograms: 1 ns to 100 s, 3 significant digits.
const histMax = int64(100 * time.Second)

// client is one goroutine's state.
type client struct {
	b      *Bench
	r      *rand.Rand
	hist   [numOps]*hdrhistogram.Histogram
	verify Verify
	key    []byte
	val    []byte
	// keychooser
	uni    Uniform
	zipf   ScrambledZipfian
	latest *Latest
	scans  Uniform
	w      *Workload
}

func (b *Bench) newClient(i int) *client {
	c := &client{b: b, r: rand.New(rand.NewPCG(b.cfg.Seed+uint64(i), 0x5ca1ab1e))}
	c.val = make([]byte, 0, b.cfg.ValueSize)
	return c
}

func (c *client) record(op Op, d time.Duration) {
	h := c.hist[op]
	if h == nil {
		h = hdrhistogram.New(1, histMax, 3)
		c.hist[op] = h
	}
	_ = h.RecordValue(min(max(int64(d), 1), histMax))
}

// phase is what Load and Run share: start the clients, count the work,
// report progress, stop on the first error or on ctx.
type phase struct {
	done    atomic.Int64
	stop    atomic.Bool
	errOnce sync.Once
	err     error
}

func (p *phase) fail(err error) {
	p.errOnce.Do(func() { p.err = err })
	p.stop.Store(true)
}

// execute runs body in cfg.Clients goroutines until it returns false or
// the phase stops, and gathers the result.
func (b *Bench) execute(ctx context.Context, name string, nclients int, total int64, dur time.Duration,
	body func(c *client, p *phase) bool) (*Result, error) {
	var p phase
	stopCtx := context.AfterFunc(ctx, func() { p.stop.Store(true) })
	defer stopCtx()
	clients := make([]*client, nclients)
	for i := range clients {
		clients[i] = b.newClient(i)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for !p.stop.Load() && body(c, &p) {
			}
		})
	}
	finished := make(chan struct{})
	var pw sync.WaitGroup
	pw.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-finished:
				return
			case <-tick.C:
				if dur > 0 && time.Since(start) >= dur {
					p.stop.Store(true)
				}
				if b.cfg.Progress != nil {
					if total > 0 {
						b.cfg.Progress(p.done.Load(), total)
					} else {
						b.cfg.Progress(min(time.Since(start), dur).Milliseconds(), dur.Milliseconds())
					}
				}
			}
		}
	})
	wg.Wait()
	elapsed := time.Since(start)
	close(finished)
	pw.Wait()
	res := b.gather(name, clients, elapsed, p.done.Load())
	res.Interrupted = ctx.Err() != nil
	if p.err != nil {
		return res, p.err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

func (b *Bench) gather(name string, clients []*client, elapsed time.Duration, done int64) *Result {
	res := &Result{Workload: name, Clients: len(clients), Elapsed: elapsed, Operations: done}
	var v Verify
	for op := range numOps {
		var h *hdrhistogram.Histogram
		for _, c := range clients {
			if c.hist[op] == nil {
				continue
			}
			if h == nil {
				h = hdrhistogram.New(1, histMax, 3)
			}
			h.Merge(c.hist[op])
		}
		if h == nil {
			continue
		}
		us := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 }
		n := h.TotalCount()
		res.Ops = append(res.Ops, OpResult{Op: op.String(), Count: n,
			OpsPerSec: float64(n) / elapsed.Seconds(), MeanUs: h.Mean() / 1e3,
			P50Us: us(50), P99Us: us(99), P999Us: us(99.9), MaxUs: float64(h.Max()) / 1e3})
	}
	for _, c := range clients {
		v.merge(c.verify)
	}
	if b.cfg.Verify {
		res.Verify = &v
	}
	res.Throughput = float64(res.Operations) / elapsed.Seconds()
	return res
}

// Load inserts every record, key numbers 0..Records-1 in order, spread
// over the clients (YCSB's load phase).
func (b *Bench) Load(ctx context.Context) (*Result, error) {
	if b.loaded {
		return nil, errors.New("ycsb: already loaded")
	}
	next := NewCounter(0)
	res, err := b.execute(ctx, LoadPhase, b.cfg.Clients, b.cfg.Records, 0, func(c *client, p *phase) bool {
		n := next.Next()
		if n >= b.cfg.Records {
			return false
		}
		if err := c.write(Insert, n); err != nil {
			p.fail(err)
			return false
		}
		p.done.Add(1)
		return true
	})
	if err == nil {
		b.loaded = true
	}
	return res, err
}

// Run runs workload w after Load.
func (b *Bench) Run(ctx context.Context, w Workload, run Run) (*Result, error) {
	if !b.loaded {
		return nil, errors.New("ycsb: Run before Load")
	}
	if run.Clients < 0 || run.Clients > 1<<16 {
		return nil, fmt.Errorf("ycsb: %d clients: want 1 to 65536", run.Clients)
	}
	if run.Operations < 0 || run.Duration < 0 || (run.Operations == 0 && run.Duration == 0) {
		return nil, fmt.Errorf("ycsb: run of %d operations for %v: want an operation count, a duration or both", run.Operations, run.Duration)
	}
	if w.Scans() && w.MaxScanLength < 1 {
		return nil, fmt.Errorf("ycsb: workload %s scans with a maximum length of %d", w.Name, w.MaxScanLength)
	}
	// CoreWorkload sizes the zipfian for the inserts it expects (twice
	// the insert proportion of the operations; of the records when only
	// a duration is given).
	expected := run.Operations
	if expected == 0 {
		expected = b.cfg.Records
	}
	expectedNew := int64(float64(expected) * w.Insert * 2)
	zipf := NewScrambledZipfian(0, b.cfg.Records+expectedNew)
	var latestBase Zipfian
	if w.Distribution == DistLatest {
		latestBase = NewZipfian(0, max(b.inserts.Last(), 1)-1, ZipfianConstant)
	}
	clients := run.Clients
	if clients == 0 {
		clients = b.cfg.Clients
	}
	var claimed atomic.Int64
	return b.execute(ctx, w.Name, clients, run.Operations, run.Duration, func(c *client, p *phase) bool {
		if c.w == nil {
			c.w = &w
			c.uni = Uniform{0, b.cfg.Records - 1}
			c.zipf = zipf
			c.scans = Uniform{1, int64(max(w.MaxScanLength, 1))}
			if w.Distribution == DistLatest {
				c.latest = NewLatest(b.inserts, latestBase)
			}
		}
		if run.Operations > 0 && claimed.Add(1) > run.Operations {
			return false
		}
		if err := c.transaction(); err != nil {
			p.fail(err)
			return false
		}
		p.done.Add(1)
		return true
	})
}

// nextKey is CoreWorkload.nextKeynum: a key number of the distribution
// that has been acknowledged.
func (c *client) nextKey() int64 {
	for {
		var n int64
		switch c.w.Distribution {
		case DistUniform:
			n = c.uni.Next(c.r)
		case DistLatest:
			n = c.latest.Next(c.r)
		default:
			n = c.zipf.Next(c.r)
		}
		if n <= c.b.inserts.Last() {
			return n
		}
	}
}

func (c *client) transaction() error {
	switch op := c.w.pick(c.r.Float64()); op {
	case Read:
		return c.read(c.nextKey(), true)
	case Update:
		return c.write(Update, c.nextKey())
	case Insert:
		n := c.b.inserts.Next()
		if err := c.write(Insert, n); err != nil {
			return err
		}
		if !c.b.inserts.Acknowledge(n) {
			return fmt.Errorf("ycsb: insert %d acknowledged more than %d inserts after the oldest one still in flight", n, ackWindow)
		}
		return nil
	case Scan:
		return c.scan(c.nextKey(), int(c.scans.Next(c.r)))
	default:
		n := c.nextKey()
		start := time.Now()
		if err := c.read(n, true); err != nil {
			return err
		}
		if err := c.write(Update, n); err != nil {
			return err
		}
		c.record(ReadModifyWrite, time.Since(start))
		return nil
	}
}

// write puts a new version of key number n.
func (c *client) write(op Op, n int64) error {
	kv := c.b.vers.at(n)
	if c.b.cfg.Verify {
		kv.lock()
		defer kv.unlock()
	}
	v := kv.issued.Add(1)
	c.key = c.b.cfg.Keys.Append(c.key[:0], n)
	c.val = AppendValue(c.val[:0], n, v, c.b.cfg.ValueSize)
	start := time.Now()
	err := c.b.db.Put(c.key, c.val)
	d := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, c.key, err)
	}
	c.record(op, d)
	kv.ack(v)
	return nil
}

// read gets key number n and, with Verify, judges the value.
func (c *client) read(n int64, timed bool) error {
	kv := c.b.vers.at(n)
	lo := kv.acked.Load()
	c.key = c.b.cfg.Keys.Append(c.key[:0], n)
	start := time.Now()
	val, err := c.b.db.Get(c.key)
	d := time.Since(start)
	found := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("READ %s: %w", c.key, err)
	}
	if timed {
		c.record(Read, d)
	}
	if c.b.cfg.Verify {
		c.verify.Add(judge(c.b.cfg.Keys, n, c.key, val, found, lo, kv.issued.Load()))
	}
	return nil
}

// scan reads up to length records from key number n's key. With Verify,
// each record must be a version of the key it is stored under that was
// handed out (not older than one acknowledged: the scan cannot know which
// keys it will meet before it starts).
func (c *client) scan(n int64, length int) error {
	c.key = c.b.cfg.Keys.Append(c.key[:0], n)
	start := time.Now()
	var bad Verify
	err := c.b.db.Scan(c.key, length, func(key, value []byte) bool {
		if c.b.cfg.Verify {
			_, kn, ok := decodeValue(value)
			if !ok {
				bad.Add(Wrong)
				return true
			}
			bad.Add(judge(c.b.cfg.Keys, kn, key, value, true, 0, c.b.vers.at(kn).issued.Load()))
		}
		return true
	})
	d := time.Since(start)
	if err != nil {
		return fmt.Errorf("SCAN %s: %w", c.key, err)
	}
	c.record(Scan, d)
	c.verify.merge(bad)
	return nil
}
