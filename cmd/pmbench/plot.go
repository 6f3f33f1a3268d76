package main

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/braid-pm/braid/persist/device"
)

// drawCurves draws, for each access type the device mode measures,
// bandwidth against thread count, a line per access size (the figures of
// the device papers), with the emulated profile's curve dashed; each as
// DIR/bandwidth-OP-PATTERN.svg and .png.
func drawCurves(dir string, points []device.Point, dev *device.Device) error {
	for _, o := range deviceOps {
		for _, pat := range []pattern{seq, rand} {
			if err := drawCurve(dir, points, o.String(), pat.String(), dev); err != nil {
				return err
			}
		}
	}
	return nil
}

func drawCurve(dir string, points []device.Point, op, pat string, dev *device.Device) error {
	bySize := map[int]plotter.XYs{}
	for _, p := range points {
		if p.Op == op && p.Pattern == pat {
			bySize[p.Size] = append(bySize[p.Size], plotter.XY{X: float64(p.Threads), Y: p.GBs})
		}
	}
	if len(bySize) == 0 {
		return nil
	}
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("pmbench: %s, %s", op, pat)
	if dev.Emulating() {
		pl.Title.Text += ", emulated " + dev.Name()
	}
	pl.X.Label.Text = "threads"
	pl.Y.Label.Text = "GB/s"
	pl.Legend.Top = true
	sizes := make([]int, 0, len(bySize))
	for s := range bySize {
		sizes = append(sizes, s)
	}
	slices.Sort(sizes)
	for i, s := range sizes {
		l, err := plotter.NewLine(bySize[s])
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		pl.Add(l)
		pl.Legend.Add(byteString(int64(s)), l)
	}
	if c := profileCurve(dev, op, pat); c != nil {
		var xy plotter.XYs
		for _, l := range c {
			xy = append(xy, plotter.XY{X: float64(l.Threads), Y: l.GBs})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Width = vg.Points(1.5)
		pl.Add(l)
		pl.Legend.Add("profile "+dev.Name(), l)
	}
	pl.Legend.ThumbnailWidth = vg.Points(20)
	pl.Legend.Padding = vg.Points(1)
	for _, ext := range []string{".svg", ".png"} {
		if err := pl.Save(6*vg.Inch, 4*vg.Inch, filepath.Join(dir, "bandwidth-"+op+"-"+pat+ext)); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
	}
	return nil
}

// profileCurve is the emulated profile's curve of op/pat, if it has one.
func profileCurve(dev *device.Device, op, pat string) []device.Level {
	if !dev.Emulating() {
		return nil
	}
	for _, mc := range modelCurves {
		if mc.op == op && mc.pattern == pat {
			p := dev.Profile()
			return mc.of(p.Model)
		}
	}
	return nil
}
