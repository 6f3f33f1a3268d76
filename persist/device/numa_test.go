package device

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/numa"
)

// fakeTwoNodes is this machine's CPUs 0 and 1 as two NUMA nodes.
func fakeTwoNodes(t *testing.T) string {
	root, err := numa.WriteFake(t.TempDir(), [][]int{{0}, {1}})
	require.NoError(t, err)
	return root
}

// TestRemoteCharge: on a two-node topology, a device on node 1 charges an
// access from a CPU of node 0 the model's remote factor (SKYE O6: writes
// 3x, reads 2.5x) and one from node 1 nothing more, in device time (the
// model's accounting, whatever the machine's load).
func TestRemoteCharge(t *testing.T) {
	p := optane(t)
	d, err := New(p, &Options{Burst: time.Nanosecond, NUMA: &NUMA{Node: 1, SysfsRoot: fakeTwoNodes(t)}})
	require.NoError(t, err)
	require.Equal(t, 1, d.Node())
	cpu := 0
	d.whereAmI = func() int { return cpu }
	clk := &stepClock{}
	d.clk = clk
	const size = 64 << 10
	timeOf := func(f func()) (w, r time.Duration) {
		before := d.Stats()
		f()
		after := d.Stats()
		return after.WriteTime - before.WriteTime, after.ReadTime - before.ReadTime
	}
	for _, c := range []int{0, 1} {
		cpu = c
		w, _ := timeOf(func() { d.chargeWrite(1<<30, size) })
		clk.t += 1e8 // past the write's interference window
		_, r := timeOf(func() { d.chargeRead(seqRead, size, 1) })
		clk.t += 1e8
		want := time.Duration(float64(size) / At(p.Model.Write, 1))
		wantR := time.Duration(float64(size) / At(p.Model.SeqRead, 1))
		if c == 0 {
			want = time.Duration(float64(want) * p.Model.RemoteWrite)
			wantR = time.Duration(float64(wantR) * p.Model.RemoteRead)
		}
		require.InDelta(t, float64(want), float64(w), 2, "write from CPU %d", c)
		require.InDelta(t, float64(wantR), float64(r), 2, "read from CPU %d", c)
	}
	require.EqualValues(t, 2*size, d.Stats().RemoteBytes, "one remote write and one remote read")

	// A CPU the topology does not list counts as local.
	cpu = 7
	before := d.Stats().RemoteBytes
	d.chargeWrite(2<<30, size)
	require.Equal(t, before, d.Stats().RemoteBytes)
}

// TestNUMAPlacementErrors: a node the topology lacks is ErrInvalid naming
// the nodes; one node (the real machine here) charges nothing remote.
func TestNUMAPlacementErrors(t *testing.T) {
	p := optane(t)
	_, err := New(p, &Options{NUMA: &NUMA{Node: 2, SysfsRoot: fakeTwoNodes(t)}})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "nodes 0-1")
	topo, err := numa.Read("")
	require.NoError(t, err)
	d, err := New(p, &Options{NUMA: &NUMA{Node: topo.Nodes[0].ID}})
	require.NoError(t, err)
	if len(topo.Nodes) == 1 {
		require.Nil(t, d.cpuNodes, "one node: no per-access lookup")
		require.EqualValues(t, 1, d.remote(3))
	}
	bad := *p.Model
	bad.RemoteWrite = -1
	q := *p
	q.Model = &bad
	_, err = New(&q, nil)
	require.ErrorIs(t, err, ErrInvalid)
}

// TestRemoteChargeRealThread: the same through the real getcpu, with the
// calling thread bound to CPU 0 and then 1 (skipped on a one-CPU host).
func TestRemoteChargeRealThread(t *testing.T) {
	cpus, err := numa.ThreadCPUs()
	if err != nil || len(cpus) < 2 || cpus[0] != 0 || cpus[1] != 1 {
		t.Skipf("needs CPUs 0 and 1 (have %v, %v)", cpus, err)
	}
	d, err := New(optane(t), &Options{Burst: time.Nanosecond, NUMA: &NUMA{Node: 1, SysfsRoot: fakeTwoNodes(t)}})
	require.NoError(t, err)
	d.clk = &stepClock{}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() { require.NoError(t, numa.BindThread(cpus)) }()
	require.NoError(t, numa.BindThread([]int{0}))
	d.chargeWrite(1<<30, 4096)
	require.EqualValues(t, 4096, d.Stats().RemoteBytes, "CPU 0 is on node 0, the device on node 1")
	require.NoError(t, numa.BindThread([]int{1}))
	d.chargeWrite(2<<30, 4096)
	require.EqualValues(t, 4096, d.Stats().RemoteBytes, "CPU 1 is the device's node")
}
