package main

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/match"
	"github.com/tidwall/redcon"

	"github.com/braid-pm/braid/kv"
)

// dispatch answers cmd in Redis's words; it reports whether the
// connection is to close (QUIT).
func (sv *server) dispatch(c redcon.Conn, cl *client, cmd redcon.Command) (quit bool) {
	name := strings.ToLower(string(cmd.Args[0]))
	args := cmd.Args[1:]
	if !cl.authed && name != "auth" && name != "quit" && name != "hello" {
		c.WriteError("NOAUTH Authentication required.")
		return false
	}
	arity := func(lo, hi int) bool {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			c.WriteError("ERR wrong number of arguments for '" + name + "' command")
			return false
		}
		return true
	}
	switch name {
	case "ping":
		if arity(0, 1) {
			if len(args) == 1 {
				c.WriteBulk(args[0])
			} else {
				c.WriteString("PONG")
			}
		}
	case "echo":
		if arity(1, 1) {
			c.WriteBulk(args[0])
		}
	case "quit":
		c.WriteString("OK")
		c.Close()
		return true
	case "auth":
		if arity(1, 2) {
			sv.auth(c, cl, args[len(args)-1])
		}
	case "hello":
		c.WriteError("ERR unknown command 'hello': pmkv serve speaks RESP2")
	case "select":
		if arity(1, 1) {
			if string(args[0]) == "0" {
				c.WriteString("OK")
			} else {
				c.WriteError("ERR DB index is out of range")
			}
		}
	case "client":
		sv.clientCmd(c, cl, args)
	case "command":
		sv.command(c, args)
	case "get":
		if arity(1, 1) {
			sv.get(c, args[0])
		}
	case "set":
		if len(args) > 2 {
			c.WriteError("ERR syntax error: pmkv serve takes SET key value without options")
		} else if arity(2, 2) {
			sv.sets(c, []redcon.Command{cmd})
		}
	case "del":
		if arity(1, -1) {
			sv.del(c, args)
		}
	case "exists":
		if arity(1, -1) {
			sv.exists(c, args)
		}
	case "mget":
		if arity(1, -1) {
			sv.mget(c, args)
		}
	case "mset":
		if len(args) == 0 || len(args)%2 != 0 {
			c.WriteError("ERR wrong number of arguments for 'mset' command")
		} else {
			sv.mset(c, args)
		}
	case "scan":
		if arity(1, 5) {
			sv.scan(c, args)
		}
	case "dbsize":
		if arity(0, 0) {
			c.WriteInt64(sv.s.Stats().Keys)
		}
	case "info":
		if arity(0, 1) {
			sec := ""
			if len(args) == 1 {
				sec = strings.ToLower(string(args[0]))
			}
			c.WriteBulkString(sv.info(sec))
		}
	default:
		c.WriteError(fmt.Sprintf("ERR unknown command '%.64s', with args beginning with: %s", cmd.Args[0], argsPreview(args)))
	}
	return false
}

func argsPreview(args [][]byte) string {
	var b strings.Builder
	for i, a := range args {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "'%.32s' ", a)
	}
	return b.String()
}

func (sv *server) auth(c redcon.Conn, cl *client, pass []byte) {
	switch {
	case sv.f.pass == "":
		c.WriteError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	case subtle.ConstantTimeCompare(pass, []byte(sv.f.pass)) == 1:
		cl.authed = true
		c.WriteString("OK")
	default:
		c.WriteError("WRONGPASS invalid username-password pair or user is disabled.")
	}
}

func (sv *server) clientCmd(c redcon.Conn, cl *client, args [][]byte) {
	if len(args) == 0 {
		c.WriteError("ERR wrong number of arguments for 'client' command")
		return
	}
	switch strings.ToLower(string(args[0])) {
	case "setname":
		if len(args) != 2 || strings.ContainsAny(string(args[1]), " \n") {
			c.WriteError("ERR Client names cannot contain spaces, newlines or special characters.")
			return
		}
		cl.name = string(args[1])
		c.WriteString("OK")
	case "getname":
		if cl.name == "" {
			c.WriteNull()
		} else {
			c.WriteBulkString(cl.name)
		}
	case "setinfo":
		c.WriteString("OK")
	case "id":
		c.WriteInt64(sv.served.Load())
	default:
		c.WriteError(fmt.Sprintf("ERR unknown subcommand '%.32s'. Try CLIENT SETNAME, GETNAME, SETINFO, ID.", args[0]))
	}
}

