package server

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// infoSections in INFO's order; default are those of INFO without
// arguments, as Redis 7.0 has them.
var infoSections = []struct {
	name    string
	deflt   bool
	content func(sv *Server, b *strings.Builder)
}{
	{"server", true, (*Server).infoServer},
	{"clients", true, (*Server).infoClients},
	{"memory", true, (*Server).infoMemory},
	{"persistence", true, (*Server).infoPersistence},
	{"stats", true, (*Server).infoStats},
	{"replication", true, (*Server).infoReplication},
	{"cpu", true, (*Server).infoCPU},
	{"commandstats", false, (*Server).infoCommandStats},
	{"errorstats", true, (*Server).infoErrorStats},
	{"keyspace", true, (*Server).infoKeyspace},
	{"numa", false, (*Server).infoNUMA},
}

func (sv *Server) info(args [][]byte) string {
	want := map[string]bool{}
	all, deflt := false, len(args) == 0
	for _, a := range args {
		s := strings.ToLower(string(a))
		switch s {
		case "all", "everything":
			all = true
		case "default":
			deflt = true
		default:
			want[s] = true
		}
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if all || want[sec.name] || (deflt && sec.deflt) {
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			fmt.Fprintf(&b, "# %s%s\r\n", strings.ToUpper(sec.name[:1]), sec.name[1:])
			sec.content(sv, &b)
		}
	}
	return b.String()
}

func field(b *strings.Builder, name string, v any) { fmt.Fprintf(b, "%s:%v\r\n", name, v) }

// infoNUMA is the store's NUMA placement (kv.Store.NUMA): the mode, then a
// line per node that holds a device.
func (sv *Server) infoNUMA(b *strings.Builder) {
	r := sv.b.Stats().NUMA
	field(b, "numa_mode", strings.ReplaceAll(r.Mode, " ", "_"))
	for _, n := range r.Nodes {
		if len(n.Devices) == 0 {
			continue
		}
		fmt.Fprintf(b, "node%d:cpus=%d,devices=%d,workers=%d,shards=%d,shards_bound=%d\r\n",
			n.ID, len(n.CPUs), len(n.Devices), len(n.Workers), n.Shards, n.ShardsBound)
	}
}

func (sv *Server) infoServer(b *strings.Builder) {
	up := time.Since(sv.start)
	field(b, "redis_version", redisVersion)
	field(b, "redis_mode", "standalone")
	field(b, "pmkv_store", "braid kv")
	field(b, "os", runtime.GOOS+" "+runtime.GOARCH)
	field(b, "arch_bits", 32<<(^uint(0)>>63))
	field(b, "go_version", runtime.Version())
	field(b, "process_id", os.Getpid())
	field(b, "tcp_port", sv.cfg.Port)
	field(b, "uptime_in_seconds", int64(up.Seconds()))
	field(b, "uptime_in_days", int64(up.Hours()/24))
	field(b, "executable", executable())
}

func executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

func (sv *Server) infoClients(b *strings.Builder) {
	sv.mu.Lock()
	n := len(sv.conns)
	sv.mu.Unlock()
	field(b, "connected_clients", n)
	field(b, "maxclients", sv.cfg.MaxClients)
	field(b, "blocked_clients", 0)
}

func (sv *Server) infoMemory(b *strings.Builder) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	field(b, "used_memory", ms.HeapAlloc)
	field(b, "used_memory_human", human(int64(ms.HeapAlloc)))
	field(b, "used_memory_rss", rss())
	field(b, "used_memory_peak", ms.HeapSys)
	field(b, "total_system_memory", 0)
	field(b, "maxmemory", sv.set.maxMemory.Load())
	field(b, "maxmemory_policy", "noeviction")
	field(b, "mem_allocator", "go")
	st := sv.b.Stats()
	field(b, "kv_dram_per_key", fmt.Sprintf("%.1f", st.DRAMPerKey))
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func (sv *Server) infoPersistence(b *strings.Builder) {
	st := sv.b.Stats()
	field(b, "loading", 0)
	field(b, "rdb_changes_since_last_save", 0)
	field(b, "aof_enabled", 1)
	field(b, "pmkv_durability", "every write acknowledged once durable (one fence per batch)")
	field(b, "kv_checkpoints", st.Checkpoints)
	field(b, "kv_fences", st.Fences)
	field(b, "kv_appended_bytes", st.AppendedBytes)
	field(b, "kv_media_bytes", st.MediaBytes)
}

