package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/braid-pm/braid/sort"
)

const benchUsage = `[-n RECORDS] [-dir DIR] [-runs N] [-mem SIZE] [-mpmem SIZE] [-gnu] [-cold] [-json] [pool flags]

Generates RECORDS gensort records in DIR (default /dev/shm), sorts them with
EMS, OnePass and MergePass (forced by the small budget -mpmem), validates
every output (order, count, checksum) and prints the best, median and spread
of -runs runs with the ratio to EMS. -gnu also times
'LC_ALL=C sort -S 4G --parallel=2' and pmsort on the ASCII form of the same
records; -cold times 'pmsort sort' as a fresh process.`

type benchResult struct {
	Name    string           `json:"name"`
	Seconds []float64        `json:"seconds"`
	Best    float64          `json:"best"`
	Median  float64          `json:"median"`
	Spread  float64          `json:"spread"` // max - min
	GBps    float64          `json:"gbps"`   // bytes / best
	VsEMS   float64          `json:"vs_ems"` // EMS best / this best
	Report  *sort.Report     `json:"report,omitempty"`
	Note    string           `json:"note,omitempty"`
	Phases  []sort.PhaseTime `json:"-"`
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

func runBench(ctx context.Context, args []string) error {
	fs := newFlags("bench", benchUsage)
	n := fs.Int64("n", 10_000_000, "records (100 bytes each)")
	dir := fs.String("dir", "/dev/shm", "directory for input, outputs and run files")
	runs := fs.Int("runs", 3, "runs per mode (best, median and spread are reported)")
	gnu := fs.Bool("gnu", false, "also time GNU sort on the ASCII form of the records")
	cold := fs.Bool("cold", false, "also time 'pmsort sort -mode onepass' as a fresh process")
	asJSON := fs.Bool("json", false, "print results as JSON")
	keep := fs.Bool("keep", false, "keep the generated input files")
	var mpmem byteSize
	fs.Var(&mpmem, "mpmem", "budget that forces MergePass (0: a quarter of the IndexMap plus 8MiB)")
	var sf sortFlags
	sf.register(fs) // -mem: budget for EMS and OnePass (0: half the input size, at least 4MiB)
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if *n < 1 || *runs < 1 || fs.NArg() != 0 {
		fs.Usage()
		return exitError{2}
	}
	sf.forcePMem = true // on tmpfs: the PMem instruction path, as BRAID_FORCE_PMEM=1
	size := *n * 100
	mem := sf.mem
	if mem == 0 {
		mem = byteSize(max(4*sort.MinMemBudget, size/2))
	}
	if mpmem == 0 {
		mpmem = byteSize(max(sort.MinMemBudget, *n*15/4+8<<20))
	}
	log := func(format string, a ...any) {
		if !*asJSON {
			fmt.Printf(format, a...)
		}
	}
	base := filepath.Join(*dir, fmt.Sprintf("pmsort-bench-%d", os.Getpid()))
	in, out := base+".in", base+".out"
	defer os.Remove(out)
	if !*keep {
		defer os.Remove(in)
	}
	t := time.Now()
	if _, err := sort.Generate(ctx, in, sort.GenOptions{Count: uint64(*n)}, true); err != nil {
		return err
	}
	log("generated %d records (%s) in %s in %.3f s\n", *n, humanBytes(size), in, time.Since(t).Seconds())
	inSum, err := sort.Validate(ctx, in, sort.ValidateOptions{})
	if err != nil {
		return err
	}

	type modeRun struct {
		name string
		mode sort.Mode
		mem  byteSize
	}
	var results []*benchResult
	for _, m := range []modeRun{{"EMS", sort.EMS, mem}, {"OnePass", sort.OnePass, mem}, {"MergePass", sort.MergePass, mpmem}} {
		sf.mode, sf.mem = string(m.mode), m.mem
		o, err := sf.options()
		if err != nil {
			return err
		}
		o.Overwrite = true
		res, err := benchSorter(ctx, o, in, out, *runs, inSum)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		res.Name = m.name
		res.finish(size)
		results = append(results, res)
		log("%-9s %s\n", m.name, secondsList(res.Seconds))
	}
	if *cold {
		res, err := benchCold(ctx, in, out, *runs, inSum, int64(mem))
		if err != nil {
			return err
		}
		res.finish(size)
		results = append(results, res)
		log("%-9s %s\n", "cold", secondsList(res.Seconds))
	}
	if *gnu {
		more, err := benchGNU(ctx, base, *n, *runs, &sf, mem, log)
		if err != nil {
			return err
		}
		for _, r := range more {
			r.finish(size)
		}
		results = append(results, more...)
	}
	ems := results[0].Best
	for _, r := range results {
		r.VsEMS = ems / r.Best
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sorter\tbest s\tmedian s\tspread s\tGB/s\tvs EMS\trun files\tnote\t")
	for _, r := range results {
		runsCol := "-"
		if r.Report != nil {
			runsCol = fmt.Sprint(r.Report.Runs)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.2fx\t%s\t%s\t\n", r.Name, r.Best, r.Median, r.Spread, r.GBps, r.VsEMS, runsCol, r.Note)
	}
	tw.Flush()
	fmt.Println()
	for _, r := range results {
		if r.Report == nil {
			continue
		}
		fmt.Printf("%s best run, phases (s):", r.Name)
		for _, p := range r.Report.Phases {
			fmt.Printf("  %s %.3f", p.Name, p.Seconds)
		}
		fmt.Printf("\n  budget %s, buffers %s, pools %d/%d/%d (readers/writers/sorters, %s)\n",
			humanBytes(r.Report.MemBudget), humanBytes(r.Report.BufferBytes),
			r.Report.Readers, r.Report.Writers, r.Report.Sorters, r.Report.PoolsFrom)
	}
	if len(results) > 0 && results[0].Report != nil {
		fmt.Printf("output mapping: %s\n", results[0].Report.Mapping)
	}
	return nil
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
func benchSorter(ctx context.Context, o *sort.Options, in, out string, runs int, inSum *sort.Summary) (*benchResult, error) {
	s, err := sort.NewSorter(o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &benchResult{}
	for i := 0; i < runs; i++ {
		rep, err := s.Sort(ctx, in, out)
		if err != nil {
			return nil, err
		}
		if err := checkOutput(ctx, out, inSum, o.Format); err != nil {
			return nil, err
		}
		if res.Report == nil || rep.Seconds < res.Report.Seconds {
			res.Report = rep
		}
		res.Seconds = append(res.Seconds, rep.Seconds)
	}
	return res, nil
}

func checkOutput(ctx context.Context, out string, inSum *sort.Summary, f sort.Format) error {
	s, err := sort.Validate(ctx, out, sort.ValidateOptions{Format: f})
	if err != nil {
		return err
	}
	if !s.OK() {
		return fmt.Errorf("output %s has %s unordered records", out, s.Unordered)
	}
	return samePermutation(inSum, s)
}

// benchCold runs 'pmsort sort -mode onepass' as a fresh process.
func benchCold(ctx context.Context, in, out string, runs int, inSum *sort.Summary, mem int64) (*benchResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	res := &benchResult{Name: "OnePass-cold", Note: "fresh pmsort process"}
	for i := 0; i < runs; i++ {
		os.Remove(out)
		cmd := exec.CommandContext(ctx, exe, "sort", "-mode", "onepass", "-mem", fmt.Sprint(mem), "-force-pmem", "-progress", "off", "-i", in, "-o", out)
		cmd.Stderr = os.Stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("pmsort sort: %w", err)
		}
		res.Seconds = append(res.Seconds, time.Since(t).Seconds())
		if err := checkOutput(ctx, out, inSum, sort.Gensort); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// benchGNU times GNU sort on the ASCII records and pmsort OnePass on the
// same file.
func benchGNU(ctx context.Context, base string, n int64, runs int, sf *sortFlags, mem byteSize, log func(string, ...any)) ([]*benchResult, error) {
	gnuSort, err := exec.LookPath("sort")
	if err != nil {
		return nil, errors.New("GNU sort not found")
	}
	in, out := base+".ascii", base+".ascii.out"
	defer os.Remove(in)
	defer os.Remove(out)
	if _, err := sort.Generate(ctx, in, sort.GenOptions{Count: uint64(n), ASCII: true}, true); err != nil {
		return nil, err
	}
	inSum, err := sort.Validate(ctx, in, sort.ValidateOptions{})
	if err != nil {
		return nil, err
	}
	g := &benchResult{Name: "GNU sort", Note: "LC_ALL=C sort -S 4G --parallel=2, ASCII records"}
	for i := 0; i < runs; i++ {
		os.Remove(out)
		cmd := exec.CommandContext(ctx, gnuSort, "-S", "4G", "--parallel=2", "-o", out, in)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		cmd.Stderr = os.Stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("GNU sort: %w", err)
		}
		g.Seconds = append(g.Seconds, time.Since(t).Seconds())
		if err := checkOutput(ctx, out, inSum, sort.Gensort); err != nil {
			return nil, fmt.Errorf("GNU sort output: %w", err)
		}
	}
	log("%-9s %s\n", "GNU sort", secondsList(g.Seconds))
	sf.mode, sf.mem = "onepass", mem
	o, err := sf.options()
	if err != nil {
		return nil, err
	}
	o.Overwrite = true
	p, err := benchSorter(ctx, o, in, out, runs, inSum)
	if err != nil {
		return nil, err
	}
	p.Name, p.Note = "OnePass-ascii", "same ASCII records as GNU sort"
	log("%-9s %s\n", p.Name, secondsList(p.Seconds))
	return []*benchResult{g, p}, nil
}
