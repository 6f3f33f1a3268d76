package crash

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"strings"
	"sync"
)

// Kinds of crash points.
const (
	KindFence    = "fence"
	KindBoundary = "boundary"
	KindDurable  = "durable"
	KindCrash    = "crash"
	KindClose    = "close"
	KindEnd      = "end"
)

// Point is where a crash was injected.
type Point struct {
	Seq   int    // event number in the run (what a replay names)
	Kind  string // fence, boundary, durable, crash, close or end
	Fence int    // fences so far, this one included when Kind is fence
	Label string // the label given to Boundary/Durable/Crash, or the region closed
	Site  string // file:line of the call that reached the crash point (outside persist); at the end of the workload, of its last fence
	Func  string // the function at Site
	// Caller is "file:line (function)" of the first frame outside braid's
	// own packages — the user's code that called into a braid structure
	// (walog, pagelog, fam, ...) which reached the point — when Site is
	// inside one of them; else "".
	Caller string
}

func (p Point) String() string {
	var b strings.Builder
	switch p.Kind {
	case KindFence:
		fmt.Fprintf(&b, "fence %d", p.Fence)
	case KindEnd:
		// The site is the workload's last fence: its last operation.
		if p.Fence == 0 {
			b.WriteString("end of workload (no fence)")
		} else {
			fmt.Fprintf(&b, "end of workload, after fence %d", p.Fence)
		}
		p.writeSite(&b)
		if p.Label != "" {
			fmt.Fprintf(&b, "; last operation %q", p.Label)
		}
		return b.String()
	default:
		fmt.Fprintf(&b, "%s %q (after fence %d)", p.Kind, p.Label, p.Fence)
	}
	p.writeSite(&b)
	return b.String()
}

// writeSite appends " at SITE (FUNC), called from CALLER", as known.
func (p Point) writeSite(b *strings.Builder) {
	if p.Site != "" {
		fmt.Fprintf(b, " at %s", p.Site)
		if p.Func != "" {
			fmt.Fprintf(b, " (%s)", p.Func)
		}
	}
	if p.Caller != "" {
		fmt.Fprintf(b, ", called from %s", p.Caller)
	}
}

var seedHash = maphash.MakeSeed()

// callSite finds the first caller outside package persist and this
// package, the first outside braid's packages (see Point.Caller), and a
// hash of the whole stack.
func callSite(skip int) (site, fn, caller string, stack uint64) {
	var pcs [48]uintptr
	n := runtime.Callers(skip+1, pcs[:])
	site, fn, caller = siteOf(pcs[:n])
	return site, fn, caller, stackHash(pcs[:n])
}

func stackHash(pcs []uintptr) uint64 {
	var h maphash.Hash
	h.SetSeed(seedHash)
	var buf [8]byte
	for _, pc := range pcs {
		for i := range buf {
			buf[i] = byte(pc >> (8 * i))
		}
		h.Write(buf[:])
	}
	return h.Sum64()
}

// frameInfo is one frame of a program counter (several when calls were
// inlined there), resolved once per program counter.
type frameInfo struct {
	internal bool // persist, this package, the runtime
	lib      bool // a package of braid's own (test files excepted)
	site, fn string
}

var pcFrames sync.Map // uintptr -> []frameInfo

func framesOf(pc uintptr) []frameInfo {
	if v, ok := pcFrames.Load(pc); ok {
		return v.([]frameInfo)
	}
	var out []frameInfo
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := frames.Next()
		in := internalFrame(f.Function)
		lib := in || strings.HasPrefix(f.Function, modulePath) && !strings.HasSuffix(f.File, "_test.go")
		out = append(out, frameInfo{internal: in, lib: lib, site: fmt.Sprintf("%s:%d", shortFile(f.File), f.Line), fn: shortFunc(f.Function)})
		if !more {
			break
		}
	}
	pcFrames.Store(pc, out)
	return out
}

