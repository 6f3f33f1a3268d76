package server

import (
	"sync/atomic"
	"time"
)

// counters are the server's statistics (INFO, /metrics).
type counters struct {
	connections, rejected, attacks, protocolErrors atomic.Int64
	commands, errors, hits, misses                 atomic.Int64
	cmds                                           map[string]*cmdStat // read-only once made
}

type cmdStat struct {
	calls, usec atomic.Int64
	observe     func(float64) // the Prometheus histogram's, or nil
}

// stat is name's counters: one per command of the table, made by New,
// so that a command's accounting takes no lock (the map is only read).
func (s *counters) stat(name string) *cmdStat { return s.cmds[name] }

func (s *counters) done(name string, d time.Duration) {
	s.commands.Add(1)
	st := s.cmds[name]
	if st == nil {
		return
	}
	st.calls.Add(1)
	st.usec.Add(d.Microseconds())
	if st.observe != nil {
		st.observe(d.Seconds())
	}
}

func (s *counters) reset() {
	for _, st := range s.cmds {
		st.calls.Store(0)
		st.usec.Store(0)
	}
	s.commands.Store(0)
	s.errors.Store(0)
	s.hits.Store(0)
	s.misses.Store(0)
	s.rejected.Store(0)
	s.protocolErrors.Store(0)
}
