package server

import (
	"slices"
	"strings"
)

// command is one entry of the command table: Redis's arity (n: exactly
// n arguments with the name, -n: at least n), its COMMAND flags and key
// positions, and how it runs: on keys inside a tx (run), or on the
// connection (conn).
type command struct {
	name              string
	arity             int
	flags             []string
	first, last, step int
	write             bool // takes its keys' locks
	denyoom           bool // refused past maxmemory
	stale             bool // served by a replica whose master link is down
	noMulti           bool // refused inside MULTI
	all               bool // takes every lock (FLUSHALL)
	run               func(c *conn, t *tx, args [][]byte)
	conn              func(c *conn, args [][]byte)
	multiCtl          bool // runs inside MULTI instead of being queued
	noAuth            bool // allowed before AUTH
	attack            bool // POST, Host: (cross-protocol scripting)
	sub               map[string]*subcommand
}

type subcommand struct{ arity int }

func (cmd *command) keyed() bool { return cmd.run != nil }

// keys appends args' keys to ks.
func (cmd *command) keys(args [][]byte, ks [][]byte) [][]byte {
	if cmd.first == 0 {
		return ks
	}
	last := cmd.last
	if last < 0 {
		last = len(args) + last
	}
	for i := cmd.first; i <= last && i < len(args); i += cmd.step {
		ks = append(ks, args[i])
	}
	return ks
}

func (cmd *command) subcommand(args [][]byte) *subcommand {
	if len(args) < 2 {
		return nil
	}
	return cmd.sub[strings.ToLower(string(args[1]))]
}

// fullName is the name Redis's errors give: "client|setname" for a subcommand.
func (cmd *command) fullName(args [][]byte) string {
	if cmd.sub != nil && len(args) > 1 {
		if _, ok := cmd.sub[strings.ToLower(string(args[1]))]; ok {
			return cmd.name + "|" + strings.ToLower(string(args[1]))
		}
	}
	return cmd.name
}

var table = map[string]*command{}

func lookup(name []byte) *command {
	var buf [32]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return table[string(buf[:len(name)])]
}

// Flags of the command table.
var (
	fRead   = []string{"readonly", "fast"}
	fReadS  = []string{"readonly"}
	fWrite  = []string{"write", "denyoom"}
	fWriteF = []string{"write", "denyoom", "fast"}
	fDel    = []string{"write"}
	fConn   = []string{"fast", "loading", "stale"}
	fAdmin  = []string{"admin", "noscript", "loading", "stale"}
)

// keyCmd adds a command on keys.
func keyCmd(name string, arity int, flags []string, first, last, step int, run func(*conn, *tx, [][]byte)) *command {
	cmd := &command{name: name, arity: arity, flags: flags, first: first, last: last, step: step, run: run}
	cmd.write = flags[0] == "write"
	cmd.setFlags()
	table[name] = cmd
	return cmd
}

// connCmd adds a command on the connection or the server.
func connCmd(name string, arity int, flags []string, fn func(*conn, [][]byte)) *command {
	cmd := &command{name: name, arity: arity, flags: flags, conn: fn}
	cmd.setFlags()
	table[name] = cmd
	return cmd
}

func (cmd *command) setFlags() {
	cmd.denyoom = slices.Contains(cmd.flags, "denyoom")
	cmd.stale = slices.Contains(cmd.flags, "stale")
}

func subs(cmd *command, m map[string]int) {
	cmd.sub = map[string]*subcommand{}
	for k, a := range m {
		cmd.sub[k] = &subcommand{arity: a}
	}
}
