package sort

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// phase is one bar of the paper's time breakdown (Figures 4 and 7).
type phase int

const (
	phRunRead    phase = iota // RUN read: keys (WiscSort) or records (EMS) into DRAM
	phRunSort                 // RUN sort: sorting the IndexMap (EMS: and reordering records)
	phRunWrite                // RUN write: persisting run files
	phMergeRead               // MERGE read: loading run files into the merge buffer
	phRecordRead              // RECORD read: gathering values by pointer
	phMergeWrite              // MERGE write: writing the output
	phOther                   // everything else: setup, merge selection, file creation, rename
	numPhases
)

var phaseNames = [numPhases]string{"RUN read", "RUN sort", "RUN write", "MERGE read", "RECORD read", "MERGE write", "other"}

// phases accumulates wall time per phase for the goroutine that drives a
// sort; a background writer (Overlap) adds its busy time separately.
type phases struct {
	mu  sync.Mutex
	d   [numPhases]time.Duration
	cur phase
	t0  time.Time
	on  bool
}

func (p *phases) start(ph phase) {
	if p == nil {
		return
	}
	p.cur, p.t0, p.on = ph, time.Now(), true
}

func (p *phases) stop() {
	if p == nil || !p.on {
		return
	}
	p.add(p.cur, time.Since(p.t0))
	p.on = false
}

func (p *phases) add(ph phase, d time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.d[ph] += d
	p.mu.Unlock()
}

// PhaseTime is the time spent in one phase.
type PhaseTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Report describes a finished sort.
type Report struct {
	Mode          string      `json:"mode"`
	Input         string      `json:"input"`
	Output        string      `json:"output"`
	Format        string      `json:"format"`
	Records       int64       `json:"records"`
	Bytes         int64       `json:"bytes"`
	Runs          int         `json:"runs"`
	Seconds       float64     `json:"seconds"`
	GBps          float64     `json:"gbps"` // input bytes / seconds / 1e9
	Phases        []PhaseTime `json:"phases"`
	Readers       int         `json:"readers"`
	Writers       int         `json:"writers"`
	Sorters       int         `json:"sorters"`
	PoolsFrom     string      `json:"pools_from"` // "profile FILE", "defaults" or "flags"
	Overlap       bool        `json:"overlap"`
	PointerBytes  int         `json:"pointer_bytes"`
	MemBudget     int64       `json:"mem_budget"`
	BufferBytes   int64       `json:"buffer_bytes"` // DRAM buffers the sorter allocated
	IndexMapBytes int64       `json:"indexmap_bytes"`
	PeakRSSAnon   int64       `json:"peak_rss_anon"` // sampled; 0 when unknown
	Mapping       string      `json:"mapping"`       // how the output is made durable
}

func (r *Report) fill(p *phases, total time.Duration) {
	var sum time.Duration
	r.Phases = r.Phases[:0]
	for ph := phRunRead; ph < phOther; ph++ {
		sum += p.d[ph]
		r.Phases = append(r.Phases, PhaseTime{phaseNames[ph], p.d[ph].Seconds()})
	}
	other := p.d[phOther]
	if rest := total - sum; rest > other {
		other = rest
	}
	r.Phases = append(r.Phases, PhaseTime{phaseNames[phOther], other.Seconds()})
	r.Seconds = total.Seconds()
	if r.Seconds > 0 {
		r.GBps = float64(r.Bytes) / r.Seconds / 1e9
	}
}

// rssSampler records the peak anonymous resident memory of the process
// (RssAnon in /proc/self/status) while a sort runs: the DRAM the sorter
// uses, as opposed to the mapped input and output files.
type rssSampler struct {
	stop chan struct{}
	done chan int64
}

func startRSS() *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		var peak int64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v := rssAnon(); v > peak {
				peak = v
			}
			select {
			case <-s.stop:
				s.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) finish() int64 {
	close(s.stop)
	return <-s.done
}

// rssAnon returns RssAnon of this process in bytes (0 if unknown).
func rssAnon() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v << 10
			}
		}
	}
	return 0
}
