package device

import (
	"fmt"

	"github.com/braid-pm/braid/internal/numa"
)

// place puts d on node p.Node of the topology under p.SysfsRoot.
func (d *Device) place(p *NUMA) error {
	topo, err := numa.Read(p.SysfsRoot)
	if err != nil {
		return fmt.Errorf("%w: device NUMA placement: %v", ErrInvalid, err)
	}
	if _, ok := topo.Node(p.Node); !ok {
		return fmt.Errorf("%w: device on NUMA node %d: the machine has nodes %s", ErrInvalid, p.Node, numa.FormatList(topo.IDs()))
	}
	d.node = p.Node
	if len(topo.Nodes) < 2 {
		return nil // one node: every access is local, and nothing is asked of the kernel
	}
	for _, n := range topo.Nodes {
		for _, c := range n.CPUs {
			for len(d.cpuNodes) <= c {
				d.cpuNodes = append(d.cpuNodes, -1)
			}
			d.cpuNodes[c] = n.ID
		}
	}
	return nil
}

// Node is the NUMA node the device sits on (Options.NUMA), -1 for none.
func (d *Device) Node() int { return d.node }

// remote is the factor an access by the calling thread costs: f when the
// thread runs on a CPU of another node than the device's, else 1. Without
// a placement on a machine of two or more nodes it asks nothing of the
// kernel.
func (d *Device) remote(f float64) float64 {
	if d.cpuNodes == nil || f <= 1 {
		return 1
	}
	c := d.whereAmI()
	if c < 0 || c >= len(d.cpuNodes) || d.cpuNodes[c] < 0 || d.cpuNodes[c] == d.node {
		return 1
	}
	return f
}
