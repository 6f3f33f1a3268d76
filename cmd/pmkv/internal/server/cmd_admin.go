package server

import (
	"strconv"
	"strings"
	"time"
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
	connCmd("info", -1, []string{"loading", "stale"}, func(c *conn, a [][]byte) { c.w.verbatim(c.sv.info(a)) })
	connCmd("time", 1, []string{"loading", "stale", "fast"}, func(c *conn, _ [][]byte) {
		now := time.Now()
		c.w.array(2)
		c.w.bulkString(strconv.FormatInt(now.Unix(), 10))
		c.w.bulkString(strconv.Itoa(now.Nanosecond() / 1000))
	})
	connCmd("lastsave", 1, []string{"loading", "stale", "fast"}, func(c *conn, _ [][]byte) { c.w.int(c.sv.start.Unix()) })
	connCmd("save", 1, fAdmin, func(c *conn, _ [][]byte) { c.w.ok() }).noMulti = true
	connCmd("shutdown", -1, fAdmin, func(c *conn, _ [][]byte) {
		c.w.err("ERR SHUTDOWN is not served by pmkv: stop the server with SIGTERM (it drains, checkpoints and exits)")
	}).noMulti = true
	// PUBLISH reaches no one (pmkv has no SUBSCRIBE) and is propagated.
	keyCmd("publish", 3, []string{"pubsub", "loading", "stale", "fast"}, 0, 0, 0, func(c *conn, t *tx, a [][]byte) {
		t.propagate([]byte("publish"), a[0], a[1])
		c.w.int(0)
	})
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
