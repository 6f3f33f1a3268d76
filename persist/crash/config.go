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
	// or not (lines are written back whole, and do not tear). The default
	// is stricter: only aligned 8-byte words are atomic, as the hardware
	// guarantees, and of those only the ones the code wrote atomically
	// (see Tear).
	LineAtomic bool
	// Tear says how a dirty word that was not written with one atomic
	// 8-byte store (persist.Store64, or a streaming store of Copy/Set) may
	// be found after a crash: besides its old and new values, with only
	// some of its bytes changed. The default (TearDefault) is Tear4;
	// TearOff keeps every aligned word whole. Ignored with LineAtomic.
	Tear Tear
	// Points selects the crash points; 0 means AtFences|AtEnd. Crash
	// points marked with Run.Crash are always tested.
	Points Points
	// Fences, when set, restricts fence crash points to these fence
	// numbers (1 is the first fence of the workload).
	Fences []int
	// SampleFences, when > 0, tests only this many fences, chosen with
	// Seed (the workload is run once more beforehand to count them and
	// tell them apart): first one fence of every distinct call stack and
	// dirty-set shape, rarest first, then seeded random fences.
	SampleFences int
	// PerStack tests only the first fence of every distinct call stack
	// and dirty-set shape (see Shape).
	PerStack bool
	// MaxImages is the exhaustive bound: when the combinations of a crash
	// point number at most MaxImages all of them are checked. Beyond it
	// the systematic classes are checked in full whatever their number
	// (nothing survived, everything survived, each unit alone, the
	// covering array, every pair alone lost up to Pairs units), then
	// distinct seeded random images until MaxImages images in all. 0
	// means DefaultMaxImages.
	MaxImages int
	// MaxAlone bounds the units of a crash point beyond the exhaustive
	// bound that get their alone images (lost alone, survived alone, torn
	// alone); 0, the default, means every unit. A test whose workload is
	// too costly for every unit sets it: the units covered are then a run
	// of MaxAlone units starting at a seeded place that moves from crash
	// point to crash point, and Report.Coverage counts the units left
	// out.
	MaxAlone int
	// Strength is the strength t of the covering array checked beyond the
	// exhaustive bound: for every t units, every combination of them
	// surviving or lost is in some image. 0 means 2; 3 is the most;
	// negative, no covering array.
	Strength int
	// Pairs is the most dirty units at a crash point for which every pair
	// of units is also checked lost together while all the others
	// survived (n(n-1)/2 images): what a checksum blind to two words
	// needs. It is checked at the first crash point of every distinct
	// path (fence call stack and dirty-set shape, as PerStack tells them
	// apart), or at every crash point with PairsEveryPoint. 0 means
	// DefaultPairs; negative, never. Paths with more units are counted in
	// Report.Coverage.PairsSkipped.
	Pairs           int
	PairsEveryPoint bool
	// RecoveryCrashes says which images of a crash point also get
	// crashes injected into their recovery (at every fence the check
	// issues, with up to MaxImages/4 images each): a second crash while
	// recovering must still recover. Those are the nothing-survived and
	// the everything-survived images, and RecoveryCrashes images of one
	// other class (alone, covering array, pairs, random, or an exhaustive
	// plan's other images), the class whose recoveries were crashed least
	// so far in the test: every class in turn. 0 means
	// DefaultRecoveryCrashes; negative, none.
	RecoveryCrashes int
	// Seed makes sampling and garbage reproducible.
	Seed uint64
	// KeepGoing reports every failing crash point instead of stopping at
	// the first.
	KeepGoing bool
	// NoShrink skips reducing a failing image to the fewest surviving
	// words before it is reported.
	NoShrink bool
	// Poison, when set, poisons a seeded random range of every crash
	// image before the check runs (poison.go: the poison model).
	Poison *Poison // Schedules is how many interleavings of a concurrent workload (one
	// that starts goroutines with Run.Go) are run, each a full run with
	// its crash points: even-numbered ones pick a seeded random thread at
	// every scheduling point, odd-numbered ones follow seeded thread
	// priorities with 1 to 3 priority changes (PCT). A workload that
	// starts no thread runs once. 0 means DefaultSchedules.
	Schedules int
}

// Spec describes one simulated region.
type Spec struct {
	Name string
	Size int // bytes, > 0
	// Garbage fills the region with seeded random bytes instead of zeros
	// before the workload starts, as in a recycled file: recovery that
	// trusts bytes it never wrote is caught.
	Garbage bool
	// Options for the simulated region: only those persist.NewSimulated
	// takes apply (MovntThreshold, NoMovnt, Counters, Device, Faults).
	Options *persist.Options

	marks *poisonMarks // Run.Poison's ranges, shared by the images of a run (poison.go)
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
	DefaultPairs           = 200
	DefaultRecoveryCrashes = 1
	DefaultSchedules       = 12
)

// Tear is the tearing model of words not written atomically.
type Tear uint8

const (
	TearDefault Tear = iota // Tear4
	TearOff                 // every aligned 8-byte word is found whole: old or new
	Tear4                   // also with one 4-byte half changed and not the other
	Tear1                   // also with only its first k or last k changed bytes new (a byte loop up or down), or one half
)

func (t Tear) String() string {
	switch t {
	case TearDefault:
		return "default"
	case TearOff:
		return "off"
	case Tear4:
		return "4-byte"
	case Tear1:
		return "byte"
	}
	return fmt.Sprintf("Tear(%d)", uint8(t))
}

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
	if d.Strength == 0 {
		d.Strength = 2
	}
	if d.Pairs == 0 {
		d.Pairs = DefaultPairs
	}
	if d.Schedules == 0 {
		d.Schedules = DefaultSchedules
	}

	if d.Tear == TearDefault {
		d.Tear = Tear4
	}
	if d.LineAtomic {
		d.Tear = TearOff // lines are the unit; they do not tear
	}
	switch {
	case len(d.Regions) == 0:
		return d, fmt.Errorf("%w: no regions", ErrConfig)
	case d.Mode < persist.ModeFlush || d.Mode > persist.ModeMsync:
		return d, fmt.Errorf("%w: unknown mode %d", ErrConfig, d.Mode)
	case d.MaxImages < 1:
		return d, fmt.Errorf("%w: MaxImages %d < 1", ErrConfig, d.MaxImages)
	case d.MaxAlone < 0:
		return d, fmt.Errorf("%w: MaxAlone %d < 0", ErrConfig, d.MaxAlone)
	case d.Strength > 3:
		return d, fmt.Errorf("%w: Strength %d: covering arrays of strength 2 and 3 are built (negative: none)", ErrConfig, d.Strength)
	case d.Tear > Tear1:
		return d, fmt.Errorf("%w: unknown Tear %d", ErrConfig, d.Tear)
	case d.Schedules < 0:
		return d, fmt.Errorf("%w: Schedules %d < 0", ErrConfig, d.Schedules)
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
	if err := d.Poison.validate(d.Regions); err != nil {
		return d, err
	}
	for _, f := range d.Fences {
		if f < 1 {
			return d, fmt.Errorf("%w: fence number %d < 1", ErrConfig, f)
		}
	}
	return d, nil
}
