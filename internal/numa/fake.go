package numa

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// FakeDevice places a device number on a node in a fake sysfs.
type FakeDevice struct {
	Major, Minor uint32
	Char         bool // a character (DAX) device; else a block device
	Node         int
}

// WriteFake builds a fake sysfs under dir with one node per element of
// cpus (node i holds cpus[i]) and the given devices, and returns the root
// to pass to Read and DeviceNode. Tests use it to run a two-node machine
// on a one-node host (this machine's two CPUs as two nodes).
func WriteFake(dir string, cpus [][]int, devices ...FakeDevice) (string, error) {
	nodeDir := filepath.Join(dir, "devices", "system", "node")
	ids := make([]int, len(cpus))
	for i, c := range cpus {
		ids[i] = i
		d := filepath.Join(nodeDir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(d, "cpulist"), []byte(FormatList(c)+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(nodeDir, "online"), []byte(FormatList(ids)+"\n"), 0o644); err != nil {
		return "", err
	}
	for _, dev := range devices {
		kind := "block"
		if dev.Char {
			kind = "char"
		}
		d := filepath.Join(dir, "dev", kind, fmt.Sprintf("%d:%d", dev.Major, dev.Minor), "device")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(d, "numa_node"), []byte(strconv.Itoa(dev.Node)+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
