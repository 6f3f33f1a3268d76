package main

import (
	"testing"

	"github.com/braid-pm/braid/persist/device"
	"github.com/stretchr/testify/require"
)

func pt(op, pattern string, size, threads int, gbs, ns float64) device.Point {
	return device.Point{Op: op, Pattern: pattern, Size: size, Threads: threads, GBs: gbs, NsPerOp: ns}
}

func TestKnee(t *testing.T) {
	for _, tc := range []struct {
		name  string
		curve []float64 // GB/s at 1, 2, 3, ... threads
		want  device.Peak
	}{
		{"empty", nil, device.Peak{}},
		{"zero", []float64{0, 0}, device.Peak{}},
		{"one point", []float64{5}, device.Peak{GBs: 5, Threads: 1, Knee: 1}},
		{"scales", []float64{2, 4, 6, 8}, device.Peak{GBs: 8, Threads: 4, Knee: 4}},
		{"flat after 2", []float64{3, 10, 10.2, 10.4}, device.Peak{GBs: 10.4, Threads: 4, Knee: 2}},
		{"exactly 95%", []float64{1, 9.5, 10}, device.Peak{GBs: 10, Threads: 3, Knee: 2}},
		{"just under 95%", []float64{1, 9.49, 10}, device.Peak{GBs: 10, Threads: 3, Knee: 3}},
		{"drops past the peak", []float64{4, 12, 9, 7}, device.Peak{GBs: 12, Threads: 2, Knee: 2}},
		{"tie goes to fewer threads", []float64{6, 6, 6}, device.Peak{GBs: 6, Threads: 1, Knee: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var curve []device.Point
			for i, g := range tc.curve {
				curve = append(curve, pt("read", "seq", 4096, i+1, g, 0))
			}
			// Order must not matter.
			for i, j := 0, len(curve)-1; i < j; i, j = i+1, j-1 {
				curve[i], curve[j] = curve[j], curve[i]
			}
			require.Equal(t, tc.want, knee(curve))
		})
	}
}

func TestPeak(t *testing.T) {
	points := []device.Point{
		// seq read: the 64 KiB curve holds the peak, knee at 2 threads.
		pt("read", "seq", 4096, 1, 5, 0), pt("read", "seq", 4096, 2, 6, 0), pt("read", "seq", 4096, 4, 6.1, 0),
		pt("read", "seq", 65536, 1, 7, 0), pt("read", "seq", 65536, 2, 11.5, 0), pt("read", "seq", 65536, 4, 12, 0),
		// rand read: 64 KiB is above randMaxSize and must be ignored.
		pt("read", "rand", 4096, 1, 2, 0), pt("read", "rand", 4096, 2, 3.9, 0), pt("read", "rand", 4096, 4, 4, 0),
		pt("read", "rand", 65536, 1, 9, 0), pt("read", "rand", 65536, 4, 10, 0),
		// mixed and alone points never count as peaks.
		pt("read", "mixed", 65536, 1, 50, 0), pt("read", "alone", 65536, 1, 60, 0),
		// writes: streaming stores only.
		pt("write-nt", "seq", 65536, 1, 8, 0), pt("write-nt", "seq", 65536, 2, 8.1, 0),
		pt("write", "seq", 65536, 1, 30, 0), pt("write+flush", "seq", 65536, 1, 20, 0),
	}
	require.Equal(t, device.Peak{GBs: 12, Threads: 4, Knee: 2}, peak(points, "read", "seq", 0))
	require.Equal(t, device.Peak{GBs: 4, Threads: 4, Knee: 2}, peak(points, "read", "rand", randMaxSize))
	require.Equal(t, device.Peak{GBs: 8.1, Threads: 2, Knee: 1}, peak(points, "write-nt", "seq", 0))
	require.Equal(t, device.Peak{}, peak(points, "write-nt", "rand", randMaxSize))
}

func TestMovntThreshold(t *testing.T) {
	curve := func(nt, tp map[int]float64) []device.Point {
		var ps []device.Point
		for s, ns := range nt {
			ps = append(ps, pt("copy-nt", "seq", s, 1, 0, ns))
		}
		for s, ns := range tp {
			ps = append(ps, pt("copy-temporal", "seq", s, 1, 0, ns))
		}
		return ps
	}
	for _, tc := range []struct {
		name   string
		nt, tp map[int]float64
		want   int
	}{
		{"none", nil, nil, 0},
		{"crossover at 64",
			map[int]float64{8: 240, 16: 230, 32: 215, 64: 180, 128: 160, 4096: 350},
			map[int]float64{8: 210, 16: 210, 32: 212, 64: 210, 128: 215, 4096: 800}, 64},
		{"nt always faster",
			map[int]float64{8: 100, 64: 100, 4096: 300},
			map[int]float64{8: 200, 64: 200, 4096: 900}, 8},
		{"a tie within the margin is not faster",
			map[int]float64{8: 199, 64: 150},
			map[int]float64{8: 200, 64: 200}, 64},
		{"a win below a loss does not count",
			map[int]float64{8: 100, 16: 300, 32: 100},
			map[int]float64{8: 200, 16: 200, 32: 200}, 32},
		{"nt never faster",
			map[int]float64{8: 300, 4096: 900},
			map[int]float64{8: 200, 4096: 800}, 8192},
		{"slower only at the top",
			map[int]float64{8: 100, 4096: 900},
			map[int]float64{8: 200, 4096: 800}, 8192},
		{"unpaired sizes are ignored",
			map[int]float64{8: 300, 64: 100, 128: 100},
			map[int]float64{64: 200, 128: 200, 256: 100}, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, movntThreshold(curve(tc.nt, tc.tp)))
		})
	}
}

func TestInterferenceAndPersist(t *testing.T) {
	rs := []result{
		{Point: pt("read", "alone", 65536, 1, 10, 0)},
		{Point: pt("read", "alone", 65536, 2, 16, 0)},
		{Point: pt("read", "mixed", 65536, 2, 12, 0)},
		{Point: pt("write-nt", "mixed", 65536, 2, 5, 0)},
		{Point: pt("persist", "rand", 8, 1, 0, 500), P50Ns: 450},
		{Point: pt("persist", "seq", 8, 1, 0, 300), P50Ns: 210},
	}
	p := summarize(rs)
	require.InDelta(t, 0.75, p.Interference, 1e-9)
	require.InDelta(t, 210, p.PersistNs, 1e-9)
	require.Equal(t, device.ProfileFormat, p.Format)
	require.Len(t, p.Points, len(rs))
	require.NoError(t, p.Validate())

	// Without a timed run, the mean; without the points, 0.
	require.InDelta(t, 300, persistNs([]result{{Point: pt("persist", "seq", 8, 1, 0, 300)}}), 1e-9)
	require.Zero(t, persistNs(nil))
	require.Zero(t, interference([]device.Point{pt("read", "mixed", 65536, 2, 12, 0)}))
}

func TestMedian(t *testing.T) {
	require.Zero(t, median(nil))
	require.Equal(t, 3.0, median([]float64{5, 3, 1}))
	require.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	xs := []float64{3, 1, 2}
	median(xs)
	require.Equal(t, []float64{3, 1, 2}, xs, "median must not reorder its input")
}
