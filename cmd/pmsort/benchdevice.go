package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/braid-pm/braid/sort"
)

// parseDeviceFlags checks -sweep-writers and -plot.
func (c *benchConfig) parseDeviceFlags(sweep string) error {
	if sweep != "" {
		for _, f := range strings.Split(sweep, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 1024 {
				return usagef("-sweep-writers: %q is not a writer count from 1 to 1024", f)
			}
			c.sweep = append(c.sweep, n)
		}
	}
	if c.plot != "" && !strings.HasSuffix(c.plot, ".svg") {
		return usagef("-plot %s: want a file name ending in .svg (a .png is written beside it)", c.plot)
	}
	return nil
}

// sweepModes are OnePass with each writer pool size of -sweep-writers.
func (c *benchConfig) sweepModes() []benchMode {
	var ms []benchMode
	for _, w := range c.sweep {
		ms = append(ms, benchMode{name: fmt.Sprintf("OnePass-w%d", w), mode: sort.OnePass, writers: w})
	}
	return ms
}

// drawPlot draws the best run of each result as a bar of its phases
// stacked (the figures of [WS] §5), to c.plot and the PNG beside it.
func (c *benchConfig) drawPlot(stdout io.Writer, results []*benchResult) error {
	if c.plot == "" {
		return nil
	}
	var names, phases []string
	seconds := map[string][]float64{}
	var shown []*benchResult
	for _, r := range results {
		if r.Report != nil {
			shown = append(shown, r)
			names = append(names, r.Name)
		}
	}
	for i, r := range shown {
		for _, ph := range r.Report.Phases {
			if _, ok := seconds[ph.Name]; !ok {
				phases = append(phases, ph.Name)
				seconds[ph.Name] = make([]float64, len(shown))
			}
			seconds[ph.Name][i] += ph.Seconds
		}
	}
	if len(shown) == 0 {
		return fmt.Errorf("-plot: no sorter result to draw")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("pmsort bench: %d records, %s", c.n, c.deviceLabel())
	p.Y.Label.Text = "seconds (best run)"
	p.Legend.Top = true
	w := vg.Points(max(12, 200/float64(len(shown))))
	var below *plotter.BarChart
	for k, name := range phases {
		bars, err := plotter.NewBarChart(plotter.Values(seconds[name]), w)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = 0
		bars.Color = plotutil.Color(k)
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(name, bars)
	}
	p.NominalX(names...)
	// Room above the tallest bar for the legend (a line a phase).
	tallest := 0.0
	for i := range shown {
		t := 0.0
		for _, name := range phases {
			t += seconds[name][i]
		}
		tallest = max(tallest, t)
	}
	p.Y.Min, p.Y.Max = 0, tallest*(1+0.07*float64(len(phases)))
	width := vg.Length(max(5, 1.1*float64(len(shown)))) * vg.Inch
	for _, file := range []string{c.plot, strings.TrimSuffix(c.plot, ".svg") + ".png"} {
		if err := p.Save(width, 4*vg.Inch, file); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
		fmt.Fprintf(stdout, "plot: %s\n", file)
	}
	return nil
}

// deviceLabel names the device the sorts ran on, for the plot's title.
func (c *benchConfig) deviceLabel() string {
	if c.sf.device != "" {
		return "device " + c.sf.device
	}
	return "no emulated device"
}
