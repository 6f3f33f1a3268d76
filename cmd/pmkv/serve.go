package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"github.com/tidwall/redcon"

	"github.com/braid-pm/braid/internal/cli"
)

const serveUsage = `Serves the store over the Redis protocol (RESP2, through tidwall/redcon):
GET, SET (the reply comes once the value is durable), DEL, EXISTS, MGET,
MSET (one kv Apply: all durable when OK comes), SCAN cursor [MATCH p]
[COUNT n] over the ordered index, DBSIZE, PING, ECHO, INFO, COMMAND,
CLIENT SETNAME/GETNAME/SETINFO, SELECT 0, AUTH, QUIT, and pipelining;
anything else is an -ERR reply. An address other than loopback needs
-requirepass. SIGINT or SIGTERM stops accepting, finishes the requests in
flight, closes the store (a checkpoint) and exits 0; SIGHUP does the same
and exits 129. Try it with
redis-cli -p 6380 SET k v.`

type serveFlags struct {
	sf           *storeFlags
	addr, pass   string
	maxClients   int
	maxRequest   byteSize
	writeTimeout time.Duration
	drainTimeout time.Duration
}

func serveCommand(sf *storeFlags) cli.Command {
	f := &serveFlags{sf: sf}
	return cli.Command{Name: "serve", Short: "serve the store over the Redis protocol", Long: serveUsage, Flags: f.register,
		Run: func(ctx context.Context, args []string, stdout, _ io.Writer) error { return f.run(ctx, args, stdout) }}
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:6380", "address to listen on")
	fs.StringVar(&f.pass, "requirepass", "", "password clients must give with AUTH (required off loopback)")
	fs.IntVar(&f.maxClients, "maxclients", 10000, "most clients connected at once")
	f.maxRequest = 64 << 20
	fs.Var(&f.maxRequest, "max-request", "largest request (a command with its arguments)")
	fs.DurationVar(&f.writeTimeout, "write-timeout", 10*time.Second, "a client that does not read its replies for this long is disconnected")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", 10*time.Second, "at shutdown, how long requests in flight may take")
}

func (f *serveFlags) run(ctx context.Context, args []string, stdout io.Writer) (err error) {
	if err := cli.Args(args, 0, "no arguments"); err != nil {
		return err
	}
	if err := f.sf.limits(); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	o, err := f.sf.options(true)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usagef("-addr %s: %v", f.addr, err)
	}
	s, err := openStore(o)
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close (checkpoint): %w", cerr)
		}
	}()
	srv := newServer(s, f)
	fmt.Fprintf(stdout, "pmkv serve: listening on %s (store %s)\n", ln.Addr(), o.Devices[0])
	if err := srv.serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pmkv serve: shut down: %d clients served, %d commands; store closed\n", srv.served.Load(), srv.commands.Load())
	if context.Cause(ctx) == cli.ErrHangup {
		return ctx.Err() // exit status 129; SIGINT and SIGTERM are serve's normal stop
	}
	return nil
}

func (f *serveFlags) check() error {
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usagef("-addr %q: %v (want HOST:PORT)", f.addr, err)
	}
	if !loopback(host) && f.pass == "" {
		return usagef("-addr %s is not loopback: give -requirepass", f.addr)
	}
	switch {
	case f.maxClients < 1:
		return usagef("-maxclients %d: want at least 1", f.maxClients)
	case f.maxRequest < 1024:
		return usagef("-max-request %d: want at least 1KiB", f.maxRequest)
	case f.writeTimeout <= 0 || f.drainTimeout <= 0:
		return usagef("-write-timeout and -drain-timeout must be positive")
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// server is the state of pmkv serve.
type server struct {
	s        store
	f        *serveFlags
	start    time.Time
	clients  atomic.Int64
	served   atomic.Int64
	commands atomic.Int64
	inflight sync.WaitGroup
	draining atomic.Bool
	cursors  cursors
}

func newServer(s store, f *serveFlags) *server {
	return &server{s: s, f: f, start: time.Now(), cursors: cursors{m: map[uint64]*cursor{}}}
}

// client is one connection's state.
type client struct {
	authed bool
	name   string
}

// serve runs until ctx is done, then drains: the listener is closed,
// requests in flight finish and are answered, then connections close.
func (sv *server) serve(ctx context.Context, ln net.Listener) error {
	dl := &drainListener{Listener: guardListener{Listener: ln, max: int64(sv.f.maxRequest)}, sv: sv, done: make(chan struct{})}
	rs := redcon.NewServerNetwork("tcp", "", sv.handle, sv.accept, sv.closed)
	errc := make(chan error, 1)
	go func() { errc <- rs.Serve(dl) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sv.draining.Store(true)
	close(dl.done)
	ln.Close()
	return <-errc
}

// drainListener lets redcon's Serve return (and close the connections)
// only after the requests in flight were answered.
type drainListener struct {
	net.Listener
	sv   *server
	done chan struct{}
}

func (l *drainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		return c, nil
	}
	select {
	case <-l.done:
		finished := make(chan struct{})
		go func() { l.sv.inflight.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(l.sv.f.drainTimeout):
		}
		return nil, net.ErrClosed
	default:
		return nil, err
	}
}

func (sv *server) accept(c redcon.Conn) bool {
	if sv.draining.Load() {
		return false
	}
	if sv.clients.Add(1) > int64(sv.f.maxClients) {
		sv.clients.Add(-1)
		c.WriteError("ERR max number of clients reached")
		redcon.BaseWriter(c).Flush()
		return false
	}
	sv.served.Add(1)
	c.SetContext(&client{authed: sv.f.pass == ""})
	return true
}

func (sv *server) closed(c redcon.Conn, err error) {
	if c.Context() != nil {
		sv.clients.Add(-1)
	}
}

// handle answers a command and the rest of its pipeline: runs of SETs go
// to the store together (PutAsync), so that one client's pipeline shares
// the workers' batches; every reply is written in order, once its put is
// durable, and flushed (under the write deadline) before handle returns,
// so that a draining shutdown never closes a connection with replies
// unsent.
func (sv *server) handle(c redcon.Conn, first redcon.Command) {
	sv.inflight.Add(1)
	defer sv.inflight.Done()
	cmds := append([]redcon.Command{first}, c.ReadPipeline()...)
	sv.commands.Add(int64(len(cmds)))
	cl, _ := c.Context().(*client)
	if cl == nil {
		cl = &client{}
	}
	for i := 0; i < len(cmds); {
		switch {
		case sv.draining.Load():
			c.WriteError("ERR server is shutting down")
			i++
		case cl.authed && isSet(cmds[i]):
			j := i + 1
			for j < len(cmds) && j-i < 256 && isSet(cmds[j]) {
				j++
			}
			sv.sets(c, cmds[i:j])
			i = j
		default:
			if sv.dispatch(c, cl, cmds[i]) {
				i = len(cmds) // QUIT: the rest is not answered
			}
			i++
		}
	}
	c.NetConn().SetWriteDeadline(time.Now().Add(sv.f.writeTimeout))
	if err := redcon.BaseWriter(c).Flush(); err != nil {
		c.Close()
	}
}

func isSet(cmd redcon.Command) bool {
	return len(cmd.Args) == 3 && len(cmd.Args[0]) == 3 && strings.EqualFold(string(cmd.Args[0]), "set")
}

func pid() int { return os.Getpid() }

func sinceSeconds(t time.Time) float64 { return time.Since(t).Seconds() }
