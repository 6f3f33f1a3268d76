package numa

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"0\n", []int{0}, false},
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}, false},
		{"3,1-2,2", []int{1, 2, 3}, false},
		{"a", nil, true},
		{"3-1", nil, true},
		{"-1", nil, true},
		{"0-99999999", nil, true},
	} {
		got, err := ParseList(tc.in)
		if tc.bad {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		if len(got) > 0 {
			back, err := ParseList(FormatList(got))
			require.NoError(t, err)
			require.Equal(t, got, back)
		}
	}
	require.Equal(t, "0-3,8,10-11", FormatList([]int{11, 10, 8, 3, 2, 1, 0}))
}

func TestReadFake(t *testing.T) {
	root, err := WriteFake(t.TempDir(), [][]int{{0}, {1}},
		FakeDevice{Major: 259, Minor: 0, Node: 1}, FakeDevice{Major: 252, Minor: 3, Char: true, Node: 0})
	require.NoError(t, err)
	topo, err := Read(root)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, topo.IDs())
	require.Equal(t, 1, topo.NodeOfCPU(1))
	require.Equal(t, -1, topo.NodeOfCPU(7))
	n, ok := topo.Node(1)
	require.True(t, ok)
	require.Equal(t, []int{1}, n.CPUs)
	require.Equal(t, "node0: cpus 0; node1: cpus 1", topo.String())

	node, ok := devNode(root, 259, 0, false)
	require.True(t, ok)
	require.Equal(t, 1, node)
	node, ok = devNode(root, 252, 3, true)
	require.True(t, ok)
	require.Equal(t, 0, node)
	_, ok = devNode(root, 259, 1, false) // not listed
	require.False(t, ok)
	_, ok = devNode(root, 0, 40, false) // anonymous (tmpfs)
	require.False(t, ok)
}

func TestReadBad(t *testing.T) {
	dir := t.TempDir()
	nodeDir := filepath.Join(dir, "devices", "system", "node")
	require.NoError(t, os.MkdirAll(nodeDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(nodeDir, "online"), []byte("x\n"), 0o644))
	_, err := Read(dir)
	require.ErrorIs(t, err, ErrBadTopology)
	require.NoError(t, os.WriteFile(filepath.Join(nodeDir, "online"), []byte("0\n"), 0o644))
	_, err = Read(dir) // node0/cpulist missing
	require.ErrorIs(t, err, ErrBadTopology)

	// No node directory at all: one node with the process's CPUs.
	topo, err := Read(t.TempDir())
	require.NoError(t, err)
	require.Len(t, topo.Nodes, 1)
	require.NotEmpty(t, topo.Nodes[0].CPUs)
}

func TestRealTopology(t *testing.T) {
	topo, err := Read("")
	require.NoError(t, err)
	require.NotEmpty(t, topo.Nodes)
	// A tmpfs file has no backing device: the node is unknown.
	f := filepath.Join(t.TempDir(), "x")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	if _, ok := DeviceNode("", "/dev/shm"); ok && runtime.GOOS == "linux" {
		t.Fatalf("tmpfs reported a device node")
	}
}

func TestBindThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := ThreadCPUs()
	require.NoError(t, err)
	defer func() { require.NoError(t, BindThread(before)) }()
	last := before[len(before)-1]
	require.NoError(t, BindThread([]int{last}))
	now, err := ThreadCPUs()
	require.NoError(t, err)
	require.Equal(t, []int{last}, now)
	require.Equal(t, last, CPU())
	require.ErrorIs(t, BindThread(nil), ErrUnsupported)
	require.ErrorIs(t, BindThread([]int{1 << 20}), ErrUnsupported)
}

func TestBindMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	b, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	defer unix.Munmap(b)
	topo, err := Read("")
	require.NoError(t, err)
	node := topo.Nodes[0].ID
	err = Bind(b, node)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("the kernel refuses mbind here: %v", err)
	}
	require.NoError(t, err)
	b[0] = 1
	got, err := PageNode(b)
	require.NoError(t, err)
	require.Equal(t, node, got)
	// A node that is not online is refused, not a crash.
	require.ErrorIs(t, Bind(b, 1000), ErrUnsupported)
	require.ErrorIs(t, Bind(b[1:], node), ErrUnsupported)
}

func TestDeviceNodeOfFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	dir := t.TempDir()
	major, minor, char, err := deviceOf(dir)
	require.NoError(t, err)
	if major == 0 {
		t.Skipf("%s is on an anonymous device (%d:%d): nothing to look up", dir, major, minor)
	}
	root, err := WriteFake(filepath.Join(t.TempDir(), "sys"), [][]int{{0}, {1}},
		FakeDevice{Major: major, Minor: minor, Char: char, Node: 1})
	require.NoError(t, err)
	node, ok := DeviceNode(root, dir)
	require.True(t, ok)
	require.Equal(t, 1, node)
	_, ok = DeviceNode(root, filepath.Join(dir, "missing"))
	require.False(t, ok)
}
