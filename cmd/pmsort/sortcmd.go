package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"text/tabwriter"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/sort"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

const sortUsage = `-i IN -o OUT [-mode auto|onepass|mergepass|ems] [-mem SIZE] [-tmp DIR] [-json] [-f]
       [-readers N] [-writers N] [-sorters N] [-profile FILE] [-overlap] [-ptr 5|8] [-wbuf SIZE]
       [-key K -value V | -klv -key K]`

// sortFlags are the sorter's flags, shared with bench.
type sortFlags struct {
	mode          string
	mem, wbuf     byteSize
	tmp           string
	ptr           int
	readers       int
	writers       int
	sorters       int
	profile       string
	overlap       bool
	force         bool
	forcePMem     bool
	progress      string
	formatFlags   formatFlags
	formatEnabled bool
}

func (f *sortFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "mode", "auto", "auto, onepass, mergepass or ems")
	fs.Var(&f.mem, "mem", "memory budget for the sorter's buffers, e.g. 2GiB (0: half the RAM)")
	fs.Var(&f.wbuf, "wbuf", "write buffer size (0: 4MiB)")
	fs.StringVar(&f.tmp, "tmp", "", "directory of run files (default: the output's directory)")
	fs.IntVar(&f.ptr, "ptr", 5, "IndexMap pointer size in bytes: 5 or 8")
	fs.IntVar(&f.readers, "readers", 0, "reader pool size (0: from the device profile, else all CPUs)")
	fs.IntVar(&f.writers, "writers", 0, "writer pool size (0: from the device profile, else min(4, CPUs))")
	fs.IntVar(&f.sorters, "sorters", 0, "sorter pool size (0: all CPUs)")
	fs.StringVar(&f.profile, "profile", "", "device profile written by pmbench (default: $BRAID_PROFILE)")
	fs.BoolVar(&f.overlap, "overlap", false, "overlap reads and writes (default: interference-aware, never both at once)")
	fs.BoolVar(&f.forcePMem, "force-pmem", false, "use the PMem flush path on non-DAX files (as BRAID_FORCE_PMEM=1)")
}

func (f *sortFlags) options() (*sort.Options, error) {
	o := &sort.Options{
		Mode: sort.Mode(f.mode), MemBudget: int64(f.mem), TempDir: f.tmp, PointerSize: f.ptr,
		Pools:   sort.Pools{Readers: f.readers, Writers: f.writers, Sorters: f.sorters},
		Overlap: f.overlap, WriteBuffer: int64(f.wbuf), Overwrite: f.force, ForcePMem: f.forcePMem,
	}
	if f.profile != "" {
		p, err := persist.LoadProfile(f.profile)
		if err != nil {
			return nil, err
		}
		if p.Device == "" {
			p.Device = f.profile
		}
		o.Profile = p
	}
	return o, o.Validate()
}

func runSort(ctx context.Context, args []string) error {
	fs := newFlags("sort", sortUsage)
	in := fs.String("i", "", "input file")
	out := fs.String("o", "", "output file (written under a temporary name, renamed when complete)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	var sf sortFlags
	sf.register(fs)
	fs.BoolVar(&sf.force, "f", false, "replace an existing output file")
	fs.StringVar(&sf.progress, "progress", "auto", "progress bar: auto (on a terminal), on, off")
	sf.formatFlags.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if *in == "" || *out == "" || fs.NArg() != 0 {
		fs.Usage()
		return exitError{2}
	}
	o, err := sf.options()
	if err != nil {
		return err
	}
	if o.Format, err = sf.formatFlags.format(); err != nil {
		return err
	}
	showBar := sf.progress == "on" || (sf.progress == "auto" && term.IsTerminal(int(os.Stderr.Fd())))
	var bar *progressbar.ProgressBar
	if showBar {
		if st, err := os.Stat(*in); err == nil {
			bar = progressbar.NewOptions64(st.Size(),
				progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription("sorting"),
				progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100_000_000),
				progressbar.OptionClearOnFinish())
			o.Progress = func(done, total int64) { _ = bar.Set64(done) }
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := sort.Sort(ctx, *in, *out, o)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(os.Stdout, rep)
	return nil
}

func printReport(w io.Writer, r *sort.Report) {
	fmt.Fprintf(w, "%s: %d records (%s, %s) in %.3f s, %.2f GB/s\n",
		r.Mode, r.Records, humanBytes(r.Bytes), r.Format, r.Seconds, r.GBps)
	fmt.Fprintf(w, "pools: %d readers, %d writers, %d sorters (%s); overlap=%v; pointers %d B; runs %d\n",
		r.Readers, r.Writers, r.Sorters, r.PoolsFrom, r.Overlap, r.PointerBytes, r.Runs)
	fmt.Fprintf(w, "memory: budget %s, buffers %s, IndexMap %s, peak RssAnon %s\n",
		humanBytes(r.MemBudget), humanBytes(r.BufferBytes), humanBytes(r.IndexMapBytes), humanBytes(r.PeakRSSAnon))
	fmt.Fprintf(w, "output: %s\n", r.Mapping)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tseconds\tshare\t")
	for _, p := range r.Phases {
		share := 0.0
		if r.Seconds > 0 {
			share = 100 * p.Seconds / r.Seconds
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.0f%%\t\n", p.Name, p.Seconds, share)
	}
	tw.Flush()
}
