//go:build unix

package kv

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system CPU time: benchmarks report it
// per operation beside the wall time, which a loaded machine inflates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