// siteOf is the first frame of pcs outside persist and this package, and,
// when that frame is in another of braid's packages, the first frame
// outside all of them ("file:line (function)").
func siteOf(pcs []uintptr) (site, fn, caller string) {
	found := false
	for _, pc := range pcs {
		for _, f := range framesOf(pc) {
			switch {
			case !found && !f.internal:
				site, fn, found = f.site, f.fn, true
				if !f.lib {
					return site, fn, ""
				}
			case found && !f.lib:
				return site, fn, f.site + " (" + f.fn + ")"
			}
		}
	}
	return site, fn, ""
}

// stackAt is the call stack of a crash point, resolved into a site only
// when someone looks (a failure, Image.Point).
type stackAt struct {
	pcs [48]uintptr
	n   int
}

func (s *stackAt) capture(skip int) { s.n = runtime.Callers(skip+1, s.pcs[:]) }

func (s *stackAt) site() (site, fn, caller string) { return siteOf(s.pcs[:s.n]) }

const modulePath = "github.com/braid-pm/braid/"

func internalFrame(fn string) bool {
	return strings.HasPrefix(fn, modulePath+"persist.") || strings.HasPrefix(fn, modulePath+"persist/crash.") ||
		strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "sync.")
}

func shortFile(f string) string {
	// Keep the last two path elements: package dir and file.
	i := strings.LastIndexByte(f, '/')
	if i > 0 {
		if j := strings.LastIndexByte(f[:i], '/'); j >= 0 {
			return f[j+1:]
		}
	}
	return f
}

func shortFunc(f string) string {
	if i := strings.LastIndexByte(f, '/'); i >= 0 {
		return f[i+1:]
	}
	return f
}

// crashPoint decides whether this event is tested and, if so, checks the
// crash images of this instant. The machine lock is held.
func (m *machine) crashPoint(pt Point, skip int) {
	st := m.run
	m.events++
	if m.depth == 0 {
		st.events++
		pt.Seq = st.events
	} else {
		pt.Seq = m.events
	}
	if pt.Kind != KindFence {
		pt.Fence = m.fences
	}
	if !m.selected(&pt, skip+1) {
		return
	}
	switch {
	case pt.Kind == KindEnd:
		// Not the caller of Check: the workload's last fence says
		// where it ended.
		m.stack = m.lastFence
	case pt.Site == "":
		m.stack.capture(skip + 1)
	}
	st.checkPoint(m, pt)
}

// selected applies the configuration (and a replay) to one event.
func (m *machine) selected(pt *Point, skip int) bool {
	st := m.run
	if st.dry && m.depth == 0 && pt.Kind == KindFence {
		// The counting run of SampleFences: tell the fences apart.
		m.stack.capture(skip + 1)
		st.keys = append(st.keys, pathKey{stackHash(m.stack.pcs[:m.stack.n]), m.shape()})
	}
	if st.stopped || st.dry {
		return false
	}
	cfg := &st.cfg
	if m.depth > 0 {
		// A crash during recovery: every fence of the recovery, for the
		// few images chosen for it.
		if pt.Kind != KindFence || m.nestedBudget <= 0 {
			return false
		}
		if st.replay != nil && st.replay.rseq > 0 && pt.Seq != st.replay.rseq {
			return false
		}
		return true
	}
	if st.replay != nil {
		return pt.Seq == st.replay.seq && !st.replay.durable
	}
	switch pt.Kind {
	case KindFence:
		if cfg.Points&AtFences == 0 {
			return false
		}
		if len(cfg.Fences) > 0 && !containsInt(cfg.Fences, pt.Fence) {
			return false
		}
		if st.sample != nil && !st.sample[pt.Fence] {
			return false
		}
		if cfg.PerStack {
			m.stack.capture(skip + 1)
			k := pathKey{stackHash(m.stack.pcs[:m.stack.n]), m.shape()}
			if _, seen := st.stacks[k]; seen {
				return false
			}
			st.stacks[k] = struct{}{}
			pt.Site, pt.Func, pt.Caller = m.stack.site()
		}
		return true
	case KindBoundary, KindDurable:
		return cfg.Points&AtBoundaries != 0
	case KindClose:
		return cfg.Points&AtClose != 0
	case KindEnd:
		return cfg.Points&AtEnd != 0
	case KindCrash:
		return true
	}
	return false
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
