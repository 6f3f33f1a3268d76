package server

import (
	"fmt"
	"strings"
	"time"
)

// run answers a pipeline: runs of commands on keys execute as one tx
// (one Apply, one fence for all their writes, the replies written in
// order once it is durable); the others one by one.
func (c *conn) run(cmds [][][]byte) {
	for i := 0; i < len(cmds) && !c.closing; {
		cmd, refused := c.check(cmds[i])
		switch {
		case refused:
			i++
		case c.multi && !cmd.multiCtl:
			c.queued = append(c.queued, clone(cmds[i]))
			c.w.simple("QUEUED")
			i++
		case cmd.keyed():
			j := i + 1
			for j < len(cmds) && j-i < 256 && !c.multi {
				if next := lookup(cmds[j][0]); next == nil || !next.keyed() || c.refusal(next, cmds[j]) != "" {
					break
				}
				j++
			}
			c.runTx(cmds[i:j])
			i = j
		default:
			c.count(cmd, cmds[i], func() { cmd.conn(c, cmds[i][1:]) })
			i++
		}
	}
}

// check finds args' command and refuses it when unknown, of the wrong
// arity or not allowed now; inside MULTI a refusal aborts the EXEC.
func (c *conn) check(args [][]byte) (*command, bool) {
	cmd := lookup(args[0])
	if cmd != nil && cmd.attack {
		fmt.Fprintf(c.sv.cfg.Log, "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection from %s aborted.\n", c.addr())
		c.sv.stats.attacks.Add(1)
		c.closing = true
		c.killed.Store(true)
		c.w.b = c.w.b[:0] // nothing more is answered
		return cmd, true
	}
	msg := c.refusal(cmd, args)
	if msg == "" {
		return cmd, false
	}
	if c.multi && !strings.HasPrefix(msg, "NOAUTH") {
		c.aborted = true
	}
	c.w.err(msg)
	c.sv.stats.errors.Add(1)
	return cmd, true
}

// refusal is the error for args before it runs ("" when it may run).
func (c *conn) refusal(cmd *command, args [][]byte) string {
	switch {
	case cmd == nil:
		return fmt.Sprintf("ERR unknown command '%.128s', with args beginning with: %s", args[0], argsPreview(args[1:]))
	case !c.authed && !cmd.noAuth:
		return "NOAUTH Authentication required."
	case (cmd.arity > 0 && len(args) != cmd.arity) || (cmd.arity < 0 && len(args) < -cmd.arity):
		return fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.fullName(args))
	case c.multi && cmd.noMulti:
		return "ERR Command not allowed inside a transaction"
	case cmd.sub != nil && len(args) > 1:
		sub := cmd.subcommand(args)
		if sub == nil {
			return fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", args[1], strings.ToUpper(cmd.name))
		}
		if (sub.arity > 0 && len(args) != sub.arity) || (sub.arity < 0 && len(args) < -sub.arity) {
			return fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.fullName(args))
		}
	}
	return c.sv.stateRefusal(cmd)
}

func argsPreview(args [][]byte) string {
	var b strings.Builder
	for i, a := range args {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "'%.128s' ", a)
	}
	return b.String()
}

func clone(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// runTx runs cmds (known, allowed, on keys) as one tx.
func (c *conn) runTx(cmds [][][]byte) {
	var keys [][]byte
	write, all := false, false
	for _, a := range cmds {
		cmd := lookup(a[0])
		keys = cmd.keys(a, keys)
		write = write || cmd.write
		all = all || cmd.all
	}
	var held lockSet
	if err := c.sv.writable(write); err != nil {
		for range cmds {
			c.storeErr(err)
		}
		return
	}
	if write {
		held = c.sv.locks.lock(keys, all)
		defer c.sv.locks.unlock(held)
	}
	t := c.sv.newTx()
	t.write = write
	mark := len(c.w.b)
	for _, a := range cmds {
		t.exec(c, lookup(a[0]), a)
	}
	if err := t.commit(); err != nil {
		c.w.b = c.w.b[:mark]
		for range cmds {
			c.storeErr(err)
		}
		return
	}
	if t.prop.on {
		c.sv.feed(t.prop.cmds, false)
	}
}

// writable is the Backend's refusal of writes (a raft follower's
// redirect, before any read), nil when it takes them or write is false.
func (sv *Server) writable(write bool) error {
	if w, ok := sv.cfg.Backend.(interface{ Writable() error }); ok && write {
		return w.Writable()
	}
	return nil
}

// count runs fn as cmd for the statistics.
func (c *conn) count(cmd *command, args [][]byte, fn func()) {
	start := time.Now()
	fn()
	c.last.Store(start.UnixMilli())
	c.lastCmd.Store(cmd)
	c.sv.stats.done(cmd.name, time.Since(start))
}
