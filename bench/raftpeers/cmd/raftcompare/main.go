// Command raftcompare measures braid's raftstore beside raft-boltdb/v2
// and raft-wal in one run: StoreLogs in batches of 1, 16 and 256 (calls'
// latency, entries/s), GetLog and DeleteRange on each store alone; then a
// 3-node hashicorp/raft cluster on loopback TCP per store (every node on
// its own store of that kind), with one client (Apply latency) and 16
// (commits/s), and the share of a commit spent in the log store. The
// stores run interleaved, round after round; the table gives medians of
// the rounds. Stores live under -dir (tmpfs, /dev/shm, by default).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/braid-pm/braid/bench/raftpeers"
)

type config struct {
	dir     string
	rounds  int
	entries int
	size    int
	gets    int
	applies int
	clients int
	batches []int
	only    string
	noMicro bool
	noRaft  bool
}

func main() {
	var c config
	var batches string
	flag.StringVar(&c.dir, "dir", "/dev/shm", "where the stores' directories are made")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds (each store once per round, interleaved)")
	flag.IntVar(&c.entries, "entries", 65536, "entries each StoreLogs batch size appends")
	flag.IntVar(&c.size, "size", 128, "bytes of data per entry")
	flag.IntVar(&c.gets, "gets", 100000, "GetLog calls")
	flag.IntVar(&c.applies, "applies", 20000, "raft.Apply calls per cluster phase")
	flag.IntVar(&c.clients, "clients", 16, "goroutines of the concurrent cluster phase")
	flag.StringVar(&batches, "batches", "1,16,256", "StoreLogs batch sizes")
	flag.StringVar(&c.only, "only", "", "run only these stores (comma-separated)")
	flag.BoolVar(&c.noMicro, "no-store", false, "skip the single-store measurements")
	flag.BoolVar(&c.noRaft, "no-cluster", false, "skip the cluster")
	flag.Parse()
	for _, f := range strings.Split(batches, ",") {
		var b int
		if _, err := fmt.Sscan(f, &b); err != nil || b < 1 {
			fmt.Fprintf(os.Stderr, "raftcompare: -batches: %q is not a batch size (1 or more)\n", f)
			os.Exit(2)
		}
		c.batches = append(c.batches, b)
	}
	if c.rounds < 1 || c.entries < 256 || c.size < 1 || c.applies < 100 || c.clients < 1 {
		fmt.Fprintln(os.Stderr, "raftcompare: want -rounds >= 1, -entries >= 256, -size >= 1, -applies >= 100, -clients >= 1")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "raftcompare:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	peers := raftpeers.Peers
	if c.only != "" {
		peers = nil
		for _, p := range raftpeers.Peers {
			if strings.Contains(","+c.only+",", ","+p.Name+",") {
				peers = append(peers, p)
			}
		}
	}
	host, _ := os.Hostname()
	fmt.Printf("raftcompare %s\n", strings.Join(os.Args[1:], " "))
	fmt.Printf("machine: %s, %d CPUs, %s; load before: %s\n", host, runtime.NumCPU(), runtime.Version(), load())
	res := map[string]*results{}
	for _, p := range peers {
		res[p.Name] = &results{}
	}
	for r := range c.rounds {
		for k := range peers {
			p := peers[(k+r)%len(peers)] // a different store first each round
			dir, err := os.MkdirTemp(c.dir, "raftcompare-")
			if err != nil {
				return err
			}
			if !c.noMicro {
				m, err := micro(c, p, filepath.Join(dir, "store"))
				if err != nil {
					os.RemoveAll(dir)
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				res[p.Name].micro = append(res[p.Name].micro, m)
			}
			if !c.noRaft {
				cl, err := cluster(c, p, filepath.Join(dir, "cluster"))
				if err != nil {
					os.RemoveAll(dir)
					return fmt.Errorf("%s cluster: %w", p.Name, err)
				}
				res[p.Name].cluster = append(res[p.Name].cluster, cl)
			}
			os.RemoveAll(dir)
			fmt.Fprintf(os.Stderr, "round %d: %s done (load %s)\n", r+1, p.Name, load())
		}
	}
	report(c, peers, res)
	fmt.Printf("load after: %s\n", load())
	return nil
}

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// median of xs (xs is sorted in place).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
