package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The replication stream, as Redis's SYNC serves it: after an empty
// snapshot, every write the server makes, once durable, as the command
// that reproduces it — relative times as absolute ones (SET ... PXAT,
// PEXPIREAT), a deadline in the past as DEL, INCRBYFLOAT as SET KEEPTTL —
// a MULTI of several writes between MULTI and EXEC, a command that
// changed nothing not at all. It serves tools that follow the writes
// (and Redis's own tests of propagation); a Redis replica attached to it
// would start empty, since the snapshot is: pmkv's own replication is
// elsewhere.

func init() {
	connCmd("sync", 1, []string{"admin", "noscript"}, cmdSync).noMulti = true
	connCmd("psync", -3, []string{"admin", "noscript"}, cmdSync).noMulti = true
	connCmd("replconf", -1, []string{"admin", "noscript", "loading", "stale"}, func(c *conn, _ [][]byte) { c.w.ok() })
}

// emptyRDB is an RDB file (version 10) with no keys and its checksum
// disabled (0), which Redis accepts.
var emptyRDB = []byte("REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00")

// maxReplBuf is the most a replica may fall behind before it is dropped
// (Redis's client-output-buffer-limit for replicas).
const maxReplBuf = 256 << 20

type replica struct {
	c    *conn
	mu   sync.Mutex
	buf  []byte
	wake chan struct{}
	dead bool
}

// repl is the server's set of replicas.
type repl struct {
	n  atomic.Int32 // len(rs), read without the lock by every tx
	mu sync.Mutex
	rs map[*replica]struct{}
}

func cmdSync(c *conn, a [][]byte) {
	if c.replica != nil {
		return
	}
	r := &replica{c: c, wake: make(chan struct{}, 1)}
	if len(a) == 2 {
		c.w.simple("FULLRESYNC " + c.sv.replIDNow() + " 0")
	}
	c.w.header('$', len(emptyRDB))
	c.w.b = append(c.w.b, emptyRDB...)
	appendCommand(&c.w, [][]byte{[]byte("SELECT"), []byte("0")})
	r.buf, c.w.b = c.w.b, nil
	c.replica = r
	sv := c.sv
	sv.repl.mu.Lock()
	if sv.repl.rs == nil {
		sv.repl.rs = map[*replica]struct{}{}
	}
	sv.repl.rs[r] = struct{}{}
	sv.repl.n.Store(int32(len(sv.repl.rs)))
	sv.repl.mu.Unlock()
	r.wake <- struct{}{}
	go r.send()
}

// send writes what was fed to the replica until its connection fails.
func (r *replica) send() {
	for range r.wake {
		r.mu.Lock()
		b := r.buf
		r.buf = nil
		dead := r.dead
		r.mu.Unlock()
		if dead {
			return
		}
		r.c.nc.SetWriteDeadline(time.Now().Add(r.c.sv.cfg.WriteTimeout))
		if _, err := r.c.nc.Write(b); err != nil {
			r.c.nc.Close()
			return
		}
	}
}

func (r *replica) push(b []byte) {
	r.mu.Lock()
	if !r.dead && len(r.buf)+len(b) > maxReplBuf {
		r.dead = true
		r.c.nc.Close()
	}
	if !r.dead {
		r.buf = append(r.buf, b...)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// drop forgets c's replica when c closes.
func (sv *Server) dropReplica(c *conn) {
	r := c.replica
	if r == nil {
		return
	}
	sv.repl.mu.Lock()
	delete(sv.repl.rs, r)
	sv.repl.n.Store(int32(len(sv.repl.rs)))
	sv.repl.mu.Unlock()
	r.mu.Lock()
	r.dead = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// feed sends cmds, written and durable, to every replica: several
// between MULTI and EXEC when multi.
func (sv *Server) feed(cmds [][][]byte, multi bool) {
	if len(cmds) == 0 || sv.set.replicaOf.Load() != nil {
		return // a replica propagates nothing
	}
	var w writer
	multi = multi && len(cmds) > 1
	if multi {
		appendCommand(&w, [][]byte{[]byte("MULTI")})
	}
	for _, a := range cmds {
		appendCommand(&w, a)
	}
	if multi {
		appendCommand(&w, [][]byte{[]byte("EXEC")})
	}
	sv.repl.mu.Lock()
	for r := range sv.repl.rs {
		r.push(w.b)
	}
	sv.repl.mu.Unlock()
}

func appendCommand(w *writer, args [][]byte) {
	w.array(len(args))
	for _, a := range args {
		w.bulk(a)
	}
}

// propagation: what a tx records of its commands for the replicas.
type propagation struct {
	on      bool       // some replica listens
	cmds    [][][]byte // the commands to send, in order
	dirty   int        // writes made (tx.set)
	rewrite [][]byte   // the current command's own propagation
	own     bool       // the current command chose (rewrite, or nothing)
}

// propagate makes args what the current command sends (none: nothing).
func (t *tx) propagate(args ...[]byte) {
	if !t.prop.on {
		return
	}
	t.prop.own = true
	t.prop.rewrite = nil
	if len(args) > 0 {
		t.prop.rewrite = clone(args)
	}
}

// exec runs one command of the tx and records its propagation: its own
// choice, else the command as given when it wrote something.
func (t *tx) exec(c *conn, cmd *command, args [][]byte) {
	if !t.prop.on {
		c.count(cmd, args, func() { cmd.run(c, t, args[1:]) })
		return
	}
	dirty := t.prop.dirty
	t.prop.own, t.prop.rewrite = false, nil
	c.count(cmd, args, func() { cmd.run(c, t, args[1:]) })
	switch {
	case t.prop.own:
		if t.prop.rewrite != nil {
			t.prop.cmds = append(t.prop.cmds, t.prop.rewrite)
		}
	case t.prop.dirty != dirty:
		t.prop.cmds = append(t.prop.cmds, clone(args))
	}
}

func (sv *Server) replIDNow() string {
	sv.repl.mu.Lock()
	defer sv.repl.mu.Unlock()
	return sv.replID
}

func msArg(ms int64) []byte { return strconv.AppendInt(nil, ms, 10) }
