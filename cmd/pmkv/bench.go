package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/internal/ycsb"
	"github.com/braid-pm/braid/kv"
)

const benchUsage = `Loads -records records into a new store (YCSB's load phase) and runs the
core workloads on it (internal/ycsb: YCSB's CoreWorkload, keys
"user"+FNV-64 of the record number, scrambled zipfian 0.99 / latest /
uniform). One line per (workload, operation type): ops/s, mean, p50, p99,
p999 and max latency (HdrHistogram, ns precision), the durability mode and
the device. The store is a new directory under /dev/shm, removed at the
end, unless -dir names one (it must hold no store; it is kept, so that
pmkv check -dir can follow). E scans: the ordered index is on when E is
run (-ordered overrides). -verify judges every value read (dataintegrity:
correct / wrong / missing); any read not correct is exit status 1.
-sweep clients=LIST runs the workloads at each client count after one
load and prints throughput and p99 against clients; -plot draws that.`

type benchFlags struct {
	sf             *storeFlags
	workloads      string
	records, ops   int64
	duration       time.Duration
	value          byteSize
	clients        int
	distribution   string
	keyOrder       string
	zeroPadding    int
	verify, asJSON bool
	sweep          string
	plot           string
	seed           uint64
}

func (b *benchFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&b.workloads, "workloads", "a,b,c,d,e,f", "core workloads to run after the load, in order")
	fs.Int64Var(&b.records, "records", 100_000, "records to load (recordcount)")
	fs.Int64Var(&b.ops, "ops", 100_000, "operations per workload (operationcount; 0: -duration only)")
	fs.DurationVar(&b.duration, "duration", 0, "longest time per workload (0: -ops only)")
	b.value = 100
	fs.Var(&b.value, "value", "value size (at least 16 bytes)")
	fs.IntVar(&b.clients, "clients", 4, "client goroutines (threadcount)")
	fs.StringVar(&b.distribution, "distribution", "", "request distribution for every workload: uniform, zipfian, latest (default: each workload's)")
	fs.StringVar(&b.keyOrder, "keyorder", "hashed", "keys: hashed (user+FNV-64 of the number, YCSB's default) or ordered (user+number)")
	fs.IntVar(&b.zeroPadding, "zeropadding", 1, "pad key numbers with zeros to this many digits")
	fs.BoolVar(&b.verify, "verify", false, "verify every value read (correct / wrong / missing)")
	fs.BoolVar(&b.asJSON, "json", false, "print JSON")
	fs.StringVar(&b.sweep, "sweep", "", "clients=1,2,4,...: run the workloads at each client count")
	fs.StringVar(&b.plot, "plot", "", "with -sweep: draw throughput and p99 against clients to FILE.svg")
	fs.Uint64Var(&b.seed, "seed", 1, "seed of the clients' random streams")
}

// plan is a checked bench command line.
type plan struct {
	cfg       ycsb.Config
	workloads []ycsb.Workload
	sweep     []int
	run       ycsb.Run
	tempDir   string // the store's directory when the bench made it
}