// commandTable is what COMMAND reports: name, arity, flags, first key,
// last key, step (enough for clients that probe it).
var commandTable = []struct {
	name              string
	arity             int
	flags             []string
	first, last, step int
}{
	{"get", 2, []string{"readonly", "fast"}, 1, 1, 1},
	{"set", 3, []string{"write"}, 1, 1, 1},
	{"del", -2, []string{"write"}, 1, -1, 1},
	{"exists", -2, []string{"readonly", "fast"}, 1, -1, 1},
	{"mget", -2, []string{"readonly", "fast"}, 1, -1, 1},
	{"mset", -3, []string{"write"}, 1, -1, 2},
	{"scan", -2, []string{"readonly"}, 0, 0, 0},
	{"dbsize", 1, []string{"readonly", "fast"}, 0, 0, 0},
	{"ping", -1, []string{"fast"}, 0, 0, 0},
	{"echo", 2, []string{"fast"}, 0, 0, 0},
	{"info", -1, []string{"loading", "stale"}, 0, 0, 0},
	{"command", -1, []string{"loading", "stale"}, 0, 0, 0},
	{"client", -2, []string{"admin", "noscript"}, 0, 0, 0},
	{"select", 2, []string{"loading", "fast"}, 0, 0, 0},
	{"auth", -2, []string{"noscript", "loading", "stale", "fast"}, 0, 0, 0},
	{"quit", 1, []string{"fast"}, 0, 0, 0},
}

func (sv *server) command(c redcon.Conn, args [][]byte) {
	sub := ""
	if len(args) > 0 {
		sub = strings.ToLower(string(args[0]))
	}
	switch sub {
	case "count":
		c.WriteInt(len(commandTable))
	case "", "info":
		rows := commandTable
		if sub == "info" {
			rows = rows[:0:0]
			for _, a := range args[1:] {
				for _, r := range commandTable {
					if r.name == strings.ToLower(string(a)) {
						rows = append(rows, r)
					}
				}
			}
		}
		c.WriteArray(len(rows))
		for _, r := range rows {
			c.WriteArray(6)
			c.WriteBulkString(r.name)
			c.WriteInt(r.arity)
			c.WriteArray(len(r.flags))
			for _, f := range r.flags {
				c.WriteString(f)
			}
			c.WriteInt(r.first)
			c.WriteInt(r.last)
			c.WriteInt(r.step)
		}
	case "docs":
		c.WriteArray(0)
	default:
		c.WriteError(fmt.Sprintf("ERR unknown subcommand '%.32s'. Try COMMAND, COMMAND COUNT, COMMAND INFO, COMMAND DOCS.", args[0]))
	}
}

// replyErr answers a store error; a key or value over the limits is the
// client's error, anything else the server's.
func replyErr(c redcon.Conn, err error) {
	switch {
	case errors.Is(err, kv.ErrTooLarge), errors.Is(err, kv.ErrInvalid):
		c.WriteError("ERR " + strings.TrimPrefix(err.Error(), "kv: "))
	default:
		c.WriteError("ERR store: " + strings.TrimPrefix(err.Error(), "kv: "))
	}
}

func (sv *server) get(c redcon.Conn, key []byte) {
	v, err := sv.s.Get(key)
	switch {
	case errors.Is(err, kv.ErrNotFound):
		c.WriteNull()
	case err != nil:
		replyErr(c, err)
	default:
		c.WriteBulk(v)
	}
}

// sets answers a run of SETs: all queued at once, each answered in order
// once durable.
func (sv *server) sets(c redcon.Conn, cmds []redcon.Command) {
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Add(1)
		if err := sv.s.PutAsync(cmd.Args[1], cmd.Args[2], func(_ kv.Token, err error) { errs[i] = err; wg.Done() }); err != nil {
			errs[i] = err
			wg.Done()
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			replyErr(c, err)
		} else {
			c.WriteString("OK")
		}
	}
}

func (sv *server) del(c redcon.Conn, keys [][]byte) {
	n := 0
	for _, k := range keys {
		_, err := sv.s.Get(k)
		if errors.Is(err, kv.ErrNotFound) {
			continue
		}
		if err == nil {
			err = sv.s.Delete(k)
		}
		if err != nil {
			replyErr(c, err)
			return
		}
		n++
	}
	c.WriteInt(n)
}

func (sv *server) exists(c redcon.Conn, keys [][]byte) {
	n := 0
	for _, k := range keys {
		_, err := sv.s.Get(k)
		if err == nil {
			n++
		} else if !errors.Is(err, kv.ErrNotFound) {
			replyErr(c, err)
			return
		}
	}
	c.WriteInt(n)
}

func (sv *server) mget(c redcon.Conn, keys [][]byte) {
	vals := make([][]byte, len(keys))
	found := make([]bool, len(keys))
	for i, k := range keys {
		v, err := sv.s.Get(k)
		switch {
		case err == nil:
			vals[i], found[i] = v, true
		case !errors.Is(err, kv.ErrNotFound):
			replyErr(c, err)
			return
		}
	}
	c.WriteArray(len(keys))
	for i := range keys {
		if found[i] {
			c.WriteBulk(vals[i])
		} else {
			c.WriteNull()
		}
	}
}

