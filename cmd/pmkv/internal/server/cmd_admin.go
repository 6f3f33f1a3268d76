package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/match"
)

func init() {
	cm := connCmd("command", -1, []string{"loading", "stale"}, cmdCommand)
	subs(cm, map[string]int{"count": 2, "info": -2, "docs": -2, "list": -2, "getkeys": -3, "help": 2})
	cf := connCmd("config", -2, fAdmin, cmdConfig)
	subs(cf, map[string]int{"get": -3, "set": -4, "resetstat": 2, "rewrite": 2, "help": 2})
	fn := connCmd("function", -2, []string{"noscript"}, func(c *conn, a [][]byte) { c.w.ok() })
	subs(fn, map[string]int{"flush": -2})
	sc := connCmd("script", -2, []string{"noscript"}, func(c *conn, a [][]byte) { c.w.ok() })
	subs(sc, map[string]int{"flush": -2})
	dbg := connCmd("debug", -2, []string{"admin", "noscript", "loading", "stale"}, cmdDebug)
	subs(dbg, map[string]int{"set-active-expire": 3, "sleep": 3, "help": 2, "quicklist-packed-threshold": 3, "jmap": 2})
	connCmd("info", -1, []string{"loading", "stale"}, func(c *conn, a [][]byte) { c.w.verbatim(c.sv.info(a)) })
	connCmd("time", 1, []string{"loading", "stale", "fast"}, func(c *conn, _ [][]byte) {
		now := time.Now()
		c.w.array(2)
		c.w.bulkString(strconv.FormatInt(now.Unix(), 10))
		c.w.bulkString(strconv.Itoa(now.Nanosecond() / 1000))
	})
	connCmd("lastsave", 1, []string{"loading", "stale", "fast"}, func(c *conn, _ [][]byte) { c.w.int(c.sv.start.Unix()) })
	connCmd("save", 1, fAdmin, func(c *conn, _ [][]byte) { c.w.ok() })
	connCmd("bgsave", -1, fAdmin, func(c *conn, _ [][]byte) { c.w.simple("Background saving started") })
	connCmd("wait", 3, []string{"noscript"}, func(c *conn, _ [][]byte) { c.w.int(0) })
}

func cmdCommand(c *conn, a [][]byte) {
	if len(a) == 0 {
		c.w.array(len(table))
		for _, cmd := range table {
			c.commandInfo(cmd)
		}
		return
	}
	switch strings.ToLower(string(a[0])) {
	case "count":
		c.w.int(int64(len(table)))
	case "info":
		c.w.array(len(a) - 1)
		for _, n := range a[1:] {
			if cmd := lookup(n); cmd != nil {
				c.commandInfo(cmd)
			} else {
				c.w.null()
			}
		}
	case "docs":
		c.w.mapHeader(0)
	case "list":
		c.w.array(len(table))
		for name := range table {
			c.w.bulkString(name)
		}
	case "getkeys":
		cmd := lookup(a[1])
		if cmd == nil {
			c.w.err("ERR Invalid command specified")
			return
		}
		keys := cmd.keys(a[1:], nil)
		if len(keys) == 0 {
			c.w.err("ERR The command has no key arguments")
			return
		}
		c.w.array(len(keys))
		for _, k := range keys {
			c.w.bulk(k)
		}
	default:
		c.w.array(1)
		c.w.simple("COMMAND <subcommand>: COUNT INFO DOCS LIST GETKEYS")
	}
}

// commandInfo is COMMAND INFO's entry of cmd (Redis 7's ten fields).
func (c *conn) commandInfo(cmd *command) {
	c.w.array(10)
	c.w.bulkString(cmd.name)
	c.w.int(int64(cmd.arity))
	c.w.setHeader(len(cmd.flags))
	for _, f := range cmd.flags {
		c.w.simple(f)
	}
	c.w.int(int64(cmd.first))
	c.w.int(int64(cmd.last))
	c.w.int(int64(cmd.step))
	c.w.setHeader(0)
	c.w.setHeader(0)
	c.w.array(0)
	c.w.array(0)
}

// configs are the settings CONFIG GET answers (CONFIG SET accepts any
// name without effect, for the clients and tests that set them).
var configs = map[string]string{
	"appendonly": "yes", "appendfsync": "always", "save": "", "databases": "1",
	"proto-max-bulk-len": "536870912", "maxmemory": "0", "maxmemory-policy": "noeviction",
	"lua-time-limit": "5000", "busy-reply-threshold": "5000", "timeout": "0", "protected-mode": "yes",
	"port": "6380", "bind": "127.0.0.1", "maxclients": "10000", "hz": "10",
	"hash-max-ziplist-entries": "128", "zset-max-ziplist-entries": "128", "set-max-intset-entries": "512",
	"replica-serve-stale-data": "yes", "latency-tracking": "yes",
}

func cmdConfig(c *conn, a [][]byte) {
	switch strings.ToLower(string(a[0])) {
	case "get":
		var out []string
		for _, p := range a[1:] {
			for k, v := range c.sv.configs() {
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
		c.w.ok() // accepted without effect: pmkv's settings are its flags
	case "resetstat":
		c.sv.stats.reset()
		c.w.ok()
	default:
		c.w.ok()
	}
}

func (sv *Server) configs() map[string]string {
	m := make(map[string]string, len(configs))
	for k, v := range configs {
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

func cmdDebug(c *conn, a [][]byte) {
	switch strings.ToLower(string(a[0])) {
	case "sleep":
		f, err := strconv.ParseFloat(string(a[1]), 64)
		if err != nil || f < 0 || f > 60 {
			c.w.err("ERR invalid sleep time (0 to 60 seconds)")
			return
		}
		time.Sleep(time.Duration(f * float64(time.Second)))
		c.w.ok()
	default:
		c.w.ok()
	}
}
