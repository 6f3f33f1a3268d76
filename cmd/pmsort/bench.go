package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/sort"
	"github.com/braid-pm/braid/sort/sortbench"
)

const benchUsage = `[-n RECORDS] [-dir DIR] [-runs N] [-modes ems,onepass,mergepass] [-mem SIZE] [-mpmem SIZE]
       [-gnu] [-cold] [-json] [-tmp DIR] [-device NAME|FILE] [-sweep-writers 1,2,4,8] [-plot FILE.svg]
       [pool and buffer flags]

Generates RECORDS gensort records in DIR (default /dev/shm), sorts them with
EMS, OnePass and MergePass (forced by the small budget -mpmem), validates
every output (order, record count, checksum against the input's) and
prints the best, median and spread of -runs runs with the ratio to EMS.
Files are written through the PMem instruction path (as BRAID_FORCE_PMEM=1;
on tmpfs nothing is durable anyway). Each mode keeps one Sorter, so its
buffers are reused from run to run; the previous output is removed before
each timed run, as for GNU sort. -gnu also times
'LC_ALL=C sort -S 4G --parallel=2' and pmsort on the ASCII form of the same
records; -cold times 'pmsort sort -mode onepass' as a fresh process.

-device runs every sort on an emulated device (persist's profiles, e.g.
optane-1dimm; a fresh device per mode); a mode named with -overlap
(onepass-overlap) overlaps reads and writes; -sweep-writers times OnePass
once more for each writer pool size; -plot draws the best runs' phases as
stacked bars, in SVG and, beside it, PNG.`

type benchResult struct {
	Name    string    `json:"name"`
	Seconds []float64 `json:"seconds"`
	Best    float64   `json:"best"`
	Median  float64   `json:"median"`
	Spread  float64   `json:"spread"` // max - min
	GBps    float64   `json:"gbps"`   // bytes / best
	VsEMS   float64   `json:"vs_ems"` // EMS best / this best (0: no EMS)
	// VsGNU, for pmsort on the ASCII records (-gnu): GNU sort's best /
	// this best.
	VsGNU  float64          `json:"vs_gnu,omitempty"`
	Valid  int              `json:"valid"` // outputs validated
	Report *sort.Report     `json:"report,omitempty"`
	Note   string           `json:"note,omitempty"`
	Phases []sort.PhaseTime `json:"-"`
}

func (r *benchResult) finish(bytes int64) {
	s := slices.Clone(r.Seconds)
	slices.Sort(s)
	r.Best, r.Median, r.Spread = s[0], s[len(s)/2], s[len(s)-1]-s[0]
	if len(s)%2 == 0 {
		r.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	r.GBps = float64(bytes) / r.Best / 1e9
}

// benchConfig is one pmsort bench, from its flags.
type benchConfig struct {
	n          int64
	bytes      int64
	dir        string
	runs       int
	plan       []benchMode
	gnu, cold  bool
	asJSON     bool
	keep       bool
	cpuProfile string
	mem, mpmem byteSize // the budgets of EMS and OnePass, and of MergePass
	sf         sortFlags
	sweep      []int  // -sweep-writers
	plot       string // -plot
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseBench(args, stdout)
	if err != nil {
		return err
	}
	var profFile *os.File
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return usagef("-cpuprofile: %v", err)
		}
		defer f.Close()
		profFile = f
	}
	log := func(format string, a ...any) {
		if !c.asJSON {
			fmt.Fprintf(stdout, format, a...)
		}
	}
	base := filepath.Join(c.dir, fmt.Sprintf("pmsort-bench-%d", os.Getpid()))
	in, out := base+".in", base+".out"
	defer os.Remove(out)
	if !c.keep {
		defer os.Remove(in)
	}
	t := time.Now()
	if _, err := sortbench.Generate(ctx, in, sortbench.GenOptions{Count: uint64(c.n)}, true); err != nil {
		return err
	}
	log("generated %d records (%s) in %s in %.3f s\n", c.n, humanBytes(c.bytes), in, time.Since(t).Seconds())
	inSum, err := sortbench.Validate(ctx, in, sortbench.ValidateOptions{})
	if err != nil {
		return err
	}
	if profFile != nil {
		if err := pprof.StartCPUProfile(profFile); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	results, err := c.time(ctx, base, in, out, inSum, log, stderr)
	if err != nil {
		return err
	}
	compare(results)
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
		return c.drawPlot(io.Discard, results)
	}
	printBench(stdout, results, inSum)
	return c.drawPlot(stdout, results)
}

