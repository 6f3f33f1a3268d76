package kv

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pmdevice "github.com/braid-pm/braid/persist/device"
)

// numaStore opens a store of ndev emulated devices (optane-1dimm slowed
// slow times, so that the device and not the two CPUs is the limit) on
// the fake two-node topology, device i on node i, in mode.
func numaStore(tb testing.TB, ndev int, mode NUMAMode, slow float64) *Store {
	p, err := pmdevice.Shipped("optane-1dimm")
	require.NoError(tb, err)
	o := testOptions(tb, ndev)
	o.Emulate = p.Slowed(slow)
	o.WorkersPerDevice = 2
	o.DedicatedWorkers = true // the placement binds the workers' threads
	o.WorkerReads = true      // ... and they make the reads (SKYE's path), so reads are placed too
	o.SegmentSize, o.DeviceSize = 8<<20, 256<<20
	o.SysfsRoot, o.DeviceNodes, o.NUMA = fakeTopology(), make([]int, ndev), mode
	for i := range ndev {
		o.DeviceNodes[i] = i
	}
	return mustOpen(tb, o)
}

// TestNUMARemoteCharges: with NUMA-aware placement the workers' device
// accesses are local (no remote bytes); with the workers on the wrong
// node every byte they write is charged remote (the model's accounting,
// not the clock).
func TestNUMARemoteCharges(t *testing.T) {
	twoCPUs(t)
	for _, mode := range []NUMAMode{NUMAAuto, NUMARemote} {
		s := numaStore(t, 2, mode, 1)
		val := make([]byte, 4096)
		for i := range 64 {
			require.NoError(t, s.Put(fmt.Appendf(nil, "k%03d", i), val))
		}
		for i, d := range s.Emulated() {
			st := d.Stats()
			if mode == NUMAAuto {
				require.Zero(t, st.RemoteBytes, "device %d: local workers", i)
			} else {
				require.Equal(t, st.WriteBytes, st.RemoteBytes, "device %d: every write from the other node", i)
			}
		}
		require.NoError(t, s.Close())
	}
}

// BenchmarkNUMA reproduces SKYE's O6 and Table 2 on emulated devices and
// the fake two-node topology (this machine's CPUs 0 and 1 as two nodes):
// 16 KiB puts and gets from 16 clients on optane-1dimm slowed 40x,
// workers placed on their devices' nodes (local) or on the other one
// (remote); and 1 device on one node against 2 devices on two nodes
// (scale). It reports MB/s of values written or read.
//
//	go test -run '^$' -bench NUMA -benchtime 2000x ./kv/
func BenchmarkNUMA(b *testing.B) {
	for _, tc := range []struct {
		name string
		ndev int
		mode NUMAMode
	}{
		{"local/2dev", 2, NUMAAuto},
		{"remote/2dev", 2, NUMARemote},
		{"scale/1node", 1, NUMAAuto},
		{"scale/2nodes", 2, NUMAAuto},
	} {
		for _, op := range []string{"put", "get"} {
			b.Run(tc.name+"/"+op, func(b *testing.B) {
				numaBench(b, tc.ndev, tc.mode, op)
			})
		}
	}
}

func numaBench(b *testing.B, ndev int, mode NUMAMode, op string) {
	twoCPUs(b)
	s := numaStore(b, ndev, mode, 40)
	defer s.Close()
	const clients, size = 16, 16 << 10
	val := make([]byte, size)
	keys := 4096
	if op == "get" {
		for i := range keys {
			require.NoError(b, s.Put(fmt.Appendf(nil, "k%05d", i), val))
		}
	}
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				k := fmt.Appendf(nil, "k%05d", int(i)%keys)
				var err error
				if op == "put" {
					err = s.Put(k, val)
				} else {
					_, err = s.Get(k)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)*size/time.Since(start).Seconds()/1e6, "MB/s")
}
