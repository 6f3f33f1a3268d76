package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/klauspost/cpuid/v2"
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
	device    string // -device: the emulated device to measure ("" = BRAID_DEVICE's, or none)
	plot      string // -plot: directory of the bandwidth figures

	grown string // why the default -size was grown ("" = it was not)
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

// fileDefault is -file's default: defaultFile, a file of its own in tests
// (an existing -file is refused, and another pmbench may be running).
var fileDefault = defaultFile

// errHelp is returned by parseFlags for -h: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// parseFlags parses and validates the command line. Only -h prints the
// usage (to help, which run makes stdout); a returned error other than
// errHelp means exit status 2, and run prints it with a pointer to -h.
func parseFlags(args []string, help io.Writer) (config, error) {
	cfg := config{
		file:     fileDefault,
		size:     defaultSize,
		duration: defaultDuration,
		threads:  runtime.GOMAXPROCS(0),
		mode:     "device",
	}
	fs := flag.NewFlagSet("pmbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	fs.StringVar(&cfg.file, "file", cfg.file, "file to create, map and measure (removed at the end unless -keep)")
	fs.Var((*byteSize)(&cfg.size), "size", "`bytes` to map: a number with an optional "+sizeUnits+" suffix (powers of 1024; 1.5G is whole bytes, 1.5 is not). "+
		"Device and copy modes want at least 8x the last-level cache, and device mode 2x it per thread: without -size, the default grows to that")
	fs.DurationVar(&cfg.duration, "duration", cfg.duration, "time per measurement point")
	fs.IntVar(&cfg.threads, "threads", cfg.threads, "largest thread count (goroutines locked to OS threads) to measure; device mode only, the others run one thread")
	fs.StringVar(&cfg.profile, "profile", "", "write the device profile (device.Profile JSON) to this file; device mode (all of it) and copy mode (movnt_threshold, persist_ns) only")
	fs.BoolVar(&cfg.json, "json", false, "print the report as JSON instead of tables")
	fs.BoolVar(&cfg.quick, "quick", false, "a few seconds in all: fewer sizes, "+byteString(quickSize)+" and "+quickDuration.String()+" per point unless -size/-duration say otherwise")
	fs.StringVar(&cfg.mode, "mode", cfg.mode, "what to measure: "+strings.Join(modeNames(), ", "))
	fs.BoolVar(&cfg.keep, "keep", false, "keep the file at the end")
	fs.BoolVar(&cfg.overwrite, "overwrite", false, "replace -file when it already exists")
	fs.BoolVar(&cfg.forcePMem, "force-pmem", false, "take the PMem path (flush instructions) on a file that is not on DAX, like BRAID_FORCE_PMEM=1")
	fs.StringVar(&cfg.device, "device", "", "measure an emulated device: "+cli.DeviceNames()+", or a profile file with a model (default: $BRAID_DEVICE); the report compares the curves with the profile's")
	fs.StringVar(&cfg.plot, "plot", "", "draw bandwidth by thread count per access type into this `directory` (SVG and PNG); device mode")
	// The flag package calls Usage on every parse error too; the usage is
	// printed for -h only, so that an error is not buried under it.
	fs.Usage = func() {}

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(help, fs)
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
	if err := cfg.validate(); err != nil {
		return cfg, err
	}
	if err := cfg.validateDevice(); err != nil {
		return cfg, err
	}
	// The file must defeat the cache (see cacheMinSize): an explicit -size
	// that does not is refused, the default grows.
	if need, why := cfg.minSize(); cfg.size < need {
		if set["size"] {
			return cfg, fmt.Errorf("-size %s is too small for -mode %s: %s; want at least %s", byteString(cfg.size), cfg.mode, why, byteString(need))
		}
		if int64(int(need)) != need {
			// Only where an int is 32 bits (2 GiB).
			return cfg, fmt.Errorf("-mode %s needs a file of %s: %s; that is more than a %d-bit process can map: give a smaller -size (the figures may then be the cache's) or fewer -threads",
				cfg.mode, byteString(need), why, strconv.IntSize)
		}
		cfg.grown = fmt.Sprintf("-size %s, grown from the default %s: %s", byteString(need), byteString(cfg.size), why)
		cfg.size = need
	}
	return cfg, nil
}

// validate reports the first flag value pmbench cannot run with, before
// anything is measured.
func (c *config) validate() error {
	m, ok := modes[c.mode]
	if !ok {
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
	if err := checkFile(c.file, c.overwrite); err != nil {
		return err
	}
	if c.profile != "" {
		if !m.profile {
			return fmt.Errorf("-profile with -mode %s: that mode measures no figure of the device profile; "+
				"-mode device measures all of them (-mode copy only movnt_threshold and persist_ns)", c.mode)
		}
		if err := checkProfile(c.profile, c.file); err != nil {
			return err
		}
	}
	return nil
}

// minSize is the smallest file the mode measures meaningfully, and why.
func (c *config) minSize() (int64, string) {
	if m := modes[c.mode]; m.minSize != nil {
		n, why := m.minSize(c)
		return (n + 1<<20 - 1) &^ (1<<20 - 1), why // whole MiB
	}
	return minSize, fmt.Sprintf("want at least %s", byteString(minSize))
}

// The caches. A file that fits in the last-level cache measures the cache,
// not the device: a short run with many threads once reported 67 GB/s of
// "sequential reads" at 32 threads on 2 CPUs, each thread re-reading its
// own small part of the file. Two rules keep measured accesses misses:
//
//   - cacheMinSize: the file is at least 8x the last-level cache, so a
//     random access over it hits the cache at most 1/8 of the time;
//   - perThreadMinSize: each sequential thread's part, around which it
//     wraps, is at least 2x the cache, so that a thread re-reads lines the
//     cache has long dropped even when it runs alone (more threads than
//     CPUs take turns, so the parts in the cache at once are those of the
//     threads running).
//
// llc is the last-level cache size (cpuid's L3, else its L2, else 32 MiB);
// tests make it small to measure small files.
var llc = lastLevelCache()

func lastLevelCache() int64 {
	for _, n := range []int{cpuid.CPU.Cache.L3, cpuid.CPU.Cache.L2} {
		if n > 0 {
			return int64(n)
		}
	}
	return 32 << 20
}

func cacheMinSize(*config) (int64, string) {
	return 8 * llc, fmt.Sprintf("random accesses must miss the %s last-level cache, so the file must be at least 8 times that", byteString(llc))
}

func perThreadMinSize(c *config) (int64, string) {
	n, why := cacheMinSize(c)
	if t := int64(c.threads) * 2 * llc; t > n {
		n, why = t, fmt.Sprintf("each of %s walks its own part of the file, which must be at least twice the %s last-level cache",
			threadWord(c.threads, "thread"), byteString(llc))
	}
	// Every part, and each half of the mixed test, must also hold
	// several of the largest accesses.
	if t := int64(c.threads) * 4 * maxAccess; t > n {
		n, why = t, fmt.Sprintf("each of %s needs a part of at least %s", threadWord(c.threads, "thread"), byteString(4*maxAccess))
	}
	return n, why
}

// checkFile: -file must name a file in a directory that exists and where
// files can be created, and an existing file only with -overwrite, and
// then a regular one: pmbench writes over all of it. Refused here, before
// anything is measured, each is a flag error (exit status 2).
func checkFile(file string, overwrite bool) error {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return fmt.Errorf("-file %s is a directory: give the path of a file for pmbench to create, such as %s",
			file, filepath.Join(file, "pmbench.pm"))
	}
	if st, err := os.Lstat(file); err == nil {
		if !overwrite {
			return fmt.Errorf("-file %s already exists, and pmbench writes over all of it: remove it, choose another -file, or pass -overwrite", file)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("-file %s is %s, not a regular file: pmbench replaces only regular files", file, fileKind(st.Mode()))
		}
	} else if !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("-file %s: %w", file, err)
	}
	dir := filepath.Dir(file)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("-file %s: directory %s does not exist", file, dir)
	}
	return probeDir("-file "+file, dir)
}

