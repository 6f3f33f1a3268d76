package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/internal/ycsb"
)

// sweepPoint is one workload at one client count.
type sweepPoint struct {
	Workload string  `json:"workload"`
	Clients  int     `json:"clients"`
	OpsPerS  float64 `json:"ops_per_sec"`
	P99Us    float64 `json:"p99_us"` // the highest p99 of the workload's operation types
}

// runSweep runs every workload at every client count of the sweep on the
// loaded store (the paper's Fig. 1 and 4: throughput and p99 against
// clients).
func runSweep(ctx context.Context, bench *ycsb.Bench, p *plan, b *benchFlags, info ycsb.Info, bar *cli.Bar, rep *benchReport, stdout io.Writer) error {
	var points []sweepPoint
	var err error
	for _, w := range p.workloads {
		for _, n := range p.sweep {
			run := p.run
			run.Clients = n
			bar.Start(fmt.Sprintf("%s, %d clients", w.Name, n), run.Operations)
			var res *ycsb.Result
			res, err = bench.Run(ctx, w, run)
			bar.Stop()
			if res != nil {
				rep.Results = append(rep.Results, res)
				pt := sweepPoint{Workload: w.Name, Clients: n, OpsPerS: res.Throughput}
				for _, o := range res.Ops {
					pt.P99Us = max(pt.P99Us, o.P99Us)
				}
				points = append(points, pt)
			}
			if err != nil {
				break
			}
		}
	}
	if b.asJSON {
		if jerr := printJSON(stdout, struct {
			*benchReport
			Sweep []sweepPoint `json:"sweep"`
		}{rep, points}); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "workload\tclients\tops/s\tp99 µs\tdurability\tdevice\t\n")
		for _, pt := range points {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%s\t%s\t\n", pt.Workload, pt.Clients, pt.OpsPerS, pt.P99Us, info.Durability, info.Device)
		}
		tw.Flush()
	}
	if err != nil {
		return err
	}
	if b.plot != "" {
		if err := drawSweep(b.plot, points, info); err != nil {
			return fmt.Errorf("-plot %s: %w", b.plot, err)
		}
		fmt.Fprintf(stdout, "plot: %s\n", b.plot)
	}
	return verdict(rep.Results, b.verify, stdout, b.asJSON)
}

// drawSweep draws throughput (left) and p99 (right) against clients, one
// line per workload, to an SVG file.
func drawSweep(path string, points []sweepPoint, info ycsb.Info) error {
	tput, lat := plot.New(), plot.New()
	tput.Title.Text = "throughput, " + info.Engine + " (" + info.Durability + ")"
	tput.X.Label.Text, tput.Y.Label.Text = "clients", "ops/s"
	lat.Title.Text = "p99 latency"
	lat.X.Label.Text, lat.Y.Label.Text = "clients", "µs"
	for _, p := range []*plot.Plot{tput, lat} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var order []string
	byW := map[string][2]plotter.XYs{}
	for _, pt := range points {
		if _, ok := byW[pt.Workload]; !ok {
			order = append(order, pt.Workload)
		}
		l := byW[pt.Workload]
		l[0] = append(l[0], plotter.XY{X: float64(pt.Clients), Y: pt.OpsPerS})
		l[1] = append(l[1], plotter.XY{X: float64(pt.Clients), Y: pt.P99Us})
		byW[pt.Workload] = l
	}
	for _, w := range order {
		if err := plotutil.AddLinePoints(tput, "workload "+w, byW[w][0]); err != nil {
			return err
		}
		if err := plotutil.AddLinePoints(lat, "workload "+w, byW[w][1]); err != nil {
			return err
		}
	}
	c := vgsvg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 2, PadTop: vg.Millimeter * 2,
		PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{{tput, lat}}, tiles, dc)
	tput.Draw(canvases[0][0])
	lat.Draw(canvases[0][1])
	f, err := createFile(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
