package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

// bench is what a mode measures with and reports into.
type bench struct {
	ctx   context.Context
	cfg   config
	r     *persist.Region
	mem   []byte
	clock int64 // clock overhead subtracted from timed accesses, ns
	prog  *progress

	results  []result
	sections []*table
	notes    []string
	saved    bool // the profile was written to cfg.profile
}

// result is one measurement point: the profile's Point (whose NsPerOp is
// the untimed run's busy time per access, the inverse of one thread's
// rate) plus the mean and percentiles of the timed run, all three from the
// same samples (0 when the point was not timed).
type result struct {
	device.Point
	MeanNs float64 `json:"mean_ns,omitempty"`
	P50Ns  float64 `json:"p50_ns,omitempty"`
	P99Ns  float64 `json:"p99_ns,omitempty"`
}

// timed sets the figures of the timed run l.
func (r *result) timed(l sample) {
	r.MeanNs, r.P50Ns, r.P99Ns = l.mean(), l.quantile(0.50), l.quantile(0.99)
}

// add records results: they are printed by -json and become the profile's
// points.
func (b *bench) add(rs ...result) { b.results = append(b.results, rs...) }

// section adds a table to the printed report.
func (b *bench) section(t *table) { b.sections = append(b.sections, t) }

// note adds a line to the report's header.
func (b *bench) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// addSteps announces n more measurement steps to the progress line.
func (b *bench) addSteps(n int) { b.prog.add(n) }

// latencyDuration is how long the timed run of a point lasts.
func (b *bench) latencyDuration() time.Duration {
	return max(b.cfg.duration/4, time.Millisecond)
}

// point measures one group (one progress step): its bandwidth and time per
// access over -duration untimed, then the latency (mean, percentiles) over
// a quarter of it with every access timed.
func (b *bench) point(g group) (result, error) {
	b.prog.step(g.String())
	s, err := b.runGroups([]group{g}, b.cfg.duration, false)
	if err != nil {
		return result{}, err
	}
	l, err := b.runGroups([]group{g}, b.latencyDuration(), true)
	if err != nil {
		return result{}, err
	}
	res := result{Point: device.Point{
		Op: g.opName(), Pattern: g.pattern.String(), Size: g.size, Threads: g.threads,
		GBs: s[0].gbs(), NsPerOp: s[0].nsPerOp(),
	}}
	res.timed(l[0])
	return res, nil
}

// measure maps the file, runs the mode, writes the profile and prints the
// report. The file is closed and (unless -keep) removed however it ends.
func measure(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	m := modes[cfg.mode]
	r, err := mapFile(cfg)
	if err != nil {
		return err
	}
	defer func() {
		cerr := r.Close()
		if !cfg.keep {
			if rerr := os.Remove(cfg.file); rerr != nil && cerr == nil {
				cerr = fmt.Errorf("remove %s: %w", cfg.file, rerr)
			}
		}
		if err == nil {
			err = cerr
		}
	}()

	b := &bench{ctx: ctx, cfg: cfg, r: r, mem: r.Bytes(), clock: clockOverhead(), prog: newProgress(stderr)}
	if r.Info().Mode == persist.ModeMsync {
		b.note("%s is not PMem and the PMem path is not forced: write+flush, write-nt and persist are msync(2) here. Set BRAID_FORCE_PMEM=1 or -force-pmem to measure the flush instructions.", cfg.file)
	}
	if cfg.grown != "" {
		b.note("%s.", cfg.grown)
	}
	err = m.run(b)
	b.prog.finish()
	if err != nil {
		return err
	}
	if err := b.emulationReport(); err != nil {
		return err
	}
	if _, hi := b.threadRange(); hi > runtime.GOMAXPROCS(0) {
		b.note("%d threads is more than GOMAXPROCS (%d): the larger thread counts share CPUs.", hi, runtime.GOMAXPROCS(0))
	}

	// A profile that cannot be written (checked before the run, but the
	// disk may fill) does not cost the report: it is printed, then the
	// error returned.
	var prof *device.Profile
	var saveErr error
	if m.profile {
		prof = b.profile()
		if cfg.profile != "" {
			saveErr = prof.Save(cfg.profile)
			b.saved = saveErr == nil
		}
	}
	if cfg.json {
		err = writeJSON(stdout, b, prof)
	} else {
		err = writeText(stdout, b, prof)
	}
	if err != nil {
		err = fmt.Errorf("%w: %w", errReport, err)
	}
	return errors.Join(saveErr, err)
}

// errReport marks a failure to write the report to stdout.
var errReport = errors.New("write the report")

// threadRange is the fewest and the most threads of the recorded results
// (1, 1 when there are none).
func (b *bench) threadRange() (lo, hi int) {
	lo, hi = 1, 1
	for i, r := range b.results {
		if i == 0 || r.Threads < lo {
			lo = r.Threads
		}
		hi = max(hi, r.Threads)
	}
	return lo, hi
}

// mapFile creates and maps the file pmbench measures. It refuses to write
// over an existing file unless -overwrite (checkFile refused it already, as
// a flag error; this catches a file created since, as a failure).
func mapFile(cfg config) (*persist.Region, error) {
	if st, err := os.Lstat(cfg.file); err == nil {
		if !cfg.overwrite {
			return nil, fmt.Errorf("%s already exists, and pmbench writes over all of it: remove it, choose another -file, or pass -overwrite", cfg.file)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is %s, not a regular file: pmbench replaces only regular files", cfg.file, fileKind(st.Mode()))
		}
		if err := os.Remove(cfg.file); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dev, err := cfg.openDevice()
	if err != nil {
		return nil, err
	}
	r, err := persist.Map(cfg.file, &persist.Options{
		Size:      cfg.size,
		Create:    true,
		Exclusive: true,
		ForcePMem: cfg.forcePMem, // BRAID_FORCE_PMEM=1 is read by persist
		Device:    dev,           // nil: BRAID_DEVICE's, read by persist
	})
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", cfg.file, err)
	}
	return r, nil
}

// profile is the device profile of everything measured so far.
func (b *bench) profile() *device.Profile {
	p := summarize(b.results)
	p.Device = b.cfg.file
	p.Mapping = b.r.Info().String()
	p.CPU = cpuName()
	p.Cores = runtime.NumCPU()
	p.Date = time.Now().UTC().Format(time.RFC3339)
	b.addModel(&p)
	return &p
}

func cpuName() string {
	if n := strings.TrimSpace(cpuid.CPU.BrandName); n != "" {
		return n
	}
	return runtime.GOARCH
}

// cpuFeatures lists the instructions that matter to PMem, as asm sees them.
func cpuFeatures() []string {
	var f []string
	for _, x := range []struct {
		has  bool
		name string
	}{
		{asm.HasCLWB, "clwb"}, {asm.HasCLFLUSHOPT, "clflushopt"}, {asm.HasCLFLUSH, "clflush"},
		{asm.HasSSE2, "sse2"}, {asm.HasAVX2, "avx2"}, {asm.HasAVX512, "avx512"},
	} {
		if x.has {
			f = append(f, x.name)
		}
	}
	return f
}
