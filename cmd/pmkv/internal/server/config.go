package server

import (
	"fmt"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidwall/match"
)

// configs are the settings CONFIG GET answers. CONFIG SET changes the
// ones in settable (checked as Redis checks them); the others, and names
// pmkv does not know, are accepted without effect, for the clients and
// tests that set them: pmkv's settings are its flags.
var configs = map[string]string{
	"appendonly": "yes", "appendfsync": "always", "save": "", "databases": "1",
	"proto-max-bulk-len": "536870912", "maxmemory": "0", "maxmemory-policy": "noeviction",
	"lua-time-limit": "5000", "busy-reply-threshold": "5000", "timeout": "0", "protected-mode": "yes",
	"port": "6380", "bind": "127.0.0.1", "maxclients": "10000", "hz": "10",
	"hash-max-ziplist-entries": "128", "zset-max-ziplist-entries": "128", "set-max-intset-entries": "512",
	"replica-serve-stale-data": "yes", "latency-tracking": "yes", "min-replicas-to-write": "0",
	"repl-ping-replica-period": "10", "replica-read-only": "yes",
}

// The kinds of value a setting takes.
const (
	kindInt = iota
	kindMemory
	kindBool
)

// settable are the settings CONFIG SET checks: maxmemory and
// min-replicas-to-write take effect (OOM, NOREPLICAS), the others are
// checked and kept for CONFIG GET.
var settable = map[string]int{
	"maxmemory": kindMemory, "min-replicas-to-write": kindInt, "lua-time-limit": kindInt,
	"busy-reply-threshold": kindInt, "repl-ping-replica-period": kindInt, "hz": kindInt, "timeout": kindInt,
	"hash-max-ziplist-entries": kindInt, "zset-max-ziplist-entries": kindInt, "set-max-intset-entries": kindInt,
	"appendonly": kindBool, "replica-read-only": kindBool, "replica-serve-stale-data": kindBool,
	"latency-tracking": kindBool,
}

// settings are a server's CONFIG SET values.
type settings struct {
	mu          sync.Mutex
	vals        map[string]string
	maxMemory   atomic.Int64 // bytes; 0: no limit
	minReplicas atomic.Int64
	replicaOf   atomic.Pointer[[2]string] // REPLICAOF's host and port; nil: a master
}

func (sv *Server) configs() map[string]string {
	sv.set.mu.Lock()
	defer sv.set.mu.Unlock()
	m := make(map[string]string, len(configs))
	for k, v := range configs {
		m[k] = v
	}
	for k, v := range sv.set.vals {
		m[k] = v
	}
	m["proto-max-bulk-len"] = strconv.FormatInt(sv.cfg.MaxBulk, 10)
	m["maxclients"] = strconv.Itoa(sv.cfg.MaxClients)
	m["port"] = strconv.Itoa(sv.cfg.Port)
	if len(sv.cfg.Users) > 0 {
		m["requirepass"] = "********"
	}
	return m
}

func cmdConfig(c *conn, a [][]byte) {
	switch strings.ToLower(string(a[0])) {
	case "get":
		var out []string
		cf := c.sv.configs()
		for _, p := range a[1:] {
			for k, v := range cf {
				if match.Match(k, strings.ToLower(string(p))) {
					out = append(out, k, v)
				}
			}
		}
		c.w.mapHeader(len(out) / 2)
		for _, s := range out {
			c.w.bulkString(s)
		}
	case "set":
		if len(a)%2 != 1 {
			c.w.err("ERR wrong number of arguments for 'config|set' command")
			return
		}
		if msg := c.sv.configSet(a[1:]); msg != "" {
			c.w.err(msg)
			return
		}
		c.w.ok()
	case "resetstat":
		c.sv.stats.reset()
		c.w.ok()
	default:
		c.w.ok()
	}
}

