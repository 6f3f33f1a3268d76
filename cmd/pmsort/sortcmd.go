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

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/persist/device"
	"github.com/braid-pm/braid/sort"
	"github.com/schollz/progressbar/v3"
)

const sortUsage = `-i IN -o OUT [-mode auto|onepass|mergepass|ems] [-mem SIZE] [-tmp DIR] [-json] [-f]
       [-readers N] [-writers N] [-sorters N] [-profile FILE] [-overlap] [-ptr 5|8] [-wbuf SIZE]
       [-device NAME|FILE] [-key K -value V | -klv -key K]

-mem bounds the sorter's DRAM buffers: anonymous memory (RssAnon in
/proc/PID/status). Peak RSS as /usr/bin/time -v reports it also counts the
pages of the input, output and run files that are mapped from tmpfs
(shmem), which are storage, not part of the budget. A budget too small for
the mode and input is refused with the smallest -mem that would do.

The output is written as .OUT.pmsort-PID-RANDOM.tmp in its directory and
renamed when complete; MergePass and EMS write run files
pmsort-run-PID-RANDOM-N in -tmp (default: the output's directory). All are
removed on success, on an error and on Ctrl-C, but a SIGKILL or a power
loss leaves them behind. Find them (PID is the pmsort that made them) with
  find DIR -maxdepth 1 \( -name '.*.pmsort-*.tmp' -o -name 'pmsort-run-*' \)
and remove them once that pmsort is gone.`

// sortFlags are the sorter's flags, shared with bench.
type sortFlags struct {
	mode        string
	mem, wbuf   byteSize
	tmp         string
	ptr         int
	readers     int
	writers     int
	sorters     int
	profile     string
	device      string
	overlap     bool
	force       bool
	forcePMem   bool
	formatFlags formatFlags
}

// register adds the sorter's flags to fs; bench chooses the mode, the
// budget rule and the PMem path itself, so it does not take -mode or
// -force-pmem and documents -mem differently.
func (f *sortFlags) register(fs *flag.FlagSet, bench bool) {
	if !bench {
		fs.StringVar(&f.mode, "mode", "auto", "auto, onepass, mergepass or ems")
		fs.Var(&f.mem, "mem", "memory budget for the sorter's buffers, e.g. 2GiB (0: half the RAM; at most the RAM)")
		fs.BoolVar(&f.forcePMem, "force-pmem", false, "use the PMem flush path on non-DAX files (as BRAID_FORCE_PMEM=1)")
	} else {
		fs.Var(&f.mem, "mem", "memory budget of EMS and OnePass (0: half the input, at least 4MiB)")
	}
	fs.Var(&f.wbuf, "wbuf", fmt.Sprintf("cap of the write buffer (0: %s; the buffer is what -mem leaves beside the IndexMap or runs, for EMS at most -mem/8)",
		humanBytes(sort.DefaultWriteBuffer)))
	fs.StringVar(&f.tmp, "tmp", "", "directory of run files (default: the output's directory)")
	fs.IntVar(&f.ptr, "ptr", 5, "IndexMap pointer size in bytes: 5 or 8")
	fs.IntVar(&f.readers, "readers", 0, "reader pool size (0: from the device profile, else all CPUs)")
	fs.IntVar(&f.writers, "writers", 0, "writer pool size (0: from the device profile, else min(4, CPUs))")
	fs.IntVar(&f.sorters, "sorters", 0, "sorter pool size (0: all CPUs)")
	fs.StringVar(&f.profile, "profile", "", "device profile written by pmbench (default: $BRAID_PROFILE)")
	fs.BoolVar(&f.overlap, "overlap", false, "overlap reads and writes (default: interference-aware, never both at once)")
	fs.StringVar(&f.device, "device", "", "emulated device: "+cli.DeviceNames()+", or a profile file with a model (default: $BRAID_DEVICE)")
}

