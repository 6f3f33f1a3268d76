package persist

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist/device"
)

// Mode is how a region makes stores durable.
type Mode uint8

const (
	// ModeFlush writes lines back with a flush instruction (CLWB, else
	// CLFLUSHOPT, else CLFLUSH) and waits with SFENCE: real PMem mapped
	// with MAP_SYNC, or any mapping when PMem is forced.
	ModeFlush Mode = iota + 1
	// ModeEADR only fences: the CPU caches are inside the persistence
	// domain (eADR, "auto flush"), so a store is durable once it is
	// globally visible. Set by detection or by BRAID_NO_FLUSH=1.
	ModeEADR
	// ModeMsync makes ranges durable with msync(2), page by page: an
	// ordinary file (not DAX) that is not forced to the PMem path.
	ModeMsync
)

func (m Mode) String() string {
	switch m {
	case ModeFlush:
		return "flush"
	case ModeEADR:
		return "eadr"
	case ModeMsync:
		return "msync"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// FlushInstr is the instruction a ModeFlush region writes lines back with.
type FlushInstr uint8

const (
	FlushAuto       FlushInstr = iota // the best the CPU has: CLWB > CLFLUSHOPT > CLFLUSH
	FlushCLWB                         // CLWB (keeps the line cached)
	FlushCLFLUSHOPT                   // CLFLUSHOPT (evicts, weakly ordered)
	FlushCLFLUSH                      // CLFLUSH (evicts, ordered, slowest)
)

func (f FlushInstr) String() string {
	switch f {
	case FlushAuto:
		return "auto"
	case FlushCLWB:
		return "clwb"
	case FlushCLFLUSHOPT:
		return "clflushopt"
	case FlushCLFLUSH:
		return "clflush"
	}
	return fmt.Sprintf("FlushInstr(%d)", uint8(f))
}

func (f FlushInstr) supported() bool {
	switch f {
	case FlushCLWB:
		return asm.HasCLWB
	case FlushCLFLUSHOPT:
		return asm.HasCLFLUSHOPT
	case FlushCLFLUSH:
		return asm.HasCLFLUSH
	}
	return false
}

// DefaultMovntThreshold is the copy size, in bytes, from which Copy and Set
// use streaming (non-temporal) stores when neither an option, the
// environment nor a device profile says otherwise. libpmem uses 256 B; on
// the machine braid is developed on (AMD EPYC, tmpfs) streaming stores
// already win at 64 B — see the persist README for the measurement and
// `pmbench -mode copy` to measure your own device.
const DefaultMovntThreshold = 64

// Options configure Map and Anonymous. A nil *Options means the defaults.
// A value set here (Flush, MovntThreshold, Profile) wins over the
// environment variables, which win over the defaults; a boolean switch
// (ForcePMem, FenceOnly, NoMovnt) is on when either the option or its
// environment variable turns it on.
type Options struct {
	// Size of the mapping in bytes. Required to create a file; when
	// opening an existing file, 0 means the file's size and a larger size
	// than the file's is an error (ErrTooSmall).
	Size int64
	// Create creates the file when it does not exist.
	Create bool
	// Exclusive, with Create, fails when the file already exists.
	Exclusive bool
	// Perm is the permission of a created file; 0 means 0o644.
	Perm os.FileMode
	// ReadOnly maps the file read-only; writes through the region then
	// return ErrReadOnly (writes through Bytes() fault).
	ReadOnly bool
	// Sparse skips preallocation. By default every block of the file is
	// allocated with fallocate(2) when it is created or opened for
	// writing, so a full file system is an error here and never a SIGBUS
	// on a later store.
	Sparse bool
	// NoPrefault skips touching every page at map time (MAP_POPULATE).
	NoPrefault bool
	// ForcePMem takes the PMem path (flush instructions, no msync) even
	// when the file is not on DAX — for benchmarks on tmpfs, where nothing
	// is durable anyway. Environment: BRAID_FORCE_PMEM=1.
	ForcePMem bool
	// FenceOnly treats the platform as eADR: no flush instructions, fences
	// only. Environment: BRAID_NO_FLUSH=1.
	FenceOnly bool
	// Flush picks the flush instruction; FlushAuto picks the best the CPU
	// has, minus those turned off by BRAID_NO_CLWB=1 and
	// BRAID_NO_CLFLUSHOPT=1.
	Flush FlushInstr
	// NoMovnt turns streaming stores off in Copy and Set (unless a call
	// asks for them with NonTemporal). Environment: BRAID_NO_MOVNT=1.
	NoMovnt bool
	// MovntThreshold is the size from which Copy and Set use streaming
	// stores; 0 means BRAID_MOVNT_THRESHOLD, else the profile's, else
	// DefaultMovntThreshold.
	MovntThreshold int
	// Profile is a device profile (written by pmbench); its measured
	// MovntThreshold is used when none is set above. When nil, the file
	// named by BRAID_PROFILE is loaded if that variable is set.
	Profile *device.Profile
	// Counters makes the region count its media traffic (fences, lines
	// written back, bytes streamed; Region.Traffic). A region that counts
	// sends every flush and fence through the counter, with its real
	// instruction, and Copy and Set store the words they would stream
	// with ordinary stores written back line by line; a region that does
	// not count pays nothing for the option. Not for a file in msync mode
	// (Map returns ErrUnsupported: force the PMem path, or drop it).
	Counters bool
	// Device is an emulated device (persist/device) that the region charges
	// for its writes (Copy, Set, Flush, Persist) and for the reads it is
	// told of (ReadSeq, ReadRand, ReadRandN, ReadStrided, Load): the
	// calling goroutine sleeps for the device time its bytes cost. Regions
	// of one device share one Device. Nil means BRAID_DEVICE: a shipped
	// profile's name (device.Names) or a profile file with a model, one
	// device for every region of the process that names it; unset, "" or
	// "dram" means none. A region without a device runs the code it ran
	// before the option existed.
	Device Device
	// Faults are failures injected into this region's calls to the
	// platform (failed syncs, a full device, poisoned pages as it is
	// mapped), for tests; nil injects none. Structures that map their own
	// files (kv, sort) pass theirs through to every region they map.
	Faults *Faults
}

// Validate reports the first problem with the options, wrapping ErrInvalid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	switch {
	case o.Size < 0:
		return fmt.Errorf("%w: Size %d is negative: want a byte count (0 when opening: the file's size)", ErrInvalid, o.Size)
	case int64(int(o.Size)) != o.Size:
		return fmt.Errorf("%w: Size %d does not fit in an int", ErrInvalid, o.Size)
	case o.Exclusive && !o.Create:
		return fmt.Errorf("%w: Exclusive needs Create", ErrInvalid)
	case o.ReadOnly && o.Create:
		return fmt.Errorf("%w: ReadOnly and Create exclude each other", ErrInvalid)
	case o.MovntThreshold < 0:
		return fmt.Errorf("%w: MovntThreshold %d is negative: want 0 (the default) or a size in bytes", ErrInvalid, o.MovntThreshold)
	case o.Flush > FlushCLFLUSH:
		return fmt.Errorf("%w: unknown flush instruction %d: want FlushAuto (0), FlushCLWB (1), FlushCLFLUSHOPT (2) or FlushCLFLUSH (3)", ErrInvalid, o.Flush)
	case o.Flush != FlushAuto && !o.Flush.supported():
		return fmt.Errorf("%w: this CPU (or build) has no %s", ErrUnsupported, o.Flush)
	case o.Perm&^os.ModePerm != 0:
		return fmt.Errorf("%w: Perm %v has bits beyond the permission bits", ErrInvalid, o.Perm)
	}
	if o.Profile != nil {
		if err := o.Profile.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// config is what a region runs with, resolved from options, environment
// and CPU features.
type config struct {
	force, fenceOnly bool
	flush            FlushInstr
	ntMin            int // streaming stores from this size; noNT when off
	ntOff            bool
	count            bool    // Options.Counters
	dev              Device  // Options.Device or BRAID_DEVICE
	faults           *Faults // Options.Faults
}

const noNT = int(^uint(0) >> 1)

// envBool reads a BRAID_* switch: unset, "" or "0" is false, "1" is true,
// anything else an error naming the variable.
func envBool(name string) (bool, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false, nil
	}
	switch strings.TrimSpace(v) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, fmt.Errorf("%w: environment variable %s=%q: want 0 or 1", ErrInvalid, name, v)
}

func resolve(o *Options) (config, error) {
	var c config
	if o == nil {
		o = &Options{}
	}
	if err := o.Validate(); err != nil {
		return c, err
	}
	var err error
	get := func(name string) bool {
		b, e := envBool(name)
		if e != nil && err == nil {
			err = e
		}
		return b
	}
	c.count = o.Counters
	c.dev = o.Device
	c.faults = o.Faults
	if noDevice(c.dev) {
		if c.dev, err = envDevice(); err != nil {
			return c, err
		}
	}
	c.force = o.ForcePMem || get("BRAID_FORCE_PMEM")
	c.fenceOnly = o.FenceOnly || get("BRAID_NO_FLUSH")
	noCLWB, noOpt := get("BRAID_NO_CLWB"), get("BRAID_NO_CLFLUSHOPT")
	c.ntOff = o.NoMovnt || get("BRAID_NO_MOVNT")
	if err != nil {
		return c, err
	}

	c.flush = o.Flush
	if c.flush == FlushAuto {
		switch {
		case asm.HasCLWB && !noCLWB:
			c.flush = FlushCLWB
		case asm.HasCLFLUSHOPT && !noOpt:
			c.flush = FlushCLFLUSHOPT
		case asm.HasCLFLUSH:
			c.flush = FlushCLFLUSH
		}
	}

	c.ntMin = DefaultMovntThreshold
	prof := o.Profile
	if prof == nil {
		if path := os.Getenv("BRAID_PROFILE"); path != "" {
			if prof, err = device.LoadProfile(path); err != nil {
				return c, fmt.Errorf("persist: BRAID_PROFILE: %w", err)
			}
		}
	}
	if prof != nil && prof.MovntThreshold > 0 {
		c.ntMin = prof.MovntThreshold
	}
	if v, ok := os.LookupEnv("BRAID_MOVNT_THRESHOLD"); ok && v != "" {
		n, perr := strconv.Atoi(strings.TrimSpace(v))
		if perr != nil || n < 0 {
			return c, fmt.Errorf("%w: environment variable BRAID_MOVNT_THRESHOLD=%q: want a byte count >= 0", ErrInvalid, v)
		}
		c.ntMin = n
	}
	if o.MovntThreshold > 0 {
		c.ntMin = o.MovntThreshold
	}
	if c.ntOff || asm.NTPath() == "none" {
		c.ntOff = true
		c.ntMin = noNT
	}
	return c, nil
}
