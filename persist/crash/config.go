package crash

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// Config says what to simulate and where to crash.
type Config struct {
	// Regions are the simulated files. They crash together: a crash image
	// is one image of every region, taken at the same instant.
	Regions []Spec
	// Mode is the platform simulated: persist.ModeFlush (flush
	// instructions, the default), persist.ModeEADR (caches are persistent:
	// every store is durable at the next fence) or persist.ModeMsync (a
	// Flush syncs whole pages).
	Mode persist.Mode
	// LineAtomic makes whole 64-byte lines the unit that survives a crash
	// or not (lines are written back whole). The default is stricter: only
	// aligned 8-byte words are atomic, as the hardware guarantees.
	LineAtomic bool
	// Points selects the crash points; 0 means AtFences|AtEnd. Crash
	// points marked with Run.Crash are always tested.
	Points Points
	// Fences, when set, restricts fence crash points to these fence
	// numbers (1 is the first fence of the workload).
	Fences []int
	// SampleFences, when > 0, tests only this many fences, chosen with
	// Seed (the workload is run once more beforehand to count them).
	SampleFences int
	// PerStack tests only the first fence of every distinct call stack.
	PerStack bool
	// MaxImages bounds the crash images checked per crash point: when the
	// surviving/lost combinations number at most MaxImages all of them are
	// checked (exhaustive), else MaxImages are chosen: nothing survived,
	// everything survived, each unit alone lost or alone survived, then
	// seeded random subsets. 0 means DefaultMaxImages.
	MaxImages int
	// RecoveryCrashes is how many images per crash point also get crashes
	// injected into their recovery (at every fence the check issues, with
	// up to MaxImages/4 images each): a second crash while recovering
	// must still recover. 0 means DefaultRecoveryCrashes; negative, none.
	RecoveryCrashes int
	// Seed makes sampling and garbage reproducible.
	Seed uint64
	// KeepGoing reports every failing crash point instead of stopping at
	// the first.
	KeepGoing bool
	// NoShrink skips reducing a failing image to the fewest surviving
	// words before it is reported.
	NoShrink bool
}

// Spec describes one simulated region.
type Spec struct {
	Name string
	Size int // bytes, > 0
	// Garbage fills the region with seeded random bytes instead of zeros
	// before the workload starts, as in a recycled file: recovery that
	// trusts bytes it never wrote is caught.
	Garbage bool
	// Options for the simulated region: only MovntThreshold and NoMovnt
	// apply (see persist.NewSimulated).
	Options *persist.Options
}

// Points is a set of crash-point kinds.
type Points uint

const (
	AtFences     Points = 1 << iota // before every fence takes effect
	AtBoundaries                    // at Run.Boundary and Run.Durable
	AtClose                         // when a region is closed
	AtEnd                           // after the workload returns
)

// MaxRegionSize bounds a simulated region: the simulator keeps a live
// and a media image of each.
const MaxRegionSize = 1 << 30

// Defaults.
const (
	DefaultMaxImages       = 96
	DefaultRecoveryCrashes = 2
)

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("crash: bad config")

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if d.Mode == 0 {
		d.Mode = persist.ModeFlush
	}
	if d.Points == 0 {
		d.Points = AtFences | AtEnd
	}
	if d.MaxImages == 0 {
		d.MaxImages = DefaultMaxImages
	}
	if d.RecoveryCrashes == 0 {
		d.RecoveryCrashes = DefaultRecoveryCrashes
	}
	switch {
	case len(d.Regions) == 0:
		return d, fmt.Errorf("%w: no regions", ErrConfig)
	case d.Mode < persist.ModeFlush || d.Mode > persist.ModeMsync:
		return d, fmt.Errorf("%w: unknown mode %d", ErrConfig, d.Mode)
	case d.MaxImages < 1:
		return d, fmt.Errorf("%w: MaxImages %d < 1", ErrConfig, d.MaxImages)
	case d.SampleFences < 0:
		return d, fmt.Errorf("%w: SampleFences %d < 0", ErrConfig, d.SampleFences)
	case d.Points&^(AtFences|AtBoundaries|AtClose|AtEnd) != 0:
		return d, fmt.Errorf("%w: unknown Points bits %#x", ErrConfig, uint(d.Points))
	}
	seen := map[string]bool{}
	for _, s := range d.Regions {
		if s.Name == "" || seen[s.Name] {
			return d, fmt.Errorf("%w: region names must be unique and non-empty (%q)", ErrConfig, s.Name)
		}
		seen[s.Name] = true
		if s.Size <= 0 || s.Size%8 != 0 || s.Size > MaxRegionSize {
			return d, fmt.Errorf("%w: region %q size %d: want a positive multiple of 8 up to %d", ErrConfig, s.Name, s.Size, MaxRegionSize)
		}
	}
	for _, f := range d.Fences {
		if f < 1 {
			return d, fmt.Errorf("%w: fence number %d < 1", ErrConfig, f)
		}
	}
	return d, nil
}