func (b *benchFlags) check() (*plan, error) {
	p := &plan{}
	if err := b.sf.limits(); err != nil {
		return nil, err
	}
	for _, step := range []func(*plan) error{b.checkWorkloads, b.checkSizes, b.checkSweep, b.checkStore} {
		if err := step(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkWorkloads reads -workloads, -distribution, -keyorder, -ops and
// -duration, and decides the ordered index.
func (b *benchFlags) checkWorkloads(p *plan) error {
	for _, name := range strings.Split(b.workloads, ",") {
		name = strings.TrimSpace(name)
		if name == "" || name == ycsb.LoadPhase {
			continue // the load always runs
		}
		w, err := ycsb.Lookup(name)
		if err != nil {
			return usagef("-workloads: %v", err)
		}
		if b.distribution != "" {
			w.Distribution = b.distribution
		}
		p.workloads = append(p.workloads, w)
	}
	switch b.distribution {
	case "", ycsb.DistUniform, ycsb.DistZipfian, ycsb.DistLatest:
	default:
		return usagef("-distribution %q: want uniform, zipfian or latest", b.distribution)
	}
	if b.keyOrder != "hashed" && b.keyOrder != "ordered" {
		return usagef("-keyorder %q: want hashed or ordered", b.keyOrder)
	}
	switch {
	case b.ops < 0:
		return usagef("-ops %d: want 0 (use -duration) or more", b.ops)
	case b.duration < 0:
		return usagef("-duration %v is negative", b.duration)
	case b.ops == 0 && b.duration == 0 && len(p.workloads) > 0:
		return usagef("-ops 0 needs a -duration")
	}
	if !b.sf.given("ordered") {
		b.sf.ordered = slices.ContainsFunc(p.workloads, ycsb.Workload.Scans)
	}
	if !b.sf.ordered && slices.ContainsFunc(p.workloads, ycsb.Workload.Scans) {
		return usagef("workload E scans: it needs the ordered index (drop -ordered=false)")
	}
	p.run = ycsb.Run{Operations: b.ops, Duration: b.duration}
	return nil
}

// checkSizes reads -records, -clients, -value and -zeropadding into the
// YCSB configuration.
func (b *benchFlags) checkSizes(p *plan) error {
	switch {
	case b.records < 1:
		return usagef("-records %d: want 1 or more", b.records)
	case b.clients < 1 || b.clients > 1<<16:
		return usagef("-clients %d: want 1 to 65536", b.clients)
	case b.value < 16:
		return usagef("-value %d: want at least 16 bytes (each value carries its version and key number)", b.value)
	case b.zeroPadding < 1 || b.zeroPadding > 64:
		return usagef("-zeropadding %d: want 1 to 64", b.zeroPadding)
	}
	p.cfg = ycsb.Config{Records: b.records, ValueSize: int(b.value), Clients: b.clients, Verify: b.verify, Seed: b.seed,
		Keys: ycsb.KeyFormat{Ordered: b.keyOrder == "ordered", ZeroPadding: b.zeroPadding}}
	if err := p.cfg.Validate(); err != nil {
		return cli.UsageError{Msg: strings.TrimPrefix(err.Error(), "ycsb: "), Err: err}
	}
	if int(b.value) > b.sf.maxValue {
		return usagef("-value %d is over the store's limit of %d (%s)", b.value, b.sf.maxValue, b.sf.valueLimit)
	}
	return nil
}

// checkSweep reads -sweep and -plot.
func (b *benchFlags) checkSweep(p *plan) error {
	if b.sweep != "" {
		list, ok := strings.CutPrefix(b.sweep, "clients=")
		if !ok {
			return usagef("-sweep %q: want clients=N,N,... (e.g. clients=1,2,4,8)", b.sweep)
		}
		for _, s := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > 1<<16 {
				return usagef("-sweep: client count %q: want 1 to 65536", s)
			}
			p.sweep = append(p.sweep, n)
		}
		if len(p.workloads) == 0 {
			return usagef("-sweep needs a workload to run (-workloads)")
		}
	}
	if b.plot != "" {
		if p.sweep == nil {
			return usagef("-plot draws a -sweep: give -sweep clients=...")
		}
		if !strings.HasSuffix(b.plot, ".svg") {
			return usagef("-plot %s: want a FILE.svg", b.plot)
		}
		if err := checkDir("-plot "+b.plot+": directory ", dirOf(b.plot), false); err != nil {
			return err
		}
	}
	return nil
}

// checkStore picks the store bench loads: a temporary one, or an empty
// -dir.
func (b *benchFlags) checkStore(p *plan) error {
	if b.sf.dir == "" && b.sf.devices == "" {
		d, err := os.MkdirTemp(benchTempRoot(), "pmkv-bench-")
		if err != nil {
			return usagef("temporary store under %s: %v", benchTempRoot(), err)
		}
		p.tempDir, b.sf.dir = d, d
	} else if o, err := b.sf.options(true); err != nil {
		return err
	} else if hasFiles(o.Devices[0]) {
		return usagef("%s holds a store: bench loads a new one (give an empty or new -dir)", o.Devices[0])
	}
	return nil
}

// benchTempRoot is where bench makes its temporary store when no -dir is
// given: shmDir. Tests point it at a directory of their own, so that what
// they find left there is theirs and not another process's.
var benchTempRoot = shmDir

func shmDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:max(i, 1)]
	}
	return "."
}

// benchReport is -json's output.
type benchReport struct {
	Info    ycsb.Info      `json:"info"`
	Config  ycsb.Config    `json:"config"`
	Results []*ycsb.Result `json:"results"`
}

func benchCommand(sf *storeFlags) cli.Command {
	b := &benchFlags{sf: sf}
	return cli.Command{Name: "bench", Short: "YCSB core workloads on kv", Long: benchUsage, Flags: b.register,
		Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return b.run(ctx, args, stdout, stderr)
		}}
}