// parseBench parses and checks bench's flags, and every mode's options,
// before anything is generated.
func parseBench(args []string, stdout io.Writer) (*benchConfig, error) {
	c := &benchConfig{}
	fs := newFlags("bench", benchUsage, stdout)
	fs.Int64Var(&c.n, "n", 10_000_000, "records (100 bytes each)")
	fs.StringVar(&c.dir, "dir", "/dev/shm", "directory for input and outputs (and run files, without -tmp)")
	fs.IntVar(&c.runs, "runs", 3, "runs per mode (best, median and spread are reported)")
	modes := fs.String("modes", "ems,onepass,mergepass", "modes to time, in order")
	fs.BoolVar(&c.gnu, "gnu", false, "also time GNU sort on the ASCII form of the records")
	fs.BoolVar(&c.cold, "cold", false, "also time 'pmsort sort -mode onepass' as a fresh process")
	fs.BoolVar(&c.asJSON, "json", false, "print results as JSON")
	fs.BoolVar(&c.keep, "keep", false, "keep the generated input files")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed sorts to this file")
	fs.Var(&c.mpmem, "mpmem", "budget that forces MergePass (0: a quarter of the IndexMap plus 8MiB)")
	sweep := fs.String("sweep-writers", "", "also time OnePass with each of these writer pool sizes, e.g. 1,2,3,4,6,8,16")
	fs.StringVar(&c.plot, "plot", "", "draw the phases of the best runs to this SVG file (and a PNG beside it)")
	c.sf.register(fs, true)
	if err := cli.ParseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, usagef("unexpected arguments: %v", fs.Args())
	}
	if err := pathFlags(fs, "dir", "tmp", "profile", "cpuprofile", "plot"); err != nil {
		return nil, err
	}
	if err := c.parseDeviceFlags(*sweep); err != nil {
		return nil, err
	}
	if c.n < 1 {
		return nil, usagef("-n %d: want at least 1 record", c.n)
	}
	if c.runs < 1 {
		return nil, usagef("-runs %d: want at least 1", c.runs)
	}
	hi, size := bits.Mul64(uint64(c.n), 100)
	if hi != 0 || size > 1<<62 {
		return nil, usagef("-n %d: %d records of 100 bytes do not fit in a file", c.n, c.n)
	}
	c.bytes = int64(size)
	for _, m := range strings.Split(*modes, ",") {
		name, overlap := strings.CutSuffix(strings.TrimSpace(m), "-overlap")
		var bm benchMode
		switch name {
		case "ems":
			bm = benchMode{"EMS", sort.EMS, false, 0}
		case "onepass":
			bm = benchMode{"OnePass", sort.OnePass, false, 0}
		case "mergepass":
			bm = benchMode{"MergePass", sort.MergePass, false, 0}
		default:
			return nil, usagef("-modes: unknown mode %q (want ems, onepass, mergepass, each with -overlap or not)", m)
		}
		if overlap {
			bm.name, bm.overlap = bm.name+"-overlap", true
		}
		c.plan = append(c.plan, bm)
	}
	c.plan = append(c.plan, c.sweepModes()...)
	if err := benchSpace(c.dir, c.sf.tmp, c.bytes, c.gnu); err != nil {
		return nil, err
	}
	c.sf.forcePMem = true // on tmpfs: the PMem instruction path, as BRAID_FORCE_PMEM=1
	c.mem = c.sf.mem
	if c.mem == 0 {
		c.mem = byteSize(max(4*sort.MinMemBudget, c.bytes/2))
	}
	if c.mpmem == 0 {
		c.mpmem = byteSize(max(sort.MinMemBudget, c.n*16/4+8<<20))
	}
	return c, c.checkModes()
}

