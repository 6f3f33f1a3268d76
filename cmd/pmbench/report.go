package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/braid-pm/braid/persist"
)

// table is one section of the printed report.
type table struct {
	title  string
	header []string
	rows   [][]string
	notes  []string
	left   int // this many leading columns are aligned left, the rest right
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	fmt.Fprintln(w, t.title)
	all := t.rows
	if t.header != nil {
		all = append([][]string{t.header}, t.rows...)
	}
	var width []int
	for _, r := range all {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range all {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			b.WriteString("  ")
			if i < t.left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, n := range t.notes {
		fmt.Fprintln(w, "   "+n)
	}
	fmt.Fprintln(w)
}

// writeText prints the human report: what was measured on what, each
// section's table, and the profile.
func writeText(w io.Writer, b *bench, p *persist.Profile) error {
	threads := "1 thread"
	if b.cfg.threads > 1 {
		threads = fmt.Sprintf("1..%d threads", b.cfg.threads)
	}
	fmt.Fprintf(w, "pmbench -mode %s: %v per point, %s\n", b.cfg.mode, b.cfg.duration, threads)
	fmt.Fprintf(w, "  region  %v\n", b.r.Info())
	fmt.Fprintf(w, "  cpu     %s, %d CPUs, GOMAXPROCS %d; %s\n", cpuName(), runtime.NumCPU(), runtime.GOMAXPROCS(0), strings.Join(cpuFeatures(), " "))
	fmt.Fprintf(w, "  clock   %d ns per timed access, subtracted from latencies\n", b.clock)
	for _, n := range b.notes {
		fmt.Fprintf(w, "  note    %s\n", n)
	}
	fmt.Fprintln(w)
	for _, t := range b.sections {
		t.write(w)
	}

	tab := &table{title: "device profile", left: 2}
	peak := func(name string, pk persist.Peak) {
		if pk.GBs > 0 {
			tab.row(name, fmt.Sprintf("%s GB/s at %s, knee %d", gbs(pk.GBs), threadWord(pk.Threads, "thread"), pk.Knee))
		}
	}
	peak("seq read", p.SeqRead)
	peak("rand read", p.RandRead)
	peak("seq write", p.SeqWrite)
	peak("rand write", p.RandWrite)
	if p.Interference > 0 {
		tab.row("interference", fmt.Sprintf("%.2f", p.Interference))
	}
	if p.MovntThreshold > 0 {
		tab.row("movnt threshold", byteString(int64(p.MovntThreshold)))
	}
	if p.PersistNs > 0 {
		tab.row("persist", nanos(p.PersistNs)+" ns")
	}
	if b.cfg.profile != "" {
		tab.notes = append(tab.notes, "written to "+b.cfg.profile+" (persist.LoadProfile, BRAID_PROFILE)")
	}
	tab.write(w)
	return nil
}

// jsonReport is what -json prints.
type jsonReport struct {
	Mode       string           `json:"mode"`
	Region     string           `json:"region"`
	CPU        string           `json:"cpu"`
	Features   []string         `json:"features"`
	Cores      int              `json:"cores"`
	GOMAXPROCS int              `json:"gomaxprocs"`
	DurationNs int64            `json:"duration_ns"`
	ClockNs    int64            `json:"clock_overhead_ns"`
	Notes      []string         `json:"notes,omitempty"`
	Results    []result         `json:"results"`
	Profile    *persist.Profile `json:"profile"` // without points: they are the results
}

func writeJSON(w io.Writer, b *bench, p *persist.Profile) error {
	summary := *p
	summary.Points = nil
	rep := jsonReport{
		Mode:       b.cfg.mode,
		Region:     b.r.Info().String(),
		CPU:        cpuName(),
		Features:   cpuFeatures(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		DurationNs: b.cfg.duration.Nanoseconds(),
		ClockNs:    b.clock,
		Notes:      b.notes,
		Results:    b.results,
		Profile:    &summary,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