func (b *benchFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if err := cli.Args(args, 0, "no arguments"); err != nil {
		return err
	}
	p, err := b.check()
	if err != nil {
		return err
	}
	if p.tempDir != "" {
		defer os.RemoveAll(p.tempDir)
	}
	b.sf.stderr = stderr
	o, err := b.sf.options(true)
	if err != nil {
		return err
	}
	o.ExpectedKeys = int(b.records) // the load phase never grows the index
	s, err := openStore(o)
	if err != nil {
		b.sf.unmake()
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close (checkpoint): %w", cerr)
		}
	}()
	info := kvInfo(o, s, b.sf.emulated)
	bar := b.sf.progress.NewBar(stderr)
	p.cfg.Progress = bar.Set
	bench, err := ycsb.New(storeDB{s}, p.cfg)
	if err != nil {
		return cli.UsageError{Msg: err.Error(), Err: err}
	}
	rep := &benchReport{Info: info, Config: p.cfg}
	var table *ycsb.Table
	if !b.asJSON && p.sweep == nil {
		table = ycsb.NewTable(stdout)
	}
	add := func(res *ycsb.Result) {
		rep.Results = append(rep.Results, res)
		if table != nil {
			table.Add(info, res)
		}
	}
	defer func() {
		if table != nil {
			table.Flush()
		}
	}()
	bar.Start("load", p.cfg.Records)
	res, err := bench.Load(ctx)
	bar.Stop()
	if res != nil {
		add(res)
	}
	if err != nil {
		return err
	}
	if p.sweep != nil {
		return runSweep(ctx, bench, p, b, info, bar, rep, stdout)
	}
	if err := runWorkloads(ctx, bench, p, bar, add); err != nil {
		return err
	}
	if table != nil {
		table.Flush()
		table = nil
	}
	if b.asJSON {
		if err := printJSON(stdout, rep); err != nil {
			return err
		}
	}
	return verdict(rep.Results, b.verify, stdout, b.asJSON)
}

// runWorkloads runs the plan's workloads in order, each result to add.
func runWorkloads(ctx context.Context, bench *ycsb.Bench, p *plan, bar *cli.Bar, add func(*ycsb.Result)) error {
	for _, w := range p.workloads {
		bar.Start(w.Name, p.run.Operations)
		res, err := bench.Run(ctx, w, p.run)
		bar.Stop()
		if res != nil {
			add(res)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// verdict prints -verify's counts and fails when a read was not correct.
func verdict(results []*ycsb.Result, verify bool, stdout io.Writer, quiet bool) error {
	if !verify {
		return nil
	}
	var all ycsb.Verify
	for _, r := range results {
		if r.Verify != nil {
			all.Correct += r.Verify.Correct
			all.Wrong += r.Verify.Wrong
			all.Missing += r.Verify.Missing
		}
	}
	if !quiet {
		fmt.Fprintf(stdout, "verify: %d correct, %d wrong, %d missing\n", all.Correct, all.Wrong, all.Missing)
	}
	if !all.AllCorrect() {
		return fmt.Errorf("verify: %d wrong and %d missing of %d reads", all.Wrong, all.Missing, all.Correct+all.Wrong+all.Missing)
	}
	return nil
}

func kvInfo(o *kv.Options, s store, emulated string) ycsb.Info {
	dur := "fence per batch"
	if o.NoBatching {
		dur = "fence per put"
	}
	if o.PMem {
		dur += ", PMem path"
	} else {
		dur += ", msync"
	}
	dev := o.Devices[0]
	if onTmpfs(dev) {
		dev += " (tmpfs)"
	}
	if len(o.Devices) > 1 {
		dev += fmt.Sprintf(" +%d devices", len(o.Devices)-1)
	}
	if w := s.Stats().Workers; w > 0 {
		dev += fmt.Sprintf(", %d workers", w)
	}
	if emulated != "" {
		dev += ", emulated " + emulated
	}
	return ycsb.Info{Engine: "kv", Durability: dur, Device: dev}
}

// storeDB is the command's store as the driver's DB.
type storeDB struct{ s store }

func (d storeDB) Put(k, v []byte) error { return d.s.Put(k, v) }
func (d storeDB) Get(k []byte) ([]byte, error) {
	v, err := d.s.Get(k)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("%w (%w)", ycsb.ErrNotFound, err)
	}
	return v, err
}
func (d storeDB) Delete(k []byte) error { return d.s.Delete(k) }
func (d storeDB) Scan(from []byte, n int, fn func(k, v []byte) bool) error {
	seen := 0
	return d.s.Scan(from, nil, func(k, v []byte) bool {
		seen++
		return fn(k, v) && seen < n
	})
}
func (d storeDB) Close() error { return nil } // the command closes the store