// modeOptions are the sorter's options for mode m: its budget is -mpmem
// for MergePass, -mem for the others.
func (c *benchConfig) modeOptions(m benchMode) (*sort.Options, error) {
	c.sf.mode, c.sf.mem = string(m.mode), c.mem
	if m.mode == sort.MergePass {
		c.sf.mem = c.mpmem
	}
	sf := c.sf
	sf.overlap = sf.overlap || m.overlap
	if m.writers > 0 {
		sf.writers = m.writers
	}
	return sf.options()
}

// checkModes builds every mode's sorter once, so that a budget too small
// for one is bad usage before anything is generated.
func (c *benchConfig) checkModes() error {
	for _, m := range c.plan {
		flagName := "-mem"
		if m.mode == sort.MergePass {
			flagName = "-mpmem"
		}
		o, err := c.modeOptions(m)
		if errors.Is(err, sort.ErrBudget) {
			return usagef("%s %d (the budget of %s): %s", flagName, int64(c.sf.mem), m.name, message(err))
		}
		if err != nil {
			return err
		}
		s, err := sort.NewSorter(o)
		if err != nil {
			return usagef("%s %d (the budget of %s): %s", flagName, int64(c.sf.mem), m.name, message(err))
		}
		s.Close()
	}
	return nil
}

// time runs every mode of the plan (and -cold, -gnu) and returns their
// results, finished.
func (c *benchConfig) time(ctx context.Context, base, in, out string, inSum *sortbench.Summary, log func(string, ...any), stderr io.Writer) ([]*benchResult, error) {
	var results []*benchResult
	for _, m := range c.plan {
		o, err := c.modeOptions(m)
		if err != nil {
			return nil, err
		}
		res, err := benchSorter(ctx, o, in, out, c.runs, inSum)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		res.Name = m.name
		results = append(results, res)
		log("%-9s %s  (%d/%d outputs valid)\n", m.name, secondsList(res.Seconds), res.Valid, len(res.Seconds))
	}
	if c.cold {
		res, err := benchCold(ctx, in, out, c.runs, inSum, int64(c.mem), stderr)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
		log("%-9s %s  (%d/%d outputs valid)\n", "cold", secondsList(res.Seconds), res.Valid, len(res.Seconds))
	}
	if c.gnu {
		more, err := benchGNU(ctx, base, c.n, c.runs, &c.sf, c.mem, log, stderr)
		if err != nil {
			return nil, err
		}
		results = append(results, more...)
	}
	for _, r := range results {
		r.finish(c.bytes)
	}
	return results, nil
}

// compare fills each result's ratio to EMS, and OnePass-ascii's to GNU
// sort.
func compare(results []*benchResult) {
	ems := 0.0
	var gnuRes, asciiRes *benchResult
	for _, r := range results {
		switch r.Name {
		case "EMS":
			ems = r.Best
		case "GNU sort":
			gnuRes = r
		case "OnePass-ascii":
			asciiRes = r
		}
	}
	for _, r := range results {
		if ems > 0 {
			r.VsEMS = ems / r.Best
		}
	}
	if gnuRes != nil && asciiRes != nil && asciiRes.Best > 0 {
		asciiRes.VsGNU = gnuRes.Best / asciiRes.Best
	}
}

