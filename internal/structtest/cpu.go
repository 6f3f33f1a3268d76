package structtest

import (
	"testing"
	"time"
)

// CPU is a benchmark's stopwatch of CPU time: the process's user and
// system time, which, unlike the wall time that ns/op reports, does not
// grow while the benchmark waits for a core that other processes hold (a
// shared machine). Start it after the setup, right before the b.Loop loop,
// and Report after it.
type CPU struct{ start time.Duration }

// StartCPU starts a CPU stopwatch.
func StartCPU() CPU { return CPU{start: cpuTime()} }

// Report reports the CPU time since StartCPU per b.N iteration and per
// unit (per of them in each iteration) as the metric "cpu-ns/"+unit. It
// reports nothing where the platform has no CPU clock (cpuTime is 0).
func (c CPU) Report(b *testing.B, per float64, unit string) {
	b.Helper()
	end := cpuTime()
	if end == 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64((end-c.start).Nanoseconds())/float64(b.N)/per, "cpu-ns/"+unit)
}
