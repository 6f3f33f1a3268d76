package main

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

// Device scaling (SKYE's observation O5: devices add up when the device,
// not the CPU, is the limit): the same per-device load on 1, 2 and 4
// emulated devices at once, each device its own persist.Device and its own
// region — device 0 the -file, the others anonymous regions of the same
// size (the emulated device is the limit, so where the bytes live does not
// show). Per device: writers at the profile's write peak, readers at its
// sequential read peak; writes alone, reads alone, and both at once. The
// counts alternate scalingRounds times and medians are reported.

func init() {
	register(mode{
		name: "scaling",
		summary: "an emulated device (-device or BRAID_DEVICE) 1, 2 and 4 times at once: bandwidth of writers, readers " +
			"and both per device, against one device (SKYE's device scaling)",
		run: runScaling,
	})
}

var scalingDevices = []int{1, 2, 4}

const (
	scalingRounds = 3
	scalingSize   = 64 << 10 // bytes per access
	// scalingArea is the most bytes of each device's region the mode uses.
	scalingArea = 256 << 20
)

// scalingLoad is one device's threads: writers and readers.
type scalingLoad struct{ writers, readers int }

// loadFor is the per-device load the profile implies: each curve's peak.
func loadFor(m *device.Model) scalingLoad {
	return scalingLoad{writers: peakThreads(m.Write), readers: peakThreads(m.SeqRead)}
}

// peakThreads is the fewest threads at which curve c is highest.
func peakThreads(c []device.Level) int {
	best := c[0]
	for _, l := range c[1:] {
		if l.GBs > best.GBs {
			best = l
		}
	}
	return best.Threads
}

// scalingRegions are the regions of the devices: the -file's (on the
// device it was mapped with) and max(scalingDevices)-1 anonymous ones,
// each on a new device of the same profile. The caller closes them.
func (b *bench) scalingRegions(area int) ([]*persist.Region, error) {
	dev := emulated(b.r)
	if !dev.Emulating() {
		return nil, fmt.Errorf("-mode scaling measures emulated devices: give -device NAME (%s; not dram) or set BRAID_DEVICE", cli.DeviceNames())
	}
	prof := dev.Profile()
	rs := []*persist.Region{b.r}
	for range scalingDevices[len(scalingDevices)-1] - 1 {
		d, err := device.New(&prof, nil)
		if err == nil {
			var r *persist.Region
			r, err = persist.Anonymous(area, &persist.Options{Device: d})
			if err == nil {
				rs = append(rs, r)
				continue
			}
		}
		return rs, fmt.Errorf("another emulated %s: %w", dev.Name(), err)
	}
	return rs, nil
}

// scalingGroups are the groups of k devices for a run of writers, readers
// or both.
func scalingGroups(rs []*persist.Region, k, area int, load scalingLoad, writes, reads bool) []group {
	var gs []group
	for _, r := range rs[:k] {
		if writes {
			gs = append(gs, group{op: opWriteNT, pattern: seq, size: scalingSize, threads: load.writers, lo: 0, hi: area / 2, r: r})
		}
		if reads {
			gs = append(gs, group{op: opRead, pattern: seq, size: scalingSize, threads: load.readers, lo: area / 2, hi: area, r: r})
		}
	}
	return gs
}

// sum is the total bandwidth of the groups gs of op o (their samples s).
func sum(gs []group, s []sample, o op) float64 {
	t := 0.0
	for i, g := range gs {
		if g.op == o {
			t += s[i].gbs()
		}
	}
	return t
}

func runScaling(b *bench) (err error) {
	area := min(len(b.mem), scalingArea) / (2 * scalingSize) * (2 * scalingSize)
	rs, err := b.scalingRegions(area)
	defer func() {
		for _, r := range rs[min(1, len(rs)):] {
			err = errors.Join(err, r.Close())
		}
	}()
	if err != nil {
		return err
	}
	load := loadFor(emulated(b.r).Profile().Model)
	b.addSteps(scalingRounds * len(scalingDevices) * 3)
	// GB/s by device count: writes alone, reads alone, reads and writes of
	// the mixed runs.
	type runs struct{ w, r, mr, mw []float64 }
	got := make([]runs, len(scalingDevices))
	for range scalingRounds {
		for i, k := range scalingDevices {
			for _, kind := range []struct {
				name          string
				writes, reads bool
			}{{"writers", true, false}, {"readers", false, true}, {"writers and readers", true, true}} {
				b.prog.step(fmt.Sprintf("scaling: %d devices, %s", k, kind.name))
				gs := scalingGroups(rs, k, area, load, kind.writes, kind.reads)
				s, err := b.runGroups(gs, b.cfg.duration, false)
				if err != nil {
					return err
				}
				g := &got[i]
				switch {
				case kind.writes && kind.reads:
					g.mw, g.mr = append(g.mw, sum(gs, s, opWriteNT)), append(g.mr, sum(gs, s, opRead))
				case kind.writes:
					g.w = append(g.w, sum(gs, s, opWriteNT))
				default:
					g.r = append(g.r, sum(gs, s, opRead))
				}
			}
		}
	}
	b.scalingReport(load, got[0].w, got[0].r, func(i int) (w, r, mw, mr float64) {
		return median(got[i].w), median(got[i].r), median(got[i].mw), median(got[i].mr)
	})
	return nil
}

// scalingReport records the points and prints the table.
func (b *bench) scalingReport(load scalingLoad, w1, r1 []float64, at func(i int) (w, r, mw, mr float64)) {
	tab := &table{
		title: fmt.Sprintf("device scaling: %s, %d writers and %d readers per device (sequential %s accesses: streaming durable writes, reads); GB/s of all devices, median of %d rounds",
			emulated(b.r).Name(), load.writers, load.readers, byteString(scalingSize), scalingRounds),
		header: []string{"devices", "writes", "x1", "reads", "x1", "mixed: reads", "mixed: writes"},
		left:   1,
	}
	w0, r0 := median(w1), median(r1)
	for i, k := range scalingDevices {
		w, r, mw, mr := at(i)
		b.add(
			result{Point: device.Point{Op: opWriteNT.String(), Pattern: fmt.Sprintf("%d-devices", k), Size: scalingSize, Threads: k * load.writers, GBs: w}},
			result{Point: device.Point{Op: opRead.String(), Pattern: fmt.Sprintf("%d-devices", k), Size: scalingSize, Threads: k * load.readers, GBs: r}},
			result{Point: device.Point{Op: opRead.String(), Pattern: fmt.Sprintf("%d-devices-mixed", k), Size: scalingSize, Threads: k * load.readers, GBs: mr}},
			result{Point: device.Point{Op: opWriteNT.String(), Pattern: fmt.Sprintf("%d-devices-mixed", k), Size: scalingSize, Threads: k * load.writers, GBs: mw}},
		)
		tab.row(fmt.Sprint(k), gbs(w), ratio(w, w0), gbs(r), ratio(r, r0), gbs(mr), gbs(mw))
	}
	tab.notes = append(tab.notes, "SKYE (O5): with the device the limit, 2 devices give at least 1.8x and 4 at least 3x; "+
		"below that, the CPU (or the machine's load) is the limit: slow the device down (-device NAME:K)")
	b.section(tab)
}

func ratio(x, base float64) string {
	if base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x/base)
}
