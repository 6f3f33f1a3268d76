package kv

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/numa"
	pmdevice "github.com/braid-pm/braid/persist/device"
)

// fakeNUMA, when BRAID_KV_FAKE_NUMA=1 (make test's purego pass sets it),
// runs a test's store on a fake two-node topology — this machine's CPUs 0
// and 1 as nodes 0 and 1, devices alternating between them — so that
// every crash, SIGKILL, model and concurrency test of kv also runs placed.
func fakeNUMA(o *Options, devs int) *Options {
	if os.Getenv("BRAID_KV_FAKE_NUMA") != "1" {
		return o
	}
	o.SysfsRoot = fakeTopology()
	o.DeviceNodes = make([]int, devs)
	for i := range o.DeviceNodes {
		o.DeviceNodes[i] = i % 2
	}
	return o
}

var (
	fakeOnce sync.Once
	fakeRoot string
)

// fakeTopology is a fake sysfs with two nodes (CPU 0, CPU 1), made once
// per test process.
func fakeTopology() string {
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kv-numa-")
		if err != nil {
			panic(err)
		}
		if fakeRoot, err = numa.WriteFake(dir, [][]int{{0}, {1}}); err != nil {
			panic(err)
		}
	})
	return fakeRoot
}

func twoCPUs(t testing.TB) {
	cpus, err := numa.ThreadCPUs()
	if err != nil || len(cpus) < 2 || cpus[0] != 0 || cpus[1] != 1 {
		t.Skipf("needs CPUs 0 and 1 for the fake topology (have %v, %v)", cpus, err)
	}
}

// TestNUMAPlacement: on the fake two-node topology each worker's thread is
// bound to its device's node's CPUs (read back from the kernel), writes
// alternate nodes, the emulated devices sit on their nodes, the shards are
// striped over the nodes, and the store works; NUMARemote binds the
// workers to the other node.
func TestNUMAPlacement(t *testing.T) {
	twoCPUs(t)
	for _, mode := range []NUMAMode{NUMAAuto, NUMARemote} {
		t.Run(mode.String(), func(t *testing.T) {
			o := testOptions(t, 2)
			o.SysfsRoot, o.DeviceNodes, o.NUMA = fakeTopology(), []int{0, 1}, mode
			p, err := pmdevice.Shipped("optane-1dimm")
			require.NoError(t, err)
			o.Emulate = p
			s := mustOpen(t, o)
			defer func() { require.NoError(t, s.Close()) }()
			for i := range 100 {
				require.NoError(t, s.Put([]byte{byte(i)}, []byte("v")))
			}
			r := s.NUMA()
			want := map[NUMAMode]string{NUMAAuto: "placed", NUMARemote: "remote (benchmark)"}[mode]
			require.Equal(t, want, r.Mode)
			require.Len(t, r.Nodes, 2)
			for _, n := range r.Nodes {
				require.Equal(t, []int{n.ID}, n.Devices, "device %d is on node %d", n.ID, n.ID)
				require.Len(t, n.Workers, s.c.workers)
				wantCPU := n.ID // node i is CPU i
				for k, cpus := range n.WorkerCPUs {
					require.Equal(t, []int{wantCPU}, cpus, "node %d worker %d's affinity", n.ID, n.Workers[k])
				}
				require.Equal(t, len(s.idx.shards)/2, n.Shards, "shards striped over both nodes")
			}
			for _, w := range s.workers {
				dn := w.dev.idx // device i on node i
				wn := s.c.workerNode(w.dev.idx)
				if mode == NUMARemote {
					require.NotEqual(t, dn, wn)
				} else {
					require.Equal(t, dn, wn)
				}
			}
			for i, e := range s.Emulated() {
				require.Equal(t, i, e.Node(), "emulated device %d on its node", i)
			}
			// Consecutive writes alternate nodes.
			for i := 1; i < len(s.spread); i++ {
				require.NotEqual(t, s.spread[i-1].dev.idx, s.spread[i].dev.idx)
			}
			for i := range 100 {
				v, err := s.Get([]byte{byte(i)})
				require.NoError(t, err)
				require.Equal(t, "v", string(v))
			}
		})
	}
}

// TestNUMAOneNode: on the real topology of a one-node machine nothing is
// bound and the order of writes is as before placement existed.
func TestNUMAOneNode(t *testing.T) {
	topo, err := numa.Read("")
	require.NoError(t, err)
	if len(topo.Nodes) != 1 {
		t.Skip("a multi-node machine")
	}
	o := testOptions(t, 2)
	o.SysfsRoot, o.DeviceNodes = "", []int{0, 0}
	s := mustOpen(t, o)
	defer func() { require.NoError(t, s.Close()) }()
	require.Equal(t, "one node", s.NUMA().Mode)
	for _, w := range s.workers {
		cpus, _ := w.cpus.Load().([]int)
		require.Nil(t, cpus)
	}
	W := s.c.workers
	for i, w := range s.spread {
		require.Equal(t, i%2, w.dev.idx, "devices alternate")
		require.Equal(t, (i/2)%W, w.id)
	}
}

// TestNUMABadOptions: a node the topology lacks, a DeviceNodes of the
// wrong length and an unknown mode are ErrInvalid naming what was wrong.
func TestNUMABadOptions(t *testing.T) {
	o := testOptions(t, 2)
	o.SysfsRoot, o.DeviceNodes = fakeTopology(), []int{0, 2}
	_, err := Open(o)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "DeviceNodes[1] = 2: the machine has nodes 0-1")
	o.DeviceNodes = []int{0}
	_, err = Open(o)
	require.ErrorContains(t, err, "DeviceNodes has 1 entries for 2 devices")
	o.DeviceNodes, o.NUMA = nil, 7
	_, err = Open(o)
	require.ErrorContains(t, err, "Options.NUMA 7")
	o.NUMA, o.SysfsRoot = NUMAAuto, filepath.Join(t.TempDir(), "nosuch")
	require.NoError(t, o.Validate(), "no node directory: one node, as the kernel treats it")
}
