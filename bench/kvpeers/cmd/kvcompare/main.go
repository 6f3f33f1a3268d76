// Command kvcompare runs YCSB load, A, B, C, D, E and F on kv and on Go's
// stores (bench/kvpeers) in one run, for each value size and client count,
// and prints ops/s per engine and workload with kv's ratio to the best
// peer, the space each uses (the allocated bytes of every file under its
// directory, after the load and after the run, and after the load over the
// key and value bytes loaded), and the reopen time after a SIGKILL. make
// bench-kv runs it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/braid-pm/braid/bench/kvpeers"
	"github.com/braid-pm/braid/internal/ycsb"
)

func main() {
	records := flag.Int64("records", 1_000_000, "records loaded per run")
	ops := flag.Int64("ops", 200_000, "operations per workload")
	values := flag.String("values", "100,1024", "value sizes")
	clients := flag.String("clients", "4,16", "client counts")
	engines := flag.String("engines", strings.Join(kvpeers.Engines, ","), "engines, kv first")
	workloads := flag.String("workloads", "a,b,c,d,e,f", "workloads after the load")
	dir := flag.String("dir", "/dev/shm", "where each engine's directory is made (and removed)")
	reopen := flag.Bool("reopen", true, "measure the reopen time after a SIGKILL")
	child := flag.String("child", "", "internal: load and wait to be killed (engine,dir,records,value)")
	flag.Parse()
	if *child != "" {
		os.Exit(childLoad(*child))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := compare(ctx, cfg{*records, *ops, ints(*values), ints(*clients), strings.Split(*engines, ","),
		strings.Split(*workloads, ","), *dir, *reopen}); err != nil {
		fmt.Fprintln(os.Stderr, "kvcompare:", err)
		os.Exit(1)
	}
}

type cfg struct {
	records, ops int64
	values       []int
	clients      []int
	engines      []string
	workloads    []string
	dir          string
	reopen       bool
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "kvcompare: %q: want positive integers\n", s)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

// kvOptions sizes kv's device for the run: the records, the updates and
// inserts of the workloads, and room for the cleaner.
func kvOptions(c cfg, value int) kvpeers.Options {
	per := int64(value + 64)
	need := (c.records + c.ops*int64(len(c.workloads))) * per * 2
	const seg = 64 << 20
	size := max((need+seg-1)/seg*seg, 16*seg)
	return kvpeers.Options{KVDeviceSize: size, KVExpectedKeys: int(c.records)}
}

type cell struct {
	opsPerSec float64
	p99       float64
}

func compare(ctx context.Context, c cfg) error {
	var ws []ycsb.Workload
	for _, n := range c.workloads {
		w, err := ycsb.Lookup(n)
		if err != nil {
			return err
		}
		ws = append(ws, w)
	}
	load, _ := exec.Command("uptime").Output()
	fmt.Printf("kvcompare: %d records, %d ops per workload, values %v, clients %v; %s", c.records, c.ops, c.values, c.clients, load)
	for _, value := range c.values {
		for _, clients := range c.clients {
			res := map[string]map[string]cell{} // workload -> engine -> cell
			disk := map[string]space{}
			infos := map[string]ycsb.Info{}
			for _, e := range c.engines {
				dir, err := os.MkdirTemp(c.dir, "kvcompare-"+e+"-")
				if err != nil {
					return err
				}
				err = runEngine(ctx, c, e, dir, value, clients, ws, res, disk, infos)
				os.RemoveAll(dir)
				if err != nil {
					return fmt.Errorf("%s, %d B, %d clients: %w", e, value, clients, err)
				}
			}
			printTable(c, value, clients, ws, res, disk, infos)
		}
		if c.reopen {
			if err := reopenTimes(c, value); err != nil {
				return err
			}
		}
	}
	return nil
}

func runEngine(ctx context.Context, c cfg, e, dir string, value, clients int, ws []ycsb.Workload,
	res map[string]map[string]cell, disk map[string]space, infos map[string]ycsb.Info) error {
	db, info, err := kvpeers.Open(e, dir, kvOptions(c, value))
	if err != nil {
		return err
	}
	infos[e] = info
	b, err := ycsb.New(db, ycsb.Config{Records: c.records, ValueSize: value, Clients: clients, Seed: 1})
	if err != nil {
		db.Close()
		return err
	}
	put := func(r *ycsb.Result) {
		if res[r.Workload] == nil {
			res[r.Workload] = map[string]cell{}
		}
		var p99 float64
		for _, o := range r.Ops {
			p99 = max(p99, o.P99Us)
		}
		res[r.Workload][e] = cell{r.Throughput, p99}
	}
	r, err := b.Load(ctx)
	if err != nil {
		db.Close()
		return err
	}
	put(r)
	sp := space{loaded: loadedBytes(c.records, value), afterLoad: kvpeers.DiskBytes(dir)}
	for _, w := range ws {
		r, err := b.Run(ctx, w, ycsb.Run{Operations: c.ops})
		if err != nil {
			db.Close()
			return fmt.Errorf("workload %s: %w", w.Name, err)
		}
		put(r)
	}
	if err := db.Close(); err != nil {
		return err
	}
	sp.afterRun = kvpeers.DiskBytes(dir)
	disk[e] = sp
	fmt.Fprintf(os.Stderr, "kvcompare: %s done (%d B, %d clients)\n", e, value, clients)
	return nil
}

// space is an engine's allocated bytes (st_blocks*512 summed over every
// file under its directory: kv's device files and checkpoints) after the
// load, still open, and after the run, closed; loaded is the key and value
// bytes the load stored.
type space struct {
	loaded, afterLoad, afterRun int64
}

// loadedBytes is the key and value bytes of the load's records.
func loadedBytes(records int64, value int) int64 {
	var kb []byte
	n := records * int64(value)
	for i := range records {
		kb = ycsb.KeyFormat{}.Append(kb[:0], i)
		n += int64(len(kb))
	}
	return n
}

func printTable(c cfg, value, clients int, ws []ycsb.Workload, res map[string]map[string]cell, disk map[string]space, infos map[string]ycsb.Info) {
	fmt.Printf("\n## %d-byte values, %d clients (ops/s; p99 µs in brackets)\n\n", value, clients)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\tkv / best peer\n", strings.Join(c.engines, "\t"))
	rows := []string{ycsb.LoadPhase}
	for _, w := range ws {
		rows = append(rows, w.Name)
	}
	for _, name := range rows {
		fmt.Fprintf(tw, "%s", name)
		best := 0.0
		for _, e := range c.engines {
			cl := res[name][e]
			fmt.Fprintf(tw, "\t%.0f (%.0f)", cl.opsPerSec, cl.p99)
			if e != "kv" {
				best = max(best, cl.opsPerSec)
			}
		}
		ratio := "-"
		if best > 0 && res[name]["kv"].opsPerSec > 0 {
			ratio = fmt.Sprintf("%.2fx", res[name]["kv"].opsPerSec/best)
		}
		fmt.Fprintf(tw, "\t%s\n", ratio)
	}
	row := func(name string, f func(sp space) string) {
		fmt.Fprintf(tw, "%s", name)
		for _, e := range c.engines {
			fmt.Fprintf(tw, "\t%s", f(disk[e]))
		}
		fmt.Fprintln(tw, "\t")
	}
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	row("disk after load", func(sp space) string { return mib(sp.afterLoad) })
	row("  / key+value bytes", func(sp space) string { return fmt.Sprintf("%.2fx", float64(sp.afterLoad)/float64(sp.loaded)) })
	row("disk after run", func(sp space) string { return mib(sp.afterRun) })
	tw.Flush()
	fmt.Printf("  disk: allocated bytes (st_blocks*512) of every file under the engine's directory (kv: device files and checkpoints),\n"+
		"  after the load (open) and after the workloads (closed); the load stored %s of keys and values\n", mib(disk[c.engines[0]].loaded))
	for _, e := range c.engines {
		fmt.Printf("  %s: %s on %s\n", e, infos[e].Durability, filepath.Dir(infos[e].Device))
	}
}

// reopenTimes loads each engine in a child process, SIGKILLs it, and times
// the reopen (Open and the read of record 0, verified).
func reopenTimes(c cfg, value int) error {
	fmt.Printf("\nreopen after SIGKILL, %d records of %d B (Open + first Get):\n", c.records, value)
	for _, e := range c.engines {
		dir, err := os.MkdirTemp(c.dir, "kvcompare-kill-"+e+"-")
		if err != nil {
			return err
		}
		d, err := killAndReopen(c, e, dir, value)
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("%s reopen: %w", e, err)
		}
		fmt.Printf("  %-10s %8.1f ms\n", e, float64(d.Microseconds())/1000)
	}
	return nil
}

