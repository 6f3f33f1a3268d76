package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// counters are the server's statistics (INFO, /metrics).
type counters struct {
	connections, rejected, attacks, protocolErrors atomic.Int64
	commands, errors, hits, misses                 atomic.Int64
	mu                                             sync.Mutex
	cmds                                           map[string]*cmdStat
}

type cmdStat struct {
	calls, usec atomic.Int64
	observe     func(float64) // the Prometheus histogram's, or nil
}

func (s *counters) stat(name string) *cmdStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.cmds[name]
	if st == nil {
		st = &cmdStat{}
		s.cmds[name] = st
	}
	return st
}

func (s *counters) done(name string, d time.Duration) {
	s.commands.Add(1)
	st := s.stat(name)
	st.calls.Add(1)
	st.usec.Add(d.Microseconds())
	if st.observe != nil {
		st.observe(d.Seconds())
	}
}

func (s *counters) reset() {
	s.mu.Lock()
	for _, st := range s.cmds {
		st.calls.Store(0)
		st.usec.Store(0)
	}
	s.mu.Unlock()
	s.commands.Store(0)
	s.errors.Store(0)
	s.hits.Store(0)
	s.misses.Store(0)
	s.rejected.Store(0)
	s.protocolErrors.Store(0)
}