// printBench prints the results table, the ratio to GNU sort, and the
// best runs' phases.
func printBench(stdout io.Writer, results []*benchResult, inSum *sortbench.Summary) {
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sorter\tbest s\tmedian s\tspread s\tGB/s\tvs EMS\trun files\tvalid\tnote\t")
	var gnuRes, asciiRes *benchResult
	for _, r := range results {
		switch r.Name {
		case "GNU sort":
			gnuRes = r
		case "OnePass-ascii":
			asciiRes = r
		}
		runsCol := "-"
		if r.Report != nil {
			runsCol = fmt.Sprint(r.Report.Runs)
		}
		vs := "-"
		if r.VsEMS > 0 {
			vs = fmt.Sprintf("%.2fx", r.VsEMS)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.2f\t%s\t%s\t%d/%d\t%s\t\n",
			r.Name, r.Best, r.Median, r.Spread, r.GBps, vs, runsCol, r.Valid, len(r.Seconds), r.Note)
	}
	tw.Flush()
	if asciiRes != nil && asciiRes.VsGNU > 0 {
		fmt.Fprintf(stdout, "\nOnePass on the ASCII records: %.2fx GNU sort's speed (best runs), %.2fx (medians).\n",
			asciiRes.VsGNU, gnuRes.Median/asciiRes.Median)
	}
	fmt.Fprintf(stdout, "\nEvery output was validated: in order, %s records and checksum %s, the input's.\n",
		inSum.Records, inSum.Checksum.Hex())
	fmt.Fprintln(stdout)
	for _, r := range results {
		if r.Report == nil {
			continue
		}
		fmt.Fprintf(stdout, "%s best run, phases (s):", r.Name)
		for _, p := range r.Report.Phases {
			fmt.Fprintf(stdout, "  %s %.3f", p.Name, p.Seconds)
		}
		fmt.Fprintf(stdout, "\n  budget %s, buffers %s, pools %d/%d/%d (readers/writers/sorters, %s)\n",
			humanBytes(r.Report.MemBudget), humanBytes(r.Report.BufferBytes),
			r.Report.Readers, r.Report.Writers, r.Report.Sorters, r.Report.PoolsFrom)
	}
	for _, r := range results {
		if r.Report != nil {
			fmt.Fprintf(stdout, "output mapping: %s\n", r.Report.Mapping)
			break
		}
	}
}

type benchMode struct {
	name    string
	mode    sort.Mode
	overlap bool // reads and writes overlapped
	writers int  // writer pool size (-sweep-writers); 0: the flags'
}

// benchSpace fails fast when dir (and tmp) is not a writable directory
// (bad usage) or cannot hold the files the bench writes: the input, an output and run files of about the input's size at
// a time (plus the ASCII input and output with -gnu).
func benchSpace(dir, tmp string, size int64, gnu bool) error {
	if err := checkDirPath("-dir ", dir); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	need, needTmp := 3*size, int64(0)
	if gnu {
		need += 2 * size
	}
	if tmp != "" {
		if err := checkDirPath("-tmp ", tmp); err != nil {
			return err
		}
		ts, err := os.Stat(tmp)
		if err != nil {
			return err
		}
		if sameDevice(st, ts) {
			// Same file system: one budget.
		} else {
			need -= size
			needTmp = size
		}
	}
	free, err := sortbench.FreeSpace(dir)
	if err != nil {
		return err
	}
	if need > free {
		return fmt.Errorf("%w: the bench needs about %s in %s (input, output and run files of %s each), it has %s free",
			sort.ErrNoSpace, humanBytes(need), dir, humanBytes(size), humanBytes(free))
	}
	if needTmp > 0 {
		if free, err = sortbench.FreeSpace(tmp); err != nil {
			return err
		}
		if needTmp > free {
			return fmt.Errorf("%w: the run files need about %s in %s, it has %s free",
				sort.ErrNoSpace, humanBytes(needTmp), tmp, humanBytes(free))
		}
	}
	return nil
}