// configSet applies name/value pairs, all or none: the error is Redis's.
func (sv *Server) configSet(a [][]byte) string {
	parsed := map[string]int64{}
	for i := 0; i < len(a); i += 2 {
		name, v := strings.ToLower(string(a[i])), string(a[i+1])
		kind, ok := settable[name]
		if !ok {
			continue
		}
		var n int64
		var err error
		switch kind {
		case kindInt:
			n, err = strconv.ParseInt(v, 10, 64)
			if err == nil && n < 0 {
				return fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - argument must be between 0 and %d inclusive", name, int64(1)<<62)
			}
		case kindMemory:
			n, err = parseMemory(v)
		case kindBool:
			if v = strings.ToLower(v); v != "yes" && v != "no" {
				return fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - argument must be 'yes' or 'no'", name)
			}
		}
		if err != nil {
			return fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - argument couldn't be parsed into an integer", name)
		}
		parsed[name] = n
	}
	sv.set.mu.Lock()
	defer sv.set.mu.Unlock()
	if sv.set.vals == nil {
		sv.set.vals = map[string]string{}
	}
	for i := 0; i < len(a); i += 2 {
		name := strings.ToLower(string(a[i]))
		if _, ok := settable[name]; ok {
			sv.set.vals[name] = strings.ToLower(string(a[i+1]))
		}
	}
	for name, n := range parsed {
		switch name {
		case "maxmemory":
			sv.set.maxMemory.Store(n)
			sv.set.vals[name] = strconv.FormatInt(n, 10)
		case "min-replicas-to-write":
			sv.set.minReplicas.Store(n)
		}
	}
	return ""
}

// parseMemory reads a memory size as Redis does: bytes, or a number
// with k, kb, m, mb, g or gb (k = 1000, kb = 1024).
func parseMemory(s string) (int64, error) {
	units := []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}}
	l := strings.ToLower(s)
	for _, u := range units {
		if strings.HasSuffix(l, u.suffix) {
			n, err := strconv.ParseInt(l[:len(l)-len(u.suffix)], 10, 64)
			if err != nil || n < 0 || n > (1<<62)/u.mul {
				return 0, fmt.Errorf("memory size %q", s)
			}
			return n * u.mul, nil
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("memory size %q", s)
	}
	return n, nil
}

const (
	errOOM        = "OOM command not allowed when used memory > 'maxmemory'."
	errNoReplicas = "NOREPLICAS Not enough good replicas to write."
	errReadOnly   = "READONLY You can't write against a read only replica."
	errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// usedMemory is INFO's used_memory: the bytes of live heap objects.
func usedMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// stateRefusal is the error for running cmd now, from the server's state
// (maxmemory, min-replicas-to-write), or "".
func (sv *Server) stateRefusal(cmd *command) string {
	if cmd.denyoom {
		if max := sv.set.maxMemory.Load(); max > 0 && usedMemory() > max {
			return errOOM
		}
	}
	if cmd.write {
		if n := sv.set.minReplicas.Load(); n > 0 && int64(sv.repl.n.Load()) < n {
			return errNoReplicas
		}
	}
	if sv.set.replicaOf.Load() != nil {
		switch {
		case cmd.write:
			return errReadOnly
		case !cmd.stale && sv.configs()["replica-serve-stale-data"] == "no":
			return errMasterDown
		}
	}
	return ""
}

func init() {
	for _, name := range []string{"replicaof", "slaveof"} {
		connCmd(name, 3, []string{"admin", "noscript", "stale"}, cmdReplicaof)
	}
}

// cmdReplicaof: REPLICAOF host port makes the server a replica whose
// link to its master is never up (pmkv does not replicate from a Redis):
// writes are refused (READONLY), reads too with replica-serve-stale-data
// no (MASTERDOWN), and nothing is propagated; REPLICAOF NO ONE ends it.
func cmdReplicaof(c *conn, a [][]byte) {
	if eq(a[0], "no") && eq(a[1], "one") {
		c.sv.set.replicaOf.Store(nil)
		c.w.ok()
		return
	}
	if p, ok := parseInt(a[1]); !ok || p < 0 || p > 65535 {
		c.w.err("ERR Invalid master port")
		return
	}
	c.sv.set.replicaOf.Store(&[2]string{string(a[0]), string(a[1])})
	c.w.simple("OK Master link is never up: pmkv serve does not replicate from a Redis")
}
