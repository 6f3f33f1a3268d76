package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/braid-pm/braid/persist/device"
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
// section's table, and the profile (nil for a mode that measures none of
// it).
func writeText(out io.Writer, b *bench, p *device.Profile) error {
	// The report is written in one piece at the end, so that a write
	// error (a closed pipe, a full disk) is one error, returned.
	w := &bytes.Buffer{}
	threads := "1 thread"
	if lo, hi := b.threadRange(); hi > 1 {
		threads = fmt.Sprintf("%d..%d threads", lo, hi)
	}
	fmt.Fprintf(w, "pmbench -mode %s: %v per point, %s\n", b.cfg.mode, b.cfg.duration, threads)
	fmt.Fprintf(w, "  region  %v\n", b.r.Info())
	fmt.Fprintf(w, "  cpu     %s, %d CPUs, GOMAXPROCS %d, last-level cache %s; %s\n",
		cpuName(), runtime.NumCPU(), runtime.GOMAXPROCS(0), byteString(llc), strings.Join(cpuFeatures(), " "))
	fmt.Fprintf(w, "  clock   %d ns per timed access, subtracted from latencies\n", b.clock)
	for _, n := range b.notes {
		fmt.Fprintf(w, "  note    %s\n", n)
	}
	fmt.Fprintln(w)
	for _, t := range b.sections {
		t.write(w)
	}
	if p != nil {
		profileTable(b, p).write(w)
	}
	_, err := out.Write(w.Bytes())
	return err
}

// profileTable is the summary of the device profile: the figures this run
// measured, and what it left out.
func profileTable(b *bench, p *device.Profile) *table {
	tab := &table{title: "device profile", left: 2}
	var missing []string
	peak := func(name string, pk device.Peak) {
		if pk.GBs > 0 {
			tab.row(name, fmt.Sprintf("%s GB/s at %s, knee %d", gbs(pk.GBs), threadWord(pk.Threads, "thread"), pk.Knee))
		} else {
			missing = append(missing, name)
		}
	}
	peak("seq read", p.SeqRead)
	peak("rand read", p.RandRead)
	peak("seq write", p.SeqWrite)
	peak("rand write", p.RandWrite)
	figure := func(name string, ok bool, v string) {
		if ok {
			tab.row(name, v)
		} else {
			missing = append(missing, name)
		}
	}
	figure("interference", p.Interference > 0, fmt.Sprintf("%.2f", p.Interference))
	figure("movnt threshold", p.MovntThreshold > 0, byteString(int64(p.MovntThreshold)))
	figure("persist", p.PersistNs > 0, nanos(p.PersistNs)+" ns")
	if len(missing) > 0 {
		tab.notes = append(tab.notes, fmt.Sprintf("not measured by this run (-mode %s): %s; 0 in the profile, where its users take their defaults",
			b.cfg.mode, strings.Join(missing, ", ")))
	}
	if b.saved {
		tab.notes = append(tab.notes, "written to "+b.cfg.profile+" (device.LoadProfile, BRAID_PROFILE)")
	}
	return tab
}

// jsonReport is what -json prints.
type jsonReport struct {
	Mode       string   `json:"mode"`
	Region     string   `json:"region"`
	CPU        string   `json:"cpu"`
	Features   []string `json:"features"`
	Cores      int      `json:"cores"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	DurationNs int64    `json:"duration_ns"`
	ClockNs    int64    `json:"clock_overhead_ns"`
	Notes      []string `json:"notes,omitempty"`
	Results    []result `json:"results"`
	// Profile is the device profile without its points (they are the
	// results); absent for a mode that measures none of it.
	Profile *device.Profile `json:"profile,omitempty"`
}

func writeJSON(w io.Writer, b *bench, p *device.Profile) error {
	var summary *device.Profile
	if p != nil {
		s := *p
		s.Points = nil
		summary = &s
	}
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
		Profile:    summary,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
