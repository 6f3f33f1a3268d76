package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// config is what one pmbench run does, from the flags.
type config struct {
	file      string
	size      int64         // bytes mapped
	duration  time.Duration // per measurement point
	threads   int           // the largest thread count measured
	profile   string        // write the device profile here ("" = don't)
	json      bool
	quick     bool
	mode      string
	keep      bool
	overwrite bool
	forcePMem bool
}

// Defaults, and what -quick changes unless the flag is given too.
const (
	defaultFile     = "/dev/shm/pmbench.pm"
	defaultSize     = 1 << 30
	defaultDuration = 200 * time.Millisecond
	quickSize       = 256 << 20
	quickDuration   = 20 * time.Millisecond

	minSize     = 4 << 20
	maxThreads  = 256
	minDuration = time.Millisecond
	maxDuration = 10 * time.Minute
)

// errHelp is returned by parseFlags for -h: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// parseFlags parses and validates the command line. Usage and errors go to
// stderr; a returned error other than errHelp means exit status 2.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{
		file:     defaultFile,
		size:     defaultSize,
		duration: defaultDuration,
		threads:  runtime.GOMAXPROCS(0),
		mode:     "device",
	}
	fs := flag.NewFlagSet("pmbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	fs.StringVar(&cfg.file, "file", cfg.file, "file to map and measure (created; removed at the end unless -keep)")
	fs.Var((*byteSize)(&cfg.size), "size", "bytes to map: a number with an optional K, M, G suffix (powers of 1024)")
	fs.DurationVar(&cfg.duration, "duration", cfg.duration, "time per measurement point")
	fs.IntVar(&cfg.threads, "threads", cfg.threads, "largest thread count (goroutines locked to OS threads) to measure")
	fs.StringVar(&cfg.profile, "profile", "", "write the device profile (persist.Profile JSON) to this file")
	fs.BoolVar(&cfg.json, "json", false, "print the report as JSON instead of tables")
	fs.BoolVar(&cfg.quick, "quick", false, "a few seconds in all: fewer sizes, "+byteString(quickSize)+" and "+quickDuration.String()+" per point unless -size/-duration say otherwise")
	fs.StringVar(&cfg.mode, "mode", cfg.mode, "what to measure: "+strings.Join(modeNames(), ", "))
	fs.BoolVar(&cfg.keep, "keep", false, "keep the file at the end")
	fs.BoolVar(&cfg.overwrite, "overwrite", false, "replace -file when it already exists")
	fs.BoolVar(&cfg.forcePMem, "force-pmem", false, "take the PMem path (flush instructions) on a file that is not on DAX, like BRAID_FORCE_PMEM=1")
	fs.Usage = func() { usage(stderr, fs) }

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return cfg, errHelp
		}
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q: pmbench takes only flags", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.quick {
		if !set["size"] {
			cfg.size = quickSize
		}
		if !set["duration"] {
			cfg.duration = quickDuration
		}
	}
	return cfg, cfg.validate()
}

// validate reports the first flag value pmbench cannot run with.
func (c *config) validate() error {
	if _, ok := modes[c.mode]; !ok {
		return fmt.Errorf("-mode %q: want one of %s", c.mode, strings.Join(modeNames(), ", "))
	}
	switch {
	case c.file == "":
		return errors.New("-file is empty")
	case c.size < minSize:
		return fmt.Errorf("-size %d: want at least %s", c.size, byteString(minSize))
	case c.size%4096 != 0:
		return fmt.Errorf("-size %d: want a multiple of 4 KiB", c.size)
	case int64(int(c.size)) != c.size:
		return fmt.Errorf("-size %d does not fit in memory addresses", c.size)
	case c.duration < minDuration || c.duration > maxDuration:
		return fmt.Errorf("-duration %v: want between %v and %v", c.duration, minDuration, maxDuration)
	case c.threads < 1 || c.threads > maxThreads:
		return fmt.Errorf("-threads %d: want 1 to %d", c.threads, maxThreads)
	}
	if c.profile != "" {
		// Fail now, not after the whole run.
		dir := filepath.Dir(c.profile)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("-profile %s: directory %s does not exist", c.profile, dir)
		}
	}
	// Each thread of a sequential group walks its own part of the file,
	// and the mixed test splits the file between readers and writers:
	// every part must hold several of the largest accesses.
	if need := int64(c.threads) * 4 * maxAccess; c.size < need {
		return fmt.Errorf("-size %s is too small for %d threads: want at least %s", byteString(c.size), c.threads, byteString(need))
	}
	return nil
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `Usage: pmbench [flags]

pmbench measures a persistent-memory device through package persist and
writes the device profile that braid's sort and kv read (persist.LoadProfile).
On tmpfs, set BRAID_FORCE_PMEM=1 (or -force-pmem) to measure the flush
instruction path instead of msync(2).

Modes:
`)
	for _, name := range modeNames() {
		fmt.Fprintf(w, "  %-8s %s\n", name, modes[name].summary)
	}
	fmt.Fprintf(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprintf(w, `
Examples:
  BRAID_FORCE_PMEM=1 pmbench -quick -profile /dev/shm/profile.json
  pmbench -file /mnt/pmem0/bench.pm -size 8G -threads 16 -profile pmem0.json
  pmbench -mode copy -json
`)
}

// byteSize is a flag.Value for sizes such as 4096, 64K, 256M, 1G or 1GiB.
type byteSize int64

func (s *byteSize) String() string { return byteString(int64(*s)) }

func (s *byteSize) Set(v string) error {
	n, err := parseByteSize(v)
	if err != nil {
		return err
	}
	*s = byteSize(n)
	return nil
}

// parseByteSize parses a byte count with an optional binary suffix: K, M,
// G or T, optionally followed by "iB" or "B", in either case.
func parseByteSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToUpper(strings.TrimSpace(s[len(num):]))
	shifts := map[string]int{"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20,
		"G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40, "TIB": 40}
	shift, ok := shifts[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit, want a number with an optional K, M, G or T suffix", v)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a whole number of bytes with an optional K, M, G or T suffix", v)
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q is too large", v)
	}
	return n << shift, nil
}

// byteString prints n in the largest binary unit that divides it.
func byteString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
