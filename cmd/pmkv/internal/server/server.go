package server

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a server's settings; zero fields take the defaults.
type Config struct {
	Backend Backend
	// Users are the ACL users and their passwords; "default" is the user
	// of AUTH with one argument (requirepass). No users: no password.
	Users map[string]string
	// ProtectedMode refuses clients from outside loopback while no
	// password is set, as Redis's protected-mode does.
	ProtectedMode bool
	MaxClients    int   // default 10000
	MaxBulk       int64 // largest argument (proto-max-bulk-len), default 512 MiB
	// MaxValue is the largest value the Backend stores (kv's MaxValue);
	// SETRANGE, SETBIT and APPEND refuse a longer result before building
	// it. 0: MaxBulk.
	MaxValue     int64
	WriteTimeout time.Duration // a client that does not read its replies this long is dropped
	DrainTimeout time.Duration // at shutdown, how long requests in flight may take
	Log          io.Writer     // warnings (a cross-protocol attack...), default discarded
	Port         int           // INFO's tcp_port
	Metrics      *Metrics      // optional Prometheus collectors
}

// Server serves RESP over a Backend.
type Server struct {
	cfg      Config
	b        Backend
	locks    *locks
	start    time.Time
	nextID   atomic.Int64
	mu       sync.Mutex
	conns    map[*conn]struct{}
	wg       sync.WaitGroup
	draining atomic.Bool
	stats    counters
	cursors  cursors
	samples  samples
	repl     repl
	set      settings
	replID   string // master_replid: random per run (under repl.mu)
}

// New returns a server over cfg.Backend.
func New(cfg Config) *Server {
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = 10000
	}
	if cfg.MaxBulk <= 0 {
		cfg.MaxBulk = 512 << 20
	}
	if cfg.MaxValue <= 0 || cfg.MaxValue > cfg.MaxBulk {
		cfg.MaxValue = cfg.MaxBulk
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	sv := &Server{cfg: cfg, b: keyMap{cfg.Backend}, locks: newLocks(), start: time.Now(), conns: map[*conn]struct{}{}}
	sv.cursors.m = map[uint64][]byte{}
	sv.replID = newReplID()
	sv.stats.cmds = map[string]*cmdStat{}
	for name := range table {
		sv.stats.cmds[name] = &cmdStat{}
	}
	return sv
}

// Served is the number of clients accepted and of commands run.
func (sv *Server) Served() (clients, commands int64) {
	return sv.stats.connections.Load(), sv.stats.commands.Load()
}

// Serve accepts clients on ln until ctx is done, then drains: ln closes,
// requests in flight finish and are answered, then connections close.
func (sv *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := make(chan struct{})
	defer close(stop)
	go sv.sampleLoop(stop)
	errc := make(chan error, 1)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				errc <- err
				return
			}
			sv.accept(nc)
		}
	}()
	var err error
	select {
	case <-ctx.Done():
		ln.Close()
		<-errc
	case err = <-errc:
	}
	sv.draining.Store(true)
	sv.mu.Lock()
	for c := range sv.conns {
		c.nc.SetReadDeadline(time.Now()) // wakes the idle readers
	}
	sv.mu.Unlock()
	done := make(chan struct{})
	go func() { sv.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(sv.cfg.DrainTimeout):
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (sv *Server) accept(nc net.Conn) {
	w := &writer{}
	switch {
	case sv.draining.Load():
		nc.Close()
		return
	case sv.cfg.ProtectedMode && len(sv.cfg.Users) == 0 && !isLoopback(nc.RemoteAddr()):
		w.err("DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.")
		sv.refuse(nc, w)
		return
	}
	sv.mu.Lock()
	if len(sv.conns) >= sv.cfg.MaxClients {
		sv.mu.Unlock()
		w.err("ERR max number of clients reached")
		sv.refuse(nc, w)
		return
	}
	c := sv.newConn(nc)
	sv.conns[c] = struct{}{}
	sv.wg.Add(1)
	sv.mu.Unlock()
	sv.stats.connections.Add(1)
	go c.serve()
}

func (sv *Server) refuse(nc net.Conn, w *writer) {
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write(w.b)
	nc.Close()
	sv.stats.rejected.Add(1)
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return true // a unix socket
	}
	return ta.IP.IsLoopback()
}

func (sv *Server) remove(c *conn) {
	sv.locks.unwatch(c)
	sv.dropReplica(c)
	sv.mu.Lock()
	delete(sv.conns, c)
	sv.mu.Unlock()
	sv.wg.Done()
}

// conn is one client's state.
type conn struct {
	sv      *Server
	nc      net.Conn
	id      int64
	r       *reader
	w       writer
	authed  bool
	user    string
	name    string
	libName string
	libVer  string
	created time.Time
	last    atomic.Int64 // Unix ms of the last command
	lastCmd atomic.Pointer[command]
	closing bool // QUIT, a protocol error, an attack: close after the replies
	killed  atomic.Bool
	// MULTI state
	multi   bool
	aborted bool // a command of the MULTI was refused: EXEC answers EXECABORT
	queued  [][][]byte
	watched []watched
	dirty   atomic.Bool
	replica *replica // after SYNC: the replication stream is all it gets
}

func (sv *Server) newConn(nc net.Conn) *conn {
	c := &conn{sv: sv, nc: nc, id: sv.nextID.Add(1), created: time.Now()}
	c.authed = len(sv.cfg.Users) == 0
	c.user = "default"
	c.r = newReader(nc, sv.cfg.MaxBulk, func() bool { return c.authed })
	c.last.Store(c.created.UnixMilli())
	return c
}

// maxPipeline bounds the commands run (and answered) together.
const maxPipeline = 1024

func (c *conn) serve() {
	defer c.sv.remove(c)
	defer c.nc.Close()
	for !c.closing && !c.sv.draining.Load() && !c.killed.Load() {
		args, err := c.r.next(true)
		if err != nil {
			c.readFailed(err)
			return
		}
		cmds := [][][]byte{args}
		for len(cmds) < maxPipeline && c.r.buffered() {
			a, err := c.r.next(false)
			if err != nil || a == nil {
				break // a framing error comes again on the next read
			}
			cmds = append(cmds, a)
		}
		c.run(cmds)
		if c.replica != nil {
			c.w.b = c.w.b[:0] // a replica gets no replies
		} else if !c.flush() {
			return
		}
		c.r.release()
	}
}

// readFailed answers a framing error as Redis does, then the connection closes.
func (c *conn) readFailed(err error) {
	var pe *errProtocol
	if errors.As(err, &pe) {
		c.w.err("ERR " + pe.Error())
		c.flush()
		c.sv.stats.protocolErrors.Add(1)
		c.linger()
	}
}

// linger half-closes the connection and drops what the client still
// sends for a moment, so that closing with unread bytes (a TCP reset)
// does not destroy the error reply before the client reads it.
func (c *conn) linger() {
	if tc, ok := c.nc.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	c.nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	io.CopyN(io.Discard, c.nc, 1<<20)
}

func (c *conn) flush() bool {
	if len(c.w.b) == 0 {
		return true
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.sv.cfg.WriteTimeout))
	_, err := c.nc.Write(c.w.b)
	c.w.b = c.w.b[:0]
	if cap(c.w.b) > 1<<20 {
		c.w.b = nil
	}
	return err == nil
}

func (c *conn) addr() string  { return c.nc.RemoteAddr().String() }
func (c *conn) laddr() string { return c.nc.LocalAddr().String() }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