func (sv *Server) infoStats(b *strings.Builder) {
	st := sv.b.Stats()
	s := &sv.stats
	field(b, "total_connections_received", s.connections.Load())
	field(b, "total_commands_processed", s.commands.Load())
	field(b, "instantaneous_ops_per_sec", sv.opsPerSec())
	field(b, "rejected_connections", s.rejected.Load())
	field(b, "expired_keys", st.Expired)
	field(b, "evicted_keys", 0)
	field(b, "keyspace_hits", s.hits.Load())
	field(b, "keyspace_misses", s.misses.Load())
	field(b, "total_error_replies", s.errors.Load())
	field(b, "security_attacks", s.attacks.Load())
	field(b, "kv_puts", st.Puts)
	field(b, "kv_gets", st.Gets)
	field(b, "kv_deletes", st.Deletes)
	field(b, "kv_batches", st.Batches)
	field(b, "kv_gc_passes", st.GCPasses)
	field(b, "kv_gc_moved", st.GCMoved)
	field(b, "kv_segments_freed", st.SegmentsFreed)
	field(b, "kv_live_bytes", st.LiveBytes)
	field(b, "kv_allocated_bytes", st.AllocatedBytes)
	if amp, ok := spaceAmp(st); ok {
		field(b, "kv_space_amplification", fmt.Sprintf("%.2f", amp))
	}
}

// Replicated is a Backend with INFO's replication section's fields.
type Replicated interface{ Replication() [][2]string }

func (sv *Server) infoReplication(b *strings.Builder) {
	if r, ok := sv.cfg.Backend.(Replicated); ok {
		for _, f := range r.Replication() {
			field(b, f[0], f[1])
		}
		return
	}
	if m := sv.set.replicaOf.Load(); m != nil {
		field(b, "role", "slave")
		field(b, "master_host", m[0])
		field(b, "master_port", m[1])
		field(b, "master_link_status", "down")
	} else {
		field(b, "role", "master")
	}
	field(b, "connected_slaves", sv.repl.n.Load())
	field(b, "master_replid", sv.replIDNow())
	field(b, "master_repl_offset", 0)
}

func (sv *Server) infoCPU(b *strings.Builder) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	field(b, "used_cpu_sys", fmt.Sprintf("%.6f", tv(ru.Stime)))
	field(b, "used_cpu_user", fmt.Sprintf("%.6f", tv(ru.Utime)))
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	field(b, "used_cpu_sys_children", fmt.Sprintf("%.6f", tv(ru.Stime)))
	field(b, "used_cpu_user_children", fmt.Sprintf("%.6f", tv(ru.Utime)))
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func (sv *Server) infoCommandStats(b *strings.Builder) {
	names := make([]string, 0, len(sv.stats.cmds))
	for n := range sv.stats.cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := sv.stats.stat(n)
		calls, usec := st.calls.Load(), st.usec.Load()
		if calls == 0 {
			continue
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=0,failed_calls=0\r\n",
			n, calls, usec, float64(usec)/float64(calls))
	}
}

func (sv *Server) infoErrorStats(b *strings.Builder) {
	if n := sv.stats.errors.Load(); n > 0 {
		fmt.Fprintf(b, "errorstat_ERR:count=%d\r\n", n)
	}
}

func (sv *Server) infoKeyspace(b *strings.Builder) {
	st := sv.b.Stats()
	if st.Keys > 0 {
		fmt.Fprintf(b, "db0:keys=%d,expires=%d,avg_ttl=0\r\n", st.Keys, st.Expires)
	}
}

// rss is the resident set size (Linux's /proc/self/statm; 0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	var pages int64
	fmt.Sscan(f[1], &pages)
	return pages * int64(os.Getpagesize())
}

// spaceAmp is the media bytes held per live byte, once the live data
// fills more than a segment: before that the segments kv allocates
// whole (64 MiB by default) make any ratio meaningless.
func spaceAmp(st Stats) (float64, bool) {
	segs := 0
	for _, d := range st.Devices {
		segs += d.Data + d.Metadata
	}
	if st.LiveBytes <= 0 || segs == 0 || st.LiveBytes < st.AllocatedBytes/int64(segs) {
		return 0, false
	}
	return float64(st.AllocatedBytes) / float64(st.LiveBytes), true
}

// opsPerSec is the commands per second over the last second or so,
// from the samples the server takes every 100 ms.
func (sv *Server) opsPerSec() int64 {
	sv.samples.mu.Lock()
	defer sv.samples.mu.Unlock()
	s := &sv.samples
	if s.n < 2 {
		return 0
	}
	newest := s.ring[(s.n-1)%len(s.ring)]
	oldest := s.ring[max(s.n-len(s.ring), 0)%len(s.ring)]
	dt := newest.t.Sub(oldest.t).Seconds()
	if dt <= 0 {
		return 0
	}
	return int64(float64(newest.cmds-oldest.cmds) / dt)
}

type sample struct {
	t    time.Time
	cmds int64
}

type samples struct {
	mu   sync.Mutex
	ring [11]sample
	n    int
}

func (sv *Server) sampleLoop(stop <-chan struct{}) {
	tk := time.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tk.C:
			sv.samples.mu.Lock()
			sv.samples.ring[sv.samples.n%len(sv.samples.ring)] = sample{now, sv.stats.commands.Load()}
			sv.samples.n++
			sv.samples.mu.Unlock()
		}
	}
}
