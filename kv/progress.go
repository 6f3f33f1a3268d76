package kv

import "sync"

// Progress is how far a long operation has come, reported to
// Options.Progress: Done of Total units of Step of Op.
//
//	Op           Step          unit
//	"recover"    "checkpoint"  index entries loaded (once, when loaded)
//	"recover"    "logs"        workers' logs replayed
//	"recover"    "index"       index shards built (0, then all)
//	"gc"         "segments"    victim segments cleaned
//	"checkpoint" "entries"     index entries visited (two passes)
//
// A step reports Done == Total last; calls come one at a time, from the
// goroutine doing the work, so the callback must not call the Store.
type Progress struct {
	Op, Step    string
	Done, Total int64
}

// progressEvery is how many index entries a checkpoint visits between
// reports.
const progressEvery = 1 << 16

type progressState struct {
	mu sync.Mutex
}

// progress reports p to Options.Progress, if set.
func (s *Store) progress(op, step string, done, total int64) {
	f := s.c.Progress
	if f == nil {
		return
	}
	s.prog.mu.Lock()
	defer s.prog.mu.Unlock()
	f(Progress{Op: op, Step: step, Done: done, Total: total})
}

// progressAdd counts one more unit done in *done (counted under the
// reports' lock: goroutines finish in any order) and reports it.
func (s *Store) progressAdd(op, step string, done *int64, total int64) {
	f := s.c.Progress
	if f == nil {
		return
	}
	s.prog.mu.Lock()
	defer s.prog.mu.Unlock()
	*done++
	f(Progress{Op: op, Step: step, Done: *done, Total: total})
}

// progressEach is the index's each, reporting a checkpoint's progress
// over its entries as it goes: the checkpoint's encoder walks the index
// twice (bucket sizes, then the entries), so the step counts 2 x entries.
func (s *Store) progressEach(entries int) func(func([]byte, loc)) {
	n, total := 0, 2*int64(entries)
	return func(fn func([]byte, loc)) {
		s.idx.each(func(k []byte, l loc) {
			fn(k, l)
			if n++; n%progressEvery == 0 {
				s.progress("checkpoint", "entries", int64(n), max(int64(n), total))
			}
		})
		s.progress("checkpoint", "entries", int64(n), max(int64(n), total))
	}
}