func killAndReopen(c cfg, e, dir string, value int) (time.Duration, error) {
	arg := fmt.Sprintf("%s,%s,%d,%d", e, dir, c.records, value)
	cmd := exec.Command(os.Args[0], "-child", arg, "-values", strconv.Itoa(value), "-records", strconv.FormatInt(c.records, 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, fmt.Errorf("child: %q %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	start := time.Now()
	db, _, err := kvpeers.Open(e, dir, kvOptions(c, value))
	if err != nil {
		return 0, err
	}
	var kb []byte
	v, err := db.Get(ycsb.KeyFormat{}.Append(kb, 0))
	d := time.Since(start)
	if err == nil && string(v) != string(ycsb.AppendValue(nil, 0, 1, value)) {
		err = fmt.Errorf("record 0 is not the value loaded")
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return d, err
}

// childLoad loads the records and waits to be killed.
func childLoad(arg string) int {
	f := strings.Split(arg, ",")
	if len(f) != 4 {
		return 2
	}
	records, _ := strconv.ParseInt(f[2], 10, 64)
	value, _ := strconv.Atoi(f[3])
	c := cfg{records: records, ops: 0, workloads: nil}
	db, _, err := kvpeers.Open(f[0], f[1], kvOptions(c, value))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, err := ycsb.New(db, ycsb.Config{Records: records, ValueSize: value, Clients: 4, Seed: 1})
	if err == nil {
		_, err = b.Load(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	select {}
}
