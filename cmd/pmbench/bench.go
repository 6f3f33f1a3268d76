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
}

// result is one measurement point: the profile's Point plus the latency
// percentiles of the timed run (0 when the point was not timed).
type result struct {
	persist.Point
	P50Ns float64 `json:"p50_ns,omitempty"`
	P99Ns float64 `json:"p99_ns,omitempty"`
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

// point measures one group (one progress step): its bandwidth and mean
// access time over -duration untimed, then the latency percentiles over a
// quarter of it with every access timed.
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
	return result{
		Point: persist.Point{
			Op: g.opName(), Pattern: g.pattern.String(), Size: g.size, Threads: g.threads,
			GBs: s[0].gbs(), NsPerOp: s[0].nsPerOp(),
		},
		P50Ns: l[0].quantile(0.50),
		P99Ns: l[0].quantile(0.99),
	}, nil
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
	if p := runtime.GOMAXPROCS(0); cfg.threads > p {
		b.note("-threads %d is more than GOMAXPROCS (%d): the larger thread counts share CPUs.", cfg.threads, p)
	}
	err = m.run(b)
	b.prog.finish()
	if err != nil {
		return err
	}

	prof := b.profile()
	if cfg.profile != "" {
		if err := prof.Save(cfg.profile); err != nil {
			return err
		}
	}
	if cfg.json {
		return writeJSON(stdout, b, prof)
	}
	return writeText(stdout, b, prof)
}

// mapFile creates and maps the file pmbench measures. It refuses to write
// over an existing file unless -overwrite.
func mapFile(cfg config) (*persist.Region, error) {
	if st, err := os.Lstat(cfg.file); err == nil {
		if !cfg.overwrite {
			return nil, fmt.Errorf("%s already exists, and pmbench writes over all of it: remove it, choose another -file, or pass -overwrite", cfg.file)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (%v); pmbench only replaces regular files", cfg.file, st.Mode().Type())
		}
		if err := os.Remove(cfg.file); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r, err := persist.Map(cfg.file, &persist.Options{
		Size:      cfg.size,
		Create:    true,
		Exclusive: true,
		ForcePMem: cfg.forcePMem, // BRAID_FORCE_PMEM=1 is read by persist
	})
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", cfg.file, err)
	}
	return r, nil
}

// profile is the device profile of everything measured so far.
func (b *bench) profile() *persist.Profile {
	p := summarize(b.results)
	p.Device = b.cfg.file
	p.Mapping = b.r.Info().String()
	p.CPU = cpuName()
	p.Cores = runtime.NumCPU()
	p.Date = time.Now().UTC().Format(time.RFC3339)
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
