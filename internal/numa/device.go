package numa

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DeviceNode returns the NUMA node of the device that holds path: the
// block device its file system lives on (a pmem namespace:
// /sys/block/pmemN/device/numa_node, a partition's parent's), or the
// character device itself when path is a DAX device (/dev/daxX.Y). ok is
// false when sysfs cannot tell: tmpfs and other memory file systems (no
// backing device), a device without a numa_node, or -1 there (the
// firmware did not say). root "" is DefaultRoot.
func DeviceNode(root, path string) (node int, ok bool) {
	if root == "" {
		root = DefaultRoot
	}
	major, minor, char, err := deviceOf(path)
	if err != nil {
		return -1, false
	}
	return devNode(root, major, minor, char)
}

// devNode looks a device number up under root/dev/{block,char}.
func devNode(root string, major, minor uint32, char bool) (int, bool) {
	if major == 0 {
		return -1, false // an anonymous device: tmpfs, overlay, ...
	}
	kind := "block"
	if char {
		kind = "char"
	}
	dir := filepath.Join(root, "dev", kind, strconv.FormatUint(uint64(major), 10)+":"+strconv.FormatUint(uint64(minor), 10))
	// A whole device has device/numa_node; a partition's is its parent's.
	for _, p := range []string{
		filepath.Join(dir, "device", "numa_node"),
		filepath.Join(dir, "numa_node"),
		filepath.Join(dir, "..", "device", "numa_node"),
	} {
		if n, ok := readNode(p); ok {
			return n, true
		}
	}
	return -1, false
}

func readNode(p string) (int, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return -1, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return -1, false
	}
	return n, true
}
