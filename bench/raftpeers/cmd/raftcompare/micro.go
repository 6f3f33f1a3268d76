package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/braid-pm/braid/bench/raftpeers"
	"github.com/hashicorp/raft"
)

// microResult is one store's single-store figures of one round.
type microResult struct {
	batch     map[int]batchResult
	getNs     float64 // per GetLog
	deleteUs  float64 // per DeleteRange of 1,024 entries from the front
	truncUs   float64 // per DeleteRange of a 64-entry suffix
	storedLen int
}

type batchResult struct {
	perSec   float64 // entries/s
	p50, p99 float64 // µs per StoreLogs call
}

func micro(c config, p raftpeers.Peer, dir string) (microResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return microResult{}, err
	}
	s, err := p.Open(dir)
	if err != nil {
		return microResult{}, err
	}
	defer s.Close()
	m := microResult{batch: map[int]batchResult{}}
	data := make([]byte, c.size)
	for i := range data {
		data[i] = byte(i*7 + 1)
	}
	next := uint64(1)
	for _, b := range c.batches {
		calls := max(1, c.entries/b)
		h := hdrhistogram.New(1, int64(10*time.Second), 3)
		logs := make([]*raft.Log, b)
		for i := range logs {
			logs[i] = &raft.Log{Type: raft.LogCommand, Term: 1, Data: data}
		}
		t0 := time.Now()
		for range calls {
			for i := range logs {
				logs[i].Index = next
				next++
			}
			t := time.Now()
			if err := s.StoreLogs(logs); err != nil {
				return m, fmt.Errorf("StoreLogs(%d entries from %d): %w", b, logs[0].Index, err)
			}
			h.RecordValue(int64(time.Since(t)))
		}
		el := time.Since(t0)
		m.batch[b] = batchResult{
			perSec: float64(calls*b) / el.Seconds(),
			p50:    us(time.Duration(h.ValueAtQuantile(50))),
			p99:    us(time.Duration(h.ValueAtQuantile(99))),
		}
	}
	last := next - 1
	rng := rand.New(rand.NewPCG(1, 2))
	var l raft.Log
	t0 := time.Now()
	for range c.gets {
		i := 1 + rng.Uint64N(last)
		if err := s.GetLog(i, &l); err != nil {
			return m, fmt.Errorf("GetLog(%d): %w", i, err)
		}
	}
	m.getNs = float64(time.Since(t0).Nanoseconds()) / float64(c.gets)
	// Suffix truncations (a follower dropping conflicting entries): 16
	// of 64 entries each.
	t0 = time.Now()
	for k := range 16 {
		from := last - uint64(64*(k+1)) + 1
		if err := s.DeleteRange(from, last-uint64(64*k)); err != nil {
			return m, fmt.Errorf("DeleteRange(%d, ...): %w", from, err)
		}
	}
	m.truncUs = us(time.Since(t0)) / 16
	last -= 16 * 64
	// Compaction: prefixes of 1,024 entries until half the log is gone.
	t0 = time.Now()
	n := 0
	for first := uint64(1); first+1024 <= last/2; first += 1024 {
		if err := s.DeleteRange(first, first+1023); err != nil {
			return m, fmt.Errorf("DeleteRange(%d, %d): %w", first, first+1023, err)
		}
		n++
	}
	if n > 0 {
		m.deleteUs = us(time.Since(t0)) / float64(n)
	}
	m.storedLen = int(last)
	return m, nil
}
