package kv

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/braid-pm/braid/internal/numa"
)

// NUMA placement: SKYE's fourth pillar (papers/002 §4, R4; O6: a thread
// reaching NVDIMMs of another node sees 3x lower write and 2.5x lower
// read throughput).
//
// At Open the store reads the machine's nodes (sysfs, Options.SysfsRoot)
// and each device's node: Options.DeviceNodes where given, else the
// block or DAX device its directory lives on (internal/numa.DeviceNode);
// a directory on tmpfs has none. When the topology has two or more nodes
// and a device's node is known, that device's dedicated workers lock
// their goroutine to an OS thread bound to the node's CPUs
// (sched_setaffinity), its emulated device (Options.Emulate) sits on the
// node and charges remote accesses at the profile's remote cost, writes
// are spread over nodes first and then over a node's workers, and the
// index's hash shards are striped over the nodes: each shard's table is
// bound to its node (mbind; where the kernel refuses, it stays where it
// was first touched and the report says so) and is rebuilt at recovery by
// a goroutine bound to that node. On one node nothing is bound and
// nothing changes.
//
// A shard holds the keys of its hash, whatever device their newest
// version is on: SKYE instead keeps one index per node over that node's
// entries and has a get consult every node's. kv keeps one slot per key
// (tokens, tombstones and the ordered index rely on it), so a put may
// update a shard on another node; the README says what that costs.

// NUMAMode is how a store places itself on NUMA nodes (Options.NUMA).
type NUMAMode uint8

const (
	// NUMAAuto places workers, emulated devices and index shards on
	// their nodes where the topology has two or more nodes.
	NUMAAuto NUMAMode = iota
	// NUMAOff places nothing (and reads no topology).
	NUMAOff
	// NUMARemote binds each device's workers to the CPUs of another node
	// than the device's: the wrong placement SKYE's O6 measures, for
	// benchmarks (pmkv bench -numa remote). Not for production.
	NUMARemote
)

func (m NUMAMode) String() string {
	switch m {
	case NUMAAuto:
		return "auto"
	case NUMAOff:
		return "off"
	case NUMARemote:
		return "remote"
	}
	return fmt.Sprintf("NUMAMode(%d)", uint8(m))
}

// placement is what resolveNUMA decided.
type placement struct {
	topo    *numa.Topology // nil: NUMAOff
	active  bool           // two or more nodes and some device's node known
	devNode []int          // each device's node, -1 unknown
	nodes   []int          // the topology's node ids, in order
}

// resolveNUMA reads the topology and the devices' nodes.
func (c *config) resolveNUMA() error {
	c.place = &placement{}
	if c.NUMA > NUMARemote {
		return fmt.Errorf("%w: Options.NUMA %d: want NUMAAuto, NUMAOff or NUMARemote", ErrInvalid, c.NUMA)
	}
	ndev := len(c.Devices)
	if c.media != nil {
		ndev = c.media.(interface{ count() int }).count()
	}
	if c.DeviceNodes != nil && len(c.DeviceNodes) != ndev {
		return fmt.Errorf("%w: Options.DeviceNodes has %d entries for %d devices (one node per device, -1 to ask sysfs)", ErrInvalid, len(c.DeviceNodes), ndev)
	}
	if c.NUMA == NUMAOff {
		return nil
	}
	topo, err := numa.Read(c.SysfsRoot)
	if err != nil {
		return fmt.Errorf("%w: Options.SysfsRoot: %v", ErrInvalid, err)
	}
	p := c.place
	p.topo, p.nodes = topo, topo.IDs()
	p.devNode = make([]int, ndev)
	for i := range ndev {
		p.devNode[i] = -1
		if c.DeviceNodes != nil && c.DeviceNodes[i] >= 0 {
			if _, ok := topo.Node(c.DeviceNodes[i]); !ok {
				return fmt.Errorf("%w: Options.DeviceNodes[%d] = %d: the machine has nodes %s", ErrInvalid, i, c.DeviceNodes[i], numa.FormatList(p.nodes))
			}
			p.devNode[i] = c.DeviceNodes[i]
		} else if i < len(c.Devices) {
			if n, ok := numa.DeviceNode(c.SysfsRoot, c.Devices[i]); ok {
				p.devNode[i] = n
			}
		}
		if p.devNode[i] >= 0 && len(p.nodes) > 1 {
			p.active = true
		}
	}
	return nil
}

// workerNode is the node whose CPUs device dev's workers run on: the
// device's, another one with NUMARemote, -1 for none.
func (c *config) workerNode(dev int) int {
	p := c.place
	if p == nil || !p.active || p.devNode[dev] < 0 {
		return -1
	}
	n := p.devNode[dev]
	if c.NUMA == NUMARemote {
		i := slices.Index(p.nodes, n)
		n = p.nodes[(i+1)%len(p.nodes)]
	}
	return n
}

// deviceNode is device dev's node for its emulated device, -1 for none.
func (c *config) deviceNode(dev int) int {
	if p := c.place; p != nil && p.active {
		return p.devNode[dev]
	}
	return -1
}

// shardNode is the node shard i's table lives on, -1 for none: the shards
// are striped over the nodes that hold devices.
func (c *config) shardNode(i int) int {
	p := c.place
	if p == nil || !p.active {
		return -1
	}
	var held []int
	for _, n := range p.nodes {
		if slices.Contains(p.devNode, n) {
			held = append(held, n)
		}
	}
	return held[i%len(held)]
}

