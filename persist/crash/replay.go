package crash

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

// ReplayEnv is the environment variable that replays one failure.
// "seq=N image=I" names the crash point and the image there; the image's
// surviving units follow exactly as the failure was reported (after
// shrinking), in the shorter of two forms: "keep=K,K:C,K-L" (these units
// survived — at their newest value, or at candidate C — and no other) or
// "drop=K,K-L" (every unit survived but these; a keep= beside it names
// units at another candidate). "rseq=R rimage=J" is a crash during
// recovery, "durable" a durability point that found data not durable, and
// "sched=S steps=N" the schedule of a concurrent workload (Run.Go; N,
// for a PCT schedule, the decisions of schedule 0 it spread its priority
// changes over; "blocked=B" when goroutines of the failing run blocked in
// Go's synchronization B times, which the schedule does not decide), and
// "test=NAME call=C" the Test call it belongs to (other calls run
// normally). Failures print the exact command line; Failure.ReplayKey
// holds the value.
const ReplayEnv = "BRAID_CRASH_REPLAY"

// replay is a parsed ReplayEnv.
type replay struct {
	seq, image, rseq, rimage int
	sched, steps             int      // the schedule of a concurrent workload; PCT's estimate
	blocked                  int      // turns the failing run passed on because a goroutine blocked in Go's synchronization
	exact                    bool     // keep= or drop= given: the image as reported
	base                     bool     // drop= form: every unit survived unless listed
	keep                     [][2]int // unit, candidate (-1: the newest)
	drop                     []int    // units lost
	durable                  bool
	why                      string // why a replay may not fit the run (set by the run)
	test                     string // the Test it belongs to ("" for Check)
	call                     int
}

func parseReplay(s string) (*replay, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: %s=%q: %s (want seq=N image=I [keep=K,K:C,K-L,...] [drop=K,K-L,...] [rseq=R rimage=J] [durable] [sched=S [steps=N] [blocked=B]] [test=NAME call=C])", ErrConfig, ReplayEnv, s, why)
	}
	r := &replay{image: -1, rimage: -1}
	for _, f := range strings.Fields(s) {
		if f == "durable" {
			r.durable = true
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, bad(fmt.Sprintf("%q is not key=value", f))
		}
		switch k {
		case "test":
			r.test = v
			continue
		case "keep", "drop":
			r.exact = true
			r.base = r.base || k == "drop"
			if err := r.parseUnits(k, v); err != nil {
				return nil, bad(err.Error())
			}
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, bad(fmt.Sprintf("%s=%q is not a number", k, v))
		}
		switch k {
		case "seq":
			r.seq = n
		case "image":
			r.image = n
		case "rseq":
			r.rseq = n
		case "rimage":
			r.rimage = n
		case "call":
			r.call = n
		case "sched":
			r.sched = n
		case "steps":
			r.steps = n
		case "blocked":
			r.blocked = n
		default:
			return nil, bad(fmt.Sprintf("unknown key %q", k))
		}
	}
	if r.seq == 0 {
		return nil, bad("seq=N is missing")
	}
	return r, nil
}

// whyNot says why a replay may not fit the run of schedule sc (nil:
// before it ran). A schedule replays exactly whatever GOMAXPROCS as long
// as its goroutines wait for each other only through the harness (Run.Go,
// Run.Yield, persist operations); where one blocked in Go's
// synchronization (a sync.Mutex, a channel) in the failing run or in the
// replay, which goroutine a released lock goes to is Go's runtime's
// choice, and so is the interleaving from there on.
func (r *replay) whyNot(sc *sched) string {
	const changed = "the code or the test changed since the failure was printed"
	blocked := 0
	if sc != nil {
		blocked = sc.blocked
		if len(sc.unmanaged) > 0 {
			return fmt.Sprintf("%s, or the interleaving differed: %d goroutines not started with Run.Go reached the simulator, and only Run.Go's are scheduled reproducibly", changed, len(sc.unmanaged))
		}
	}
	if r.blocked > 0 || blocked > 0 {
		return fmt.Sprintf("%s, or the interleaving differed: goroutines blocked in Go's synchronization %d times in the failing run and %d times in this one, and a lock released and taken again between two scheduling points may go to either goroutine (only schedules whose goroutines wait for each other through the harness replay exactly)", changed, r.blocked, blocked)
	}
	if sc == nil {
		return changed
	}
	return changed + " (the schedule replays exactly whatever GOMAXPROCS)"
}

