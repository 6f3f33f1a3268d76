package crash

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
)

// gstate is what the runtime's stack dump says of one goroutine: its wait
// state ("chan receive", "sync.Mutex.Lock", "running") and where it waits.
type gstate struct {
	wait    string
	harness bool // it waits inside the simulator (a lock of the scheduler or the machine)
	viaSync bool // package sync is on the way to the wait
}

// goroutineStates reads every goroutine's wait state from the runtime's
// stack dump ("goroutine 7 [chan receive, 2 minutes]:" and its frames).
func goroutineStates() map[uint64]gstate {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[uint64]gstate{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if id, st, ok := parseGoroutine(g); ok {
			out[id] = st
		}
	}
	return out
}

// parseGoroutine reads one goroutine of a stack dump: its header line,
// then its frames, innermost first (a function line, then a tab and its
// file line).
func parseGoroutine(g []byte) (uint64, gstate, bool) {
	lines := bytes.Split(bytes.TrimSpace(g), []byte("\n"))
	rest, ok := bytes.CutPrefix(lines[0], []byte("goroutine "))
	if !ok {
		return 0, gstate{}, false
	}
	id, st, ok := bytes.Cut(rest, []byte(" ["))
	if !ok {
		return 0, gstate{}, false
	}
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil {
		return 0, gstate{}, false
	}
	if j := bytes.IndexAny(st, ",]"); j >= 0 {
		st = st[:j]
	}
	s := gstate{wait: string(st)}
	for k, l := range lines[1:] {
		fn := string(l)
		if strings.HasPrefix(fn, "\t") || fn == "" {
			continue
		}
		if k == 0 && s.wait == "runnable" && strings.HasPrefix(fn, "runtime.Gosched(") {
			s.wait = "gosched" // a spin loop's yield: waiting for another goroutine
		}
		if plumbing(fn) {
			s.viaSync = s.viaSync || strings.HasPrefix(fn, "sync.") || strings.HasPrefix(fn, "internal/sync.")
			continue
		}
		// The innermost frame of the program's (or the simulator's).
		s.harness = strings.HasPrefix(fn, modulePath+"persist/crash.") || strings.HasPrefix(fn, modulePath+"persist/internal/simword.")
		break
	}
	return n, s, true
}

// plumbing reports whether a frame is the runtime's or sync's, on the way
// from the code that waits to the wait itself.
func plumbing(fn string) bool {
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "sync.") || strings.HasPrefix(fn, "internal/")
}

// blocked reports whether the goroutine waits for another goroutine of the
// program (not for time or I/O, which end by themselves, nor for the
// simulator's own locks, which the thread with the turn takes between two
// scheduling points, nor for a semaphore of the runtime's own, such as a
// collection starting). A goroutine seen yielding in runtime.Gosched is
// taken for a spin loop waiting for another (a lock held by a thread
// waiting for its turn).
func (s gstate) blocked() bool {
	if s.harness {
		return false
	}
	switch s.wait {
	case "semacquire":
		return s.viaSync
	case "gosched", "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "sync.Cond.Wait",
		"sync.WaitGroup.Wait", "chan receive", "chan send", "select", "chan receive (nil chan)",
		"chan send (nil chan)", "select (no cases)":
		return true
	}
	return false
}
