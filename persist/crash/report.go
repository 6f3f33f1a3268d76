package crash

import (
	"fmt"
	"strings"
	"time"
)

// Word is an 8-byte word of a region.
type Word struct {
	Region string
	Off    int    // byte offset
	Media  uint64 // durable value before the crash
	Value  uint64 // value found in the crash image (or the live value)
	Torn   bool   // Value is torn: only some of its bytes are new (Config.Tear)
	More   int    // on the last word of a truncated list: how many more
}

func (w Word) String() string {
	s := fmt.Sprintf("%s+%#x: %#016x -> %#016x", w.Region, w.Off, w.Media, w.Value)
	if w.Torn {
		s += " (torn: only some of its bytes reached media)"
	}
	return s
}

func describeWords(ws []Word) string {
	parts := make([]string, 0, len(ws))
	more := 0
	for _, w := range ws {
		parts = append(parts, w.String())
		more += w.More
	}
	s := strings.Join(parts, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// Failure is a crash image whose check failed (or a durability point that
// found data not durable).
type Failure struct {
	Point      Point
	Image      int  // image number at Point
	Images     int  // images planned at Point
	Exhaustive bool // all images of Point were enumerated
	Class      int  // how the image was chosen (ClassNothing ...), before shrinking
	Seed       uint64
	// Survived are the words that reached media beyond the durable state
	// in this image, shrunk to the fewest that still fail; Lost are the
	// dirty words that did not (their Value is the one that was lost).
	Survived []Word
	Lost     []Word
	// A crash during recovery: where in the recovery, the image there and
	// its surviving words.
	Recovery         *Point
	RecoveryImage    int
	RecoverySurvived []Word
	// NotDurable lists words written but not durable at a durability point.
	NotDurable []Word
	Err        error // what the check returned
	// Replay is the command line that replays exactly this image (Test
	// only): the check runs once, on the image as reported.
	Replay string
	// ReplayKey is the ReplayEnv value that replays this failure (with
	// Check: set the variable and call Check again).
	ReplayKey string
	// Schedule names the interleaving of a concurrent workload (Run.Go)
	// the failure came in and the goroutine whose turn it was (0 is the
	// workload's, 1 the first Run.Go): "schedule 3 (PCT, 2 priority
	// changes), goroutine 2's turn"; "" for one goroutine.
	Schedule string
}

// Summary is a one-line description.
func (f *Failure) Summary() string {
	if f.NotDurable != nil {
		return fmt.Sprintf("not durable at %s: %d words", f.Point, len(f.NotDurable))
	}
	s := fmt.Sprintf("%s, image %d/%d, %d words survived", f.Point, f.Image, f.Images, len(f.Survived))
	if len(f.Lost) > 0 && len(f.Lost) < len(f.Survived) {
		s += fmt.Sprintf(", %d lost", len(f.Lost))
	}
	if f.Recovery != nil {
		s += fmt.Sprintf("; crash during recovery at %s, image %d", f.Recovery, f.RecoveryImage)
	}
	return s + ": " + f.Err.Error()
}

func (f *Failure) Error() string {
	var b strings.Builder
	if f.NotDurable != nil {
		fmt.Fprintf(&b, "crash: at %s: %v\n", f.Point, f.Err)
		if f.Schedule != "" {
			fmt.Fprintf(&b, "  in %s, seed %d\n", f.Schedule, f.Seed)
		}
		if f.Replay != "" {
			fmt.Fprintf(&b, "  replay: %s\n", f.Replay)
		}
		return b.String()
	}
	mode := "sampled: " + ClassNames[f.Class]
	if f.Exhaustive {
		mode = "exhaustive"
	}
	fmt.Fprintf(&b, "crash: check failed after a crash at %s\n", f.Point)
	fmt.Fprintf(&b, "  image %d of %d (%s), seed %d\n", f.Image, f.Images, mode, f.Seed)
	if f.Schedule != "" {
		fmt.Fprintf(&b, "  in %s\n", f.Schedule)
	}
	if len(f.Lost) > 0 && len(f.Lost) < len(f.Survived) {
		fmt.Fprintf(&b, "  survived (reached media beyond the last fence): %d words, all dirty words but these\n", len(f.Survived))
		writeWords(&b, "lost (did not reach media)", f.Lost)
	} else {
		writeWords(&b, "survived (reached media beyond the last fence)", f.Survived)
	}
	if f.Recovery != nil {
		fmt.Fprintf(&b, "  then a crash during recovery at %s, image %d\n", f.Recovery, f.RecoveryImage)
		writeWords(&b, "survived in recovery", f.RecoverySurvived)
	}
	fmt.Fprintf(&b, "  check: %v\n", f.Err)
	if f.Replay != "" {
		fmt.Fprintf(&b, "  replay: %s\n", f.Replay)
	}
	return b.String()
}

func writeWords(b *strings.Builder, title string, ws []Word) {
	fmt.Fprintf(b, "  %s: %d words\n", title, len(ws))
	for i, w := range ws {
		if i == 16 {
			fmt.Fprintf(b, "    ... %d more\n", len(ws)-16)
			break
		}
		fmt.Fprintf(b, "    %s\n", w)
	}
}

// Finding kinds: performance and hygiene, reported, never failed.
const (
	KindRedundantFlush   = "redundant flush"    // a flush of lines with nothing new to write back
	KindRedundantFence   = "redundant fence"    // a fence with nothing flushed since the last one
	KindUnflushedAtClose = "unflushed at close" // stores not durable when a region was closed
)

// Finding counts one kind of finding at one call site.
type Finding struct {
	Kind   string
	Site   string
	Func   string
	Caller string // as Point.Caller: the first caller outside braid's packages
	Count  int
	Detail string // of the first occurrence
}

// Coverage says what the images of a crash test's crash points covered
// (crash points of the workload; crash points inside recoveries are
// counted in Report.RecoveryPoints).
type Coverage struct {
	Exhaustive int // crash points whose every combination was checked
	Sampled    int // crash points beyond MaxImages: every systematic class, then random images
	MaxUnits   int // the most units (dirty words, or lines) at one crash point
	TornUnits  int // units that had torn values among their candidates
	// PairsPaths counts the crash points where every pair of units was
	// checked lost together (the first of each path, see Config.Pairs);
	// PairsSkipped the paths whose first crash point had more units than
	// Config.Pairs, where they were not; PairsSkippedUnits is the most
	// units at one of those.
	PairsPaths        int
	PairsSkipped      int
	PairsSkippedUnits int
	// AloneSkipped counts the crash points where Config.MaxAlone left
	// units without their alone images, AloneSkippedUnits those units.
	AloneSkipped      int
	AloneSkippedUnits int
	// RecoveryPartial counts crash points inside recoveries where the
	// budget (MaxImages/4, at least 8) ended the alone images before
	// every unit had its own.
	RecoveryPartial int
	Images          [NumClasses]int // images checked, by class
	Recovery        [NumClasses]int // of those, images whose recovery was crashed too
}

// Report is the outcome of a crash test.
type Report struct {
	Fences         int // fences the workload issued
	Points         int // crash points tested
	Images         int // crash images planned and checked at those points
	ShrinkImages   int // images checked again while shrinking failures
	RecoveryPoints int // crash points inside recoveries
	RecoveryImages int // images of crashes inside recoveries
	Coverage       Coverage
	Elapsed        time.Duration
	Failures       []*Failure
	Findings       []Finding
	// Replayed is the ReplayEnv value this run replayed ("" for a full
	// run).
	Replayed string
	// Concurrent workloads (Run.Go): the schedules run (each a full run
	// of the workload), the most threads in one, and the changes of turn
	// in all.
	Schedules, Threads, Switches int
	// Blocked counts the turns passed on because the goroutine with the
	// turn blocked in Go's synchronization (a sync.Mutex, a channel).
	Blocked int
}

// Failed reports whether any failure was found.
func (r *Report) Failed() bool { return len(r.Failures) > 0 }

func (r *Report) String() string {
	var b strings.Builder
	rate := 0.0
	if r.Elapsed > 0 {
		rate = float64(r.Images+r.ShrinkImages+r.RecoveryImages) / r.Elapsed.Seconds()
	}
	fmt.Fprintf(&b, "crash: %d fences, %d crash points, %d images", r.Fences, r.Points, r.Images)
	if r.ShrinkImages > 0 {
		fmt.Fprintf(&b, " (+%d re-checked while shrinking)", r.ShrinkImages)
	}
	fmt.Fprintf(&b, ", %d recovery crash points, %d recovery images in %v (%.0f images/s), %d failures",
		r.RecoveryPoints, r.RecoveryImages, r.Elapsed.Round(time.Millisecond), rate, len(r.Failures))
	if r.Replayed != "" {
		fmt.Fprintf(&b, " (replay of %s)", r.Replayed)
	}
	if r.Schedules > 0 {
		fmt.Fprintf(&b, "; %d schedules of %d goroutines, %d changes of turn (%d on blocking)", r.Schedules, r.Threads, r.Switches, r.Blocked)
	}
	if r.Replayed == "" && r.Points > 0 {
		b.WriteString("\n  " + r.Coverage.String())
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n  %s x%d at %s (%s)", f.Kind, f.Count, f.Site, f.Func)
		if f.Caller != "" {
			fmt.Fprintf(&b, ", called from %s", f.Caller)
		}
		fmt.Fprintf(&b, ": %s", f.Detail)
	}
	return b.String()
}

func (c *Coverage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "coverage: %d crash points exhaustive, %d sampled (most units at one: %d", c.Exhaustive, c.Sampled, c.MaxUnits)
	if c.TornUnits > 0 {
		fmt.Fprintf(&b, ", %d with torn values", c.TornUnits)
	}
	if c.PairsPaths > 0 {
		fmt.Fprintf(&b, ", pairs at %d", c.PairsPaths)
	}
	b.WriteString("); images")
	sep := " "
	for k, n := range c.Images {
		if n > 0 {
			fmt.Fprintf(&b, "%s%s %d", sep, ClassNames[k], n)
			sep = ", "
		}
	}
	b.WriteString("; recovery crashed in")
	sep = " "
	for k, n := range c.Recovery {
		if n > 0 {
			fmt.Fprintf(&b, "%s%s %d", sep, ClassNames[k], n)
			sep = ", "
		}
	}
	if sep == " " {
		b.WriteString(" none")
	}
	if c.AloneSkipped > 0 {
		fmt.Fprintf(&b, "\n  not covered: %d units at %d crash points had no alone images (Config.MaxAlone); set MaxAlone to 0 to cover every unit", c.AloneSkippedUnits, c.AloneSkipped)
	}
	if c.RecoveryPartial > 0 {
		fmt.Fprintf(&b, "\n  partly covered: %d crash points inside recoveries had more units than their budget of alone images (MaxImages/4); raise MaxImages to cover them", c.RecoveryPartial)
	}
	if c.PairsSkipped > 0 {
		fmt.Fprintf(&b, "\n  not covered: pairs of units lost together on %d paths of up to %d units (more than Config.Pairs); set Pairs to %d to check them (n(n-1)/2 images each)",
			c.PairsSkipped, c.PairsSkippedUnits, c.PairsSkippedUnits)
	}
	return b.String()
}