func sameDevice(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

func secondsList(s []float64) string {
	out := ""
	for _, v := range s {
		out += fmt.Sprintf(" %.3f", v)
	}
	return out
}

// benchSorter sorts in -> out runs times with one Sorter (buffers reused,
// as a long-running service would) and validates every output.
func benchSorter(ctx context.Context, o *sort.Options, in, out string, runs int, inSum *sortbench.Summary) (*benchResult, error) {
	s, err := sort.NewSorter(o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &benchResult{}
	for i := 0; i < runs; i++ {
		if err := removeOutput(out); err != nil {
			return nil, err
		}
		rep, err := s.Sort(ctx, in, out)
		if err != nil {
			return nil, err
		}
		if err := checkOutput(ctx, out, inSum, o.Format); err != nil {
			return nil, err
		}
		res.Valid++
		if res.Report == nil || rep.Seconds < res.Report.Seconds {
			res.Report = rep
		}
		res.Seconds = append(res.Seconds, rep.Seconds)
	}
	return res, nil
}

// removeOutput removes the previous output before a timed run (as for
// GNU sort): every mode then creates its output the same way.
func removeOutput(out string) error {
	if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func checkOutput(ctx context.Context, out string, inSum *sortbench.Summary, f sort.Format) error {
	s, err := sortbench.Validate(ctx, out, sortbench.ValidateOptions{Format: f})
	if err != nil {
		return err
	}
	if !s.OK() {
		return fmt.Errorf("output %s has %s unordered records", out, s.Unordered)
	}
	return samePermutation(inSum, s)
}

// benchCold runs 'pmsort sort -mode onepass' as a fresh process.
func benchCold(ctx context.Context, in, out string, runs int, inSum *sortbench.Summary, mem int64, stderr io.Writer) (*benchResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	res := &benchResult{Name: "OnePass-cold", Note: "fresh pmsort process"}
	for i := 0; i < runs; i++ {
		if err := removeOutput(out); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, exe, "sort", "-mode", "onepass", "-mem", fmt.Sprint(mem), "-force-pmem", "-progress", "off", "-i", in, "-o", out)
		cmd.Stdout = io.Discard
		cmd.Stderr = stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("pmsort sort: %w", err)
		}
		res.Seconds = append(res.Seconds, time.Since(t).Seconds())
		if err := checkOutput(ctx, out, inSum, sort.Gensort); err != nil {
			return nil, err
		}
		res.Valid++
	}
	return res, nil
}

// benchGNU times GNU sort on the ASCII records and pmsort OnePass on the
// same file.
func benchGNU(ctx context.Context, base string, n int64, runs int, sf *sortFlags, mem byteSize, log func(string, ...any), stderr io.Writer) ([]*benchResult, error) {
	gnuSort, err := exec.LookPath("sort")
	if err != nil {
		return nil, errors.New("GNU sort not found")
	}
	in, out := base+".ascii", base+".ascii.out"
	defer os.Remove(in)
	defer os.Remove(out)
	if _, err := sortbench.Generate(ctx, in, sortbench.GenOptions{Count: uint64(n), ASCII: true}, true); err != nil {
		return nil, err
	}
	inSum, err := sortbench.Validate(ctx, in, sortbench.ValidateOptions{})
	if err != nil {
		return nil, err
	}
	g := &benchResult{Name: "GNU sort", Note: "LC_ALL=C sort -S 4G --parallel=2, ASCII records"}
	for i := 0; i < runs; i++ {
		if err := removeOutput(out); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, gnuSort, "-S", "4G", "--parallel=2", "-o", out, in)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		cmd.Stderr = stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("GNU sort: %w", err)
		}
		g.Seconds = append(g.Seconds, time.Since(t).Seconds())
		if err := checkOutput(ctx, out, inSum, sort.Gensort); err != nil {
			return nil, fmt.Errorf("GNU sort output: %w", err)
		}
		g.Valid++
	}
	log("%-9s %s  (%d/%d outputs valid)\n", "GNU sort", secondsList(g.Seconds), g.Valid, len(g.Seconds))
	sf.mode, sf.mem = "onepass", mem
	o, err := sf.options()
	if err != nil {
		return nil, err
	}
	p, err := benchSorter(ctx, o, in, out, runs, inSum)
	if err != nil {
		return nil, err
	}
	p.Name, p.Note = "OnePass-ascii", "same ASCII records as GNU sort"
	log("%-9s %s  (%d/%d outputs valid)\n", p.Name, secondsList(p.Seconds), p.Valid, len(p.Seconds))
	return []*benchResult{g, p}, nil
}