// bindToNode locks the calling goroutine to its OS thread and binds the
// thread to node's CPUs; it returns the thread's affinity read back (nil
// when node is -1 or the kernel refused: the goroutine then runs
// unbound). A bound goroutine never unlocks: when it ends, the runtime
// ends its thread instead of handing the narrowed affinity to others.
func (c *config) bindToNode(node int) []int {
	if node < 0 {
		return nil
	}
	n, ok := c.place.topo.Node(node)
	if !ok {
		return nil
	}
	runtime.LockOSThread()
	if err := numa.BindThread(n.CPUs); err != nil {
		runtime.UnlockOSThread()
		return nil
	}
	cpus, err := numa.ThreadCPUs()
	if err != nil {
		return nil
	}
	return cpus
}

// routeOrder is the order writes visit the workers: nodes first (each
// node's devices in turn), then the workers of a device; without
// placement, devices first, then their workers, as before.
func (s *Store) routeOrder() []*worker {
	W := s.c.workers
	var groups [][]*device // devices grouped by node, in node order
	if p := s.c.place; p != nil && p.active {
		byNode := map[int][]*device{}
		var order []int
		for _, d := range s.devs {
			n := p.devNode[d.idx]
			if _, ok := byNode[n]; !ok {
				order = append(order, n)
			}
			byNode[n] = append(byNode[n], d)
		}
		slices.Sort(order)
		for _, n := range order {
			groups = append(groups, byNode[n])
		}
	} else {
		groups = [][]*device{s.devs}
	}
	// Round-robin: node, then device within the node, then worker.
	out := make([]*worker, 0, len(s.workers))
	pos := make([]int, len(groups))
	for len(out) < len(s.workers) {
		for g, devs := range groups {
			k := pos[g]
			if k >= len(devs)*W {
				continue
			}
			d := devs[k%len(devs)]
			out = append(out, s.workers[d.idx*W+k/len(devs)])
			pos[g]++
		}
	}
	return out
}

// buildPlan deals ns shards to par build goroutines: goroutine p builds
// shards plan[p] bound to node nodes[p] (-1: unbound). With placement,
// each node's shards go to goroutines bound to that node (at least one
// per node), so a table is first touched on its node even where mbind is
// refused; without, shard i goes to goroutine i mod par.
func (s *Store) buildPlan(par, ns int) (nodes []int, plan [][]int) {
	p := s.c.place
	if p == nil || !p.active {
		nodes, plan = make([]int, par), make([][]int, par)
		for g := range par {
			nodes[g] = -1
		}
		for i := range ns {
			plan[i%par] = append(plan[i%par], i)
		}
		return nodes, plan
	}
	byNode := map[int][]int{}
	var order []int
	for i := range ns {
		n := s.c.shardNode(i)
		if _, ok := byNode[n]; !ok {
			order = append(order, n)
		}
		byNode[n] = append(byNode[n], i)
	}
	per := max(1, par/len(order))
	for _, n := range order {
		first := len(plan)
		for range per {
			nodes = append(nodes, n)
			plan = append(plan, nil)
		}
		for k, i := range byNode[n] {
			plan[first+k%per] = append(plan[first+k%per], i)
		}
	}
	return nodes, plan
}

// NUMAReport says where the store placed itself (Store.NUMA).
type NUMAReport struct {
	Mode  string // "off", "one node", "no device node known", "placed", "remote (benchmark)"
	Nodes []NodeReport
}

// NodeReport is one node's share of the store.
type NodeReport struct {
	ID          int
	CPUs        []int
	Devices     []int   // indices into Options.Devices
	Workers     []int   // workers bound to this node's CPUs (Store.workers order)
	WorkerCPUs  [][]int // each one's affinity, read back from the kernel
	Shards      int     // index shards striped onto this node
	ShardsBound int     // ... whose mapped table the kernel bound to it (mbind)
}

// NUMA reports the store's placement.
func (s *Store) NUMA() NUMAReport {
	p := s.c.place
	var r NUMAReport
	switch {
	case p == nil || p.topo == nil:
		r.Mode = "off"
		return r
	case len(p.nodes) < 2:
		r.Mode = "one node"
	case !p.active:
		r.Mode = "no device node known"
	case s.c.NUMA == NUMARemote:
		r.Mode = "remote (benchmark)"
	default:
		r.Mode = "placed"
	}
	for _, n := range p.topo.Nodes {
		nr := NodeReport{ID: n.ID, CPUs: n.CPUs}
		for d, dn := range p.devNode {
			if dn == n.ID {
				nr.Devices = append(nr.Devices, d)
			}
		}
		for _, w := range s.workers {
			if s.c.workerNode(w.dev.idx) == n.ID {
				nr.Workers = append(nr.Workers, w.gid)
				cpus, _ := w.cpus.Load().([]int)
				nr.WorkerCPUs = append(nr.WorkerCPUs, cpus)
			}
		}
		for i := range s.idx.shards {
			if s.c.shardNode(i) == n.ID {
				nr.Shards++
				sh := &s.idx.shards[i]
				sh.mu.RLock()
				if sh.t.mem.boundTo(n.ID) {
					nr.ShardsBound++
				}
				sh.mu.RUnlock()
			}
		}
		r.Nodes = append(r.Nodes, nr)
	}
	return r
}
