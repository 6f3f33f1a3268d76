package main

import "fmt"

func init() {
	register(mode{
		name: "device",
		summary: "the full characterization (default): read, write, write+flush, write-nt bandwidth and latency " +
			"over sizes, patterns and thread counts, reads next to writers, and the copy mode",
		run:     runDevice,
		profile: true,
		minSize: perThreadMinSize,
	})
}

// Access sizes of the device matrix, and the shorter list of -quick.
var (
	deviceSizes = []int{64, 256, 1024, 4096, 16384, 65536}
	quickSizes  = []int{64, 4096, 65536}
	deviceOps   = []op{opRead, opWrite, opWriteFlush, opWriteNT}
)

// maxAccess is the largest access size of any mode.
const maxAccess = 64 << 10

func (b *bench) accessSizes() []int {
	if b.cfg.quick {
		return quickSizes
	}
	return deviceSizes
}

// threadCounts are the thread counts measured up to max: every count to 8,
// then powers of two, then max itself.
func threadCounts(max int) []int {
	var ts []int
	for t := 1; t <= max; {
		ts = append(ts, t)
		if t < 8 {
			t++
		} else {
			t *= 2
		}
	}
	if ts[len(ts)-1] != max {
		ts = append(ts, max)
	}
	return ts
}

func runDevice(b *bench) error {
	sizes := b.accessSizes()
	threads := threadCounts(b.cfg.threads)
	b.addSteps(len(deviceOps)*2*len(sizes)*len(threads) + mixedSteps + copySteps(b))

	for _, o := range deviceOps {
		for _, pat := range []pattern{seq, rand} {
			tab := &table{
				title: fmt.Sprintf("%s, %s: GB/s by thread count; latency of one access at 1 thread, every access timed: mean, p50, p99 (ns)", o, patternWord(pat)),
				left:  1,
			}
			tab.header = append(tab.header, "size")
			for _, t := range threads {
				tab.header = append(tab.header, fmt.Sprintf("%dT", t))
			}
			tab.header = append(tab.header, "mean", "p50", "p99")
			for _, size := range sizes {
				row := []string{byteString(int64(size))}
				var one result
				for _, t := range threads {
					res, err := b.point(group{op: o, pattern: pat, size: size, threads: t, lo: 0, hi: len(b.mem)})
					if err != nil {
						return err
					}
					b.add(res)
					if t == 1 {
						one = res
					}
					row = append(row, gbs(res.GBs))
				}
				row = append(row, nanos(one.MeanNs), nanos(one.P50Ns), nanos(one.P99Ns))
				tab.row(row...)
			}
			b.section(tab)
		}
	}
	if err := runMixed(b); err != nil {
		return err
	}
	return runCopy(b)
}

func patternWord(p pattern) string {
	if p == seq {
		return "sequential"
	}
	return "random"
}

// gbs formats a bandwidth in GB/s.
func gbs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// nanos formats a time in ns.
func nanos(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
