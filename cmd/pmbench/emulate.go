package main

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

// Emulated devices (persist's "Emulated devices"): -device maps the file
// on one, the read workloads declare their reads to it (writes are charged
// by Region.Copy), the report compares the measured curves with the
// profile's, and every device-mode profile carries the model measured, so
// that it can be emulated in turn (BRAID_DEVICE=FILE).

// deviceTolerance is how far a measured point may be from the profile's
// and still reproduce it (the bound).
const deviceTolerance = 0.2

// validateDevice checks -device and -plot before anything is measured.
func (c *config) validateDevice() error {
	if c.device != "" {
		if _, err := device.Open(c.device, nil); err != nil {
			return fmt.Errorf("-device: %v", err)
		}
	}
	if c.mode == "scaling" {
		spec := c.device
		if spec == "" {
			spec = os.Getenv("BRAID_DEVICE")
		}
		if d, err := device.Open(spec, nil); spec == "" || (err == nil && !d.Emulating()) {
			return fmt.Errorf("-mode scaling measures emulated devices: give -device NAME (%s; not dram) or set BRAID_DEVICE", cli.DeviceNames())
		}
	}
	if c.plot != "" {
		if c.mode != "device" {
			return fmt.Errorf("-plot draws the device mode's curves: not with -mode %s", c.mode)
		}
		st, err := os.Stat(c.plot)
		if err != nil {
			return fmt.Errorf("-plot %s: %v", c.plot, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("-plot %s is not a directory", c.plot)
		}
	}
	return nil
}

// openDevice is -device's device, or nil (persist then reads
// BRAID_DEVICE).
func (c config) openDevice() (*device.Device, error) {
	if c.device == "" {
		return nil, nil
	}
	return device.Open(c.device, nil)
}

// declareRead declares a read of the access at off to the emulated device
// (nothing without one).
func (w *worker) declareRead(off, n int) {
	if w.g.pattern == seq {
		w.r.ReadSeq(w.mem[off : off+n])
	} else {
		w.r.ReadRand(w.mem[off : off+n])
	}
}

// modelCurves are the measured curves a model is made of: the largest
// access size measured of each (random reads: up to 4 KiB, as the peaks).
var modelCurves = []struct {
	name, op, pattern string
	maxSize           int
	of                func(m *device.Model) []device.Level
}{
	{"sequential read", "read", "seq", 0, func(m *device.Model) []device.Level { return m.SeqRead }},
	{"random read", "read", "rand", randMaxSize, func(m *device.Model) []device.Level { return m.RandRead }},
	{"write (streaming, durable)", "write-nt", "seq", 0, func(m *device.Model) []device.Level { return m.Write }},
}

// curveOf is the bandwidth by thread count of op/pattern at the largest
// size measured (up to maxSize; 0: any), and that size.
func curveOf(points []device.Point, op, pattern string, maxSize int) ([]device.Level, int) {
	size := 0
	for _, p := range points {
		if p.Op == op && p.Pattern == pattern && (maxSize == 0 || p.Size <= maxSize) {
			size = max(size, p.Size)
		}
	}
	var c []device.Level
	for _, p := range points {
		if p.Op == op && p.Pattern == pattern && p.Size == size && p.GBs > 0 {
			c = append(c, device.Level{Threads: p.Threads, GBs: p.GBs})
		}
	}
	slices.SortFunc(c, func(a, b device.Level) int { return cmp.Compare(a.Threads, b.Threads) })
	return slices.CompactFunc(c, func(a, b device.Level) bool { return a.Threads == b.Threads }), size
}

// addModel puts the measured model into p: the three curves; on an
// emulated device its unit, write buffer and latencies (not measured
// here), else a cache line and nothing else.
func (b *bench) addModel(p *device.Profile) {
	points := pointsOf(b.results)
	m := &device.Model{Granularity: 64}
	for _, mc := range modelCurves {
		c, _ := curveOf(points, mc.op, mc.pattern, mc.maxSize)
		if len(c) == 0 || c[0].Threads != 1 {
			return
		}
		*curveField(m, mc.op, mc.pattern) = c
	}
	p.Source = "measured by pmbench on " + b.cfg.file + "; model granularity 64 B (a cache line) assumed, no write buffer or latencies"
	if dev := emulated(b.r); dev.Emulating() {
		dm := dev.Profile().Model
		m.Granularity, m.WriteBuffer, m.ReadNs, m.WriteNs = dm.Granularity, dm.WriteBuffer, dm.ReadNs, dm.WriteNs
		p.Source = "measured by pmbench on " + b.cfg.file + " emulating " + dev.Name() +
			"; the model's granularity, write buffer and latencies are the emulated profile's, not measured"
	}
	p.Model = m
}

func curveField(m *device.Model, op, pattern string) *[]device.Level {
	switch {
	case op == "read" && pattern == "seq":
		return &m.SeqRead
	case op == "read":
		return &m.RandRead
	}
	return &m.Write
}

// emulationReport adds, in device mode on an emulated device, the table
// that compares each measured curve with the profile's, and draws -plot.
func (b *bench) emulationReport() error {
	dev := emulated(b.r)
	points := pointsOf(b.results)
	if dev.Emulating() && b.cfg.mode == "device" {
		prof := dev.Profile()
		tab := &table{
			title:  fmt.Sprintf("emulated device %s: measured bandwidth against the profile's (GB/s; within %.0f%%?)", dev.Name(), 100*deviceTolerance),
			header: []string{"access", "size", "threads", "profile", "measured", "measured/profile", "within"},
			left:   1,
		}
		worst := 0.0
		for _, mc := range modelCurves {
			c, size := curveOf(points, mc.op, mc.pattern, mc.maxSize)
			for _, l := range c {
				want := device.At(mc.of(prof.Model), l.Threads)
				r := l.GBs / want
				worst = max(worst, math.Abs(r-1))
				tab.row(mc.name, byteString(int64(size)), fmt.Sprint(l.Threads), gbs(want), gbs(l.GBs), fmt.Sprintf("%.2f", r), yesNo(math.Abs(r-1) <= deviceTolerance))
			}
		}
		if got := interference(points); got > 0 {
			tab.notes = append(tab.notes, fmt.Sprintf("interference: profile %.2f, measured %.2f (reads next to writers over reads alone)", prof.Interference, got))
		}
		tab.notes = append(tab.notes, fmt.Sprintf("largest distance from the profile: %.0f%%; device charged %+v", 100*worst, dev.Stats()))
		b.section(tab)
	}
	if b.cfg.plot != "" {
		return drawCurves(b.cfg.plot, points, dev)
	}
	return nil
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// emulated is the emulated device r charges (pmbench makes them with
// persist/device), or nil.
func emulated(r *persist.Region) *device.Device {
	d, _ := r.Device().(*device.Device)
	return d
}