func (sv *server) mset(c redcon.Conn, args [][]byte) {
	ops := make([]op, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		ops = append(ops, op{key: args[i], value: args[i+1]})
	}
	if err := sv.s.apply(ops); err != nil {
		replyErr(c, err)
		return
	}
	c.WriteString("OK")
}

func (sv *server) info(section string) string {
	var b strings.Builder
	want := func(s string) bool {
		return section == "" || section == "all" || section == "everything" || section == s
	}
	st := sv.s.Stats()
	if want("server") {
		fmt.Fprintf(&b, "# Server\r\nredis_version:7.0.0-pmkv\r\npmkv_store:braid kv\r\ngo_version:%s\r\nprocess_id:%d\r\nuptime_in_seconds:%.0f\r\n\r\n",
			runtime.Version(), pid(), sinceSeconds(sv.start))
	}
	if want("clients") {
		fmt.Fprintf(&b, "# Clients\r\nconnected_clients:%d\r\nmaxclients:%d\r\n\r\n", sv.clients.Load(), sv.f.maxClients)
	}
	if want("persistence") {
		fmt.Fprintf(&b, "# Persistence\r\nloading:0\r\ndurability:every write acknowledged once durable on PMem (fence per batch)\r\ncheckpoints:%d\r\nfences:%d\r\nappended_bytes:%d\r\nmedia_bytes:%d\r\n\r\n",
			st.Checkpoints, st.Fences, st.AppendedBytes, st.MediaBytes)
	}
	if want("stats") {
		fmt.Fprintf(&b, "# Stats\r\ntotal_connections_received:%d\r\ntotal_commands_processed:%d\r\nkv_puts:%d\r\nkv_gets:%d\r\nkv_deletes:%d\r\nkv_batches:%d\r\nkv_live_bytes:%d\r\nkv_allocated_bytes:%d\r\nkv_space_amplification:%.2f\r\nkv_dram_per_key:%.1f\r\nkv_workers:%d\r\nkv_gc_passes:%d\r\n\r\n",
			sv.served.Load(), sv.commands.Load(), st.Puts, st.Gets, st.Deletes, st.Batches, st.LiveBytes, st.AllocatedBytes,
			st.SpaceAmplification, st.DRAMPerKey, st.Workers, st.GCPasses)
	}
	if want("keyspace") {
		fmt.Fprintf(&b, "# Keyspace\r\ndb0:keys=%d,expires=0,avg_ttl=0\r\n", st.Keys)
	}
	return b.String()
}

// cursors are SCAN's: each number names the key after the last one
// returned, so that a full iteration returns every key present throughout
// it once, in key order (Redis's guarantee), whatever changes meanwhile.
// The table keeps the newest maxCursors; an older cursor is refused.
type cursors struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*cursor
	fifo []uint64
}

type cursor struct{ from []byte }

const maxCursors = 4096

func (cs *cursors) put(from []byte) uint64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.next++
	id := cs.next
	cs.m[id] = &cursor{from: from}
	cs.fifo = append(cs.fifo, id)
	if len(cs.fifo) > maxCursors {
		delete(cs.m, cs.fifo[0])
		cs.fifo = cs.fifo[1:]
	}
	return id
}

func (cs *cursors) get(id uint64) (*cursor, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.m[id]
	return c, ok
}

func (sv *server) scan(c redcon.Conn, args [][]byte) {
	id, err := strconv.ParseUint(string(args[0]), 10, 64)
	if err != nil {
		c.WriteError("ERR invalid cursor")
		return
	}
	var from []byte
	if id != 0 {
		cur, ok := sv.cursors.get(id)
		if !ok {
			c.WriteError("ERR invalid cursor (unknown or expired)")
			return
		}
		from = cur.from
	}
	pattern, count := "*", 10
	for i := 1; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.WriteError("ERR syntax error")
			return
		}
		switch strings.ToLower(string(args[i])) {
		case "match":
			pattern = string(args[i+1])
		case "count":
			n, err := strconv.Atoi(string(args[i+1]))
			if err != nil || n < 1 {
				c.WriteError("ERR value is not an integer or out of range")
				return
			}
			count = min(n, 100000)
		default:
			c.WriteError("ERR syntax error")
			return
		}
	}
	var keys [][]byte
	var last []byte
	seen := 0
	more := false
	err = sv.s.Scan(from, nil, func(k, _ []byte) bool {
		if seen == count {
			more = true
			return false
		}
		seen++
		last = append(last[:0], k...)
		if match.Match(string(k), pattern) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return true
	})
	if err != nil {
		replyErr(c, err)
		return
	}
	next := uint64(0)
	if more {
		next = sv.cursors.put(append(last, 0)) // the smallest key after last
	}
	c.WriteArray(2)
	c.WriteBulkString(strconv.FormatUint(next, 10))
	c.WriteArray(len(keys))
	for _, k := range keys {
		c.WriteBulk(k)
	}
}