// parseUnits reads the entries of keep= or drop=: K, K-L, or (keep only)
// K:C.
func (r *replay) parseUnits(key, v string) error {
	if v == "" {
		return nil
	}
	for _, e := range strings.Split(v, ",") {
		a, c, hasC := strings.Cut(e, ":")
		lo, hi, isRange := strings.Cut(a, "-")
		u, err1 := strconv.Atoi(lo)
		end, err2 := u, error(nil)
		if isRange {
			end, err2 = strconv.Atoi(hi)
		}
		cand, err3 := -1, error(nil)
		if hasC {
			cand, err3 = strconv.Atoi(c)
		}
		if err1 != nil || err2 != nil || err3 != nil || u < 0 || end < u || hasC && (isRange || cand < 1 || key == "drop") {
			if key == "drop" {
				return fmt.Errorf("drop entry %q: want unit or first-last", e)
			}
			return fmt.Errorf("keep entry %q: want unit, first-last or unit:candidate", e)
		}
		for x := u; x <= end; x++ {
			if key == "drop" {
				r.drop = append(r.drop, x)
			} else {
				r.keep = append(r.keep, [2]int{x, cand})
			}
		}
	}
	return nil
}

// replayKey is the ReplayEnv value of image i at crash point seq, with the
// units of choice that survived, in the shorter form.
func replayKey(seq, image int, units []unit, choice []int, rseq, rimage int) string {
	var keep, drop, other strings.Builder
	runs := func(b *strings.Builder, in func(k int) bool) {
		sep := ""
		if b.Len() > 0 {
			sep = ","
		}
		for k := 0; k < len(choice); k++ {
			if !in(k) {
				continue
			}
			j := k
			for j+1 < len(choice) && in(j+1) {
				j++
			}
			if j > k {
				fmt.Fprintf(b, "%s%d-%d", sep, k, j)
			} else {
				fmt.Fprintf(b, "%s%d", sep, k)
			}
			sep, k = ",", j
		}
	}
	newest := func(k int) bool { return choice[k] == units[k].n-1 }
	sep := ""
	for k, c := range choice {
		if c != 0 && !newest(k) {
			fmt.Fprintf(&other, "%s%d:%d", sep, k, c)
			sep = ","
		}
	}
	keep.WriteString(other.String())
	runs(&keep, newest)
	runs(&drop, func(k int) bool { return choice[k] == 0 })
	form := "keep=" + keep.String()
	if d := "drop=" + drop.String(); other.Len() > 0 {
		if d += " keep=" + other.String(); len(d) < len(form) {
			form = d
		}
	} else if len(d) < len(form) {
		form = d
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seq=%d image=%d %s", seq, image, form)
	if rseq > 0 {
		fmt.Fprintf(&b, " rseq=%d rimage=%d", rseq, rimage)
	}
	return b.String()
}

// apply sets choice to the replayed image, checking it fits the units.
func (r *replay) apply(units []unit, choice []int) error {
	for k := range choice {
		choice[k] = 0
		if r.base {
			choice[k] = units[k].n - 1
		}
	}
	missing := func(what string) error {
		return fmt.Errorf("%w: %s: %s does not exist at crash point seq=%d (%d units): %s", ErrConfig, ReplayEnv, what, r.seq, len(units), r.why)
	}
	for _, u := range r.drop {
		if u >= len(units) {
			return missing(fmt.Sprintf("drop=%d", u))
		}
		choice[u] = 0
	}
	for _, kc := range r.keep {
		u, c := kc[0], kc[1]
		if u >= len(units) || c >= units[u].n {
			return missing(fmt.Sprintf("keep=%d:%d", u, c))
		}
		if c < 0 {
			c = units[u].n - 1
		}
		choice[u] = c
	}
	return nil
}

// testScope is the Test call a crash test runs in.
type testScope struct {
	name string
	call int
	cmd  func(key string) string
}

// buildFlags are the go test flags that change what the simulator does
// (purego changes which copies stream), as this test binary was built.
func buildFlags() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var out string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "-race" && s.Value == "true":
			out += " -race"
		case s.Key == "-tags" && s.Value != "":
			out += " -tags " + shellQuote(s.Value)
		}
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