// options builds and checks the sorter's options; bad values are bad
// usage.
func (f *sortFlags) options() (*sort.Options, error) {
	o := &sort.Options{
		Mode: sort.Mode(f.mode), MemBudget: int64(f.mem), TempDir: f.tmp, PointerSize: f.ptr,
		Pools:   sort.Pools{Readers: f.readers, Writers: f.writers, Sorters: f.sorters},
		Overlap: f.overlap, WriteBuffer: int64(f.wbuf), Overwrite: f.force, ForcePMem: f.forcePMem,
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"readers", f.readers}, {"writers", f.writers}, {"sorters", f.sorters}} {
		if err := nonNegative(c.name, c.v); err != nil {
			return nil, err
		}
	}
	if err := o.Validate(); err != nil {
		return nil, badUsage(err)
	}
	// The profile is loaded here, from -profile or else BRAID_PROFILE,
	// so that one that cannot be loaded is bad usage either way.
	name, from := f.profile, "-profile"
	if name == "" {
		name, from = os.Getenv("BRAID_PROFILE"), "BRAID_PROFILE="+os.Getenv("BRAID_PROFILE")
	}
	if name != "" {
		p, err := device.LoadProfile(name)
		if err != nil {
			return nil, usagef("%s: %v", from, err)
		}
		o.Profile, o.ProfileName = p, name
	}
	if err := f.applyDevice(o); err != nil {
		return nil, err
	}
	return o, nil
}

func runSort(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sort", sortUsage, stdout)
	in := fs.String("i", "", "input file")
	out := fs.String("o", "", "output file (written under a temporary name, renamed when complete)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	var progress cli.Progress
	fs.Var(&progress, "progress", cli.ProgressUsage)
	var sf sortFlags
	sf.register(fs, false)
	fs.BoolVar(&sf.force, "f", false, "replace an existing output file")
	sf.formatFlags.register(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := pathFlags(fs, "i", "o", "tmp", "profile", "cpuprofile"); err != nil {
		return err
	}
	switch {
	case *in == "" && *out == "":
		return usagef("missing -i IN and -o OUT")
	case *in == "":
		return usagef("missing -i IN")
	case *out == "":
		return usagef("missing -o OUT")
	case fs.NArg() != 0:
		return usagef("unexpected arguments: %v (the files are given with -i and -o)", fs.Args())
	}
	o, err := sf.options()
	if err != nil {
		return err
	}
	if o.Format, err = sf.formatFlags.format(); err != nil {
		return err
	}
	if err := sortPaths(*in, *out, sf.tmp, sf.force); err != nil {
		return err
	}
	bar := sortBar(progress.On(stderr), *in, stderr, o)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return usagef("-cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := sort.Sort(ctx, *in, *out, o)
	if bar != nil {
		if err == nil {
			_ = bar.Finish()
		} else {
			fmt.Fprintln(stderr) // leave the bar where it stopped
		}
	}
	if err != nil {
		return formatHint(o.Format, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(stdout, rep)
	return nil
}

// sortBar is the sort's progress bar over the input's bytes, wired into
// o.Progress, or nil when off.
func sortBar(on bool, in string, stderr io.Writer, o *sort.Options) *progressbar.ProgressBar {
	if !on {
		return nil
	}
	st, err := os.Stat(in)
	if err != nil {
		return nil
	}
	bar := progressbar.NewOptions64(st.Size(),
		progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("sorting"),
		// No rate: the output advances a write buffer (up to
		// 256 MiB) at a time, so an instantaneous rate is noise.
		// It ends at 100% on a line of its own.
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }))
	o.Progress = func(done, total int64) { _ = bar.Set64(done) }
	return bar
}

// sortPaths checks the paths of pmsort sort before anything is read or
// written: the input exists and is readable, the output is not the input,
// not a directory, exists only with -f, and its directory and -tmp are
// writable directories.
func sortPaths(in, out, tmp string, force bool) error {
	if err := checkInputPath("-i ", in, true); err != nil {
		return err
	}
	if err := checkNotInput("-o ", out, in); err != nil {
		return err
	}
	if err := checkOutputPath("-o ", out, force, "use -f to replace it"); err != nil {
		return err
	}
	if tmp != "" {
		return checkDirPath("-tmp ", tmp)
	}
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
