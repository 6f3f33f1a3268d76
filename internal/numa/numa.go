// Package numa reads the machine's NUMA topology from sysfs and places
// threads and memory on nodes: what kv needs for SKYE's NUMA awareness
// (papers/002 §4, R4) and what persist's device model needs to charge a
// remote access. Every reader takes a sysfs root, so a test can build a
// fake two-node machine in a temporary directory on any host; the
// placement calls (BindThread, Bind) act on the real kernel and report an
// error wrapping ErrUnsupported where it refuses, so callers can degrade.
package numa

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrUnsupported: the kernel or platform refused a placement (no such
// node online, no NUMA support, not Linux). Callers degrade to no
// placement and may report it.
var ErrUnsupported = errors.New("numa: placement not supported here")

// ErrBadTopology: sysfs said something that does not parse.
var ErrBadTopology = errors.New("numa: bad topology")

// DefaultRoot is the real sysfs.
const DefaultRoot = "/sys"

// Node is one NUMA node: its id and the CPUs on it.
type Node struct {
	ID   int
	CPUs []int
}

// Topology is the machine's nodes, in id order.
type Topology struct {
	Root  string // the sysfs root it was read from
	Nodes []Node
}

// Read reads the nodes under root/devices/system/node (root "" is
// DefaultRoot). A system without that directory (no NUMA support
// compiled in, or not Linux) reads as one node holding every CPU the
// process may use, as the kernel itself treats it.
func Read(root string) (*Topology, error) {
	if root == "" {
		root = DefaultRoot
	}
	dir := filepath.Join(root, "devices", "system", "node")
	online, err := os.ReadFile(filepath.Join(dir, "online"))
	if errors.Is(err, os.ErrNotExist) {
		cpus, err := ThreadCPUs()
		if err != nil || len(cpus) == 0 {
			cpus = []int{0}
		}
		return &Topology{Root: root, Nodes: []Node{{ID: 0, CPUs: cpus}}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("numa: %w", err)
	}
	ids, err := ParseList(string(online))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadTopology, filepath.Join(dir, "online"), err)
	}
	t := &Topology{Root: root}
	for _, id := range ids {
		p := filepath.Join(dir, "node"+strconv.Itoa(id), "cpulist")
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: node %d: %v", ErrBadTopology, id, err)
		}
		cpus, err := ParseList(string(b))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadTopology, p, err)
		}
		t.Nodes = append(t.Nodes, Node{ID: id, CPUs: cpus})
	}
	if len(t.Nodes) == 0 {
		return nil, fmt.Errorf("%w: %s lists no node", ErrBadTopology, filepath.Join(dir, "online"))
	}
	return t, nil
}

// Node returns node id.
func (t *Topology) Node(id int) (Node, bool) {
	for _, n := range t.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// NodeOfCPU returns the node holding cpu, or -1.
func (t *Topology) NodeOfCPU(cpu int) int {
	for _, n := range t.Nodes {
		for _, c := range n.CPUs {
			if c == cpu {
				return n.ID
			}
		}
	}
	return -1
}

// IDs returns the node ids in order.
func (t *Topology) IDs() []int {
	ids := make([]int, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// String is "node0: cpus 0-1; node1: cpus 2-3".
func (t *Topology) String() string {
	var parts []string
	for _, n := range t.Nodes {
		parts = append(parts, fmt.Sprintf("node%d: cpus %s", n.ID, FormatList(n.CPUs)))
	}
	return strings.Join(parts, "; ")
}

// ParseList parses a kernel cpu/node list such as "0-3,8,10-11" (an
// empty or blank list is empty).
func ParseList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad list item %q in %q", part, s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad range %q in %q", part, s)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("range %q in %q is too long", part, s)
		}
		for i := a; i <= b; i++ {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

// FormatList is ParseList's inverse: ascending runs as "a-b".
func FormatList(xs []int) string {
	s := append([]int(nil), xs...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