// probeDir tries to create a file in dir: permission bits do not tell
// (root, read-only mounts).
func probeDir(what, dir string) error {
	f, err := os.CreateTemp(dir, ".pmbench-probe-*")
	if err != nil {
		var pe *iofs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: cannot create files in %s: %v", what, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// checkProfile fails now, not after the whole run, when the profile could
// not be written: a directory or a device in its place, its directory
// missing or not writable, or the measured file itself (removed at the end).
func checkProfile(path, file string) error {
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return fmt.Errorf("-profile %s is a directory: give the path of the JSON file to write, such as %s",
				path, filepath.Join(path, "profile.json"))
		case !st.Mode().IsRegular():
			return fmt.Errorf("-profile %s is %s: pmbench replaces only regular files", path, fileKind(st.Mode()))
		}
		if fst, err := os.Stat(file); err == nil && os.SameFile(st, fst) {
			return fmt.Errorf("-profile %s is the -file pmbench measures", path)
		}
	} else if !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("-profile %s: %w", path, err)
	}
	if a, err := filepath.Abs(path); err == nil {
		if b, err := filepath.Abs(file); err == nil && a == b {
			return fmt.Errorf("-profile %s is the -file pmbench measures", path)
		}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("-profile %s: directory %s does not exist", path, dir)
	}
	return probeDir("-profile "+path, dir)
}

// fileKind is cli's, shared by braid's commands.
func fileKind(m iofs.FileMode) string { return cli.FileKind(m) }

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `Usage: pmbench [flags]

pmbench measures a persistent-memory device through package persist and
writes the device profile (device.LoadProfile, BRAID_PROFILE): sort's
thread-pool controller sizes its pools from it and persist takes its
streaming-store threshold from it; kv sizes its workers and readers per
device from its write and read knees.
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

%s
`, exits.Text("pmbench"))
}

// exits is what pmbench's exit statuses mean (internal/cli's rule),
// printed by pmbench -h (cmd/pmbench/README.md says the same).
var exits = cli.Exits{
	Fail: "mapping the file, a measurement, or writing the report or the profile " +
		"failed (the profile is checked before the run, but the disk can fill)",
	Usage: "found before anything is measured: an unknown flag, a bad flag value, an " +
		"argument, or a path that cannot be used as given: -file a directory, in a " +
		"directory that does not exist or is not writable, existing without -overwrite " +
		"(or, with it, not a regular file); -profile a directory or device, in a " +
		"directory that does not exist or is not writable, or the -file itself",
	Internal: "the measured file is removed first, unless -keep",
	Pipe:     ": stdout a closed pipe, as in pmbench | head",
	After: "With 1, 129, 130 and 141 the measured file is closed and, unless -keep, " +
		"removed first; with 2 nothing was created or changed.",
}

// byteSize is a size flag (cli.Size: 4096, 64K, 256M, 1G, 1GiB, 1.5G).
type byteSize = cli.Size

// sizeUnits are the suffixes of -size, for its help.
const sizeUnits = "K, M, G or T"

// byteString prints n in the largest binary unit that divides it.
func byteString(n int64) string { return cli.FormatSize(n) }
