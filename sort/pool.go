package sort

import (
	"runtime"

	"github.com/braid-pm/braid/persist/device"
)

// Pools are the goroutine counts per access type ([WS] §3.4, the BRAID D
// property): readers gather keys and values and load run files, writers
// persist the write buffer and run files, sorters sort the IndexMap.
type Pools struct {
	Readers int `json:"readers"`
	Writers int `json:"writers"`
	Sorters int `json:"sorters"`
}

// maxPoolPerCPU caps the pools the controller derives from a profile, as a
// multiple of GOMAXPROCS: a profile measured on a larger machine (or a
// corrupt one) must not start a thousand goroutines on two CPUs. More
// goroutines than CPUs only help to keep more memory accesses in flight.
const maxPoolPerCPU = 4

// PoolsFor is the thread-pool controller: the reader pool is the knee of
// the profile's read curves (the fewest threads within 5% of peak), the
// writer pool the knee of its write curve — device writes stop scaling
// early, and more writers only add contention — and the sorter pool is
// every CPU, as sorting is compute-bound. Without a profile: readers and
// sorters = GOMAXPROCS, writers = min(4, GOMAXPROCS). Pools from a profile
// are capped at 4 x GOMAXPROCS.
func PoolsFor(p *device.Profile) Pools {
	procs := runtime.GOMAXPROCS(0)
	limit := maxPoolPerCPU * procs
	return Pools{
		Readers: max(1, min(p.ReadThreads(), limit)),
		Writers: max(1, min(p.WriteThreads(), limit)),
		Sorters: procs,
	}
}
