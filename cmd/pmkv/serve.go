package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/braid-pm/braid/cmd/pmkv/internal/replica"
	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/internal/cli"
)

const serveUsage = `Serves the store over the Redis protocol (RESP2, and RESP3 after HELLO 3):
Redis 7.0's string, key, expiry, bit, transaction (MULTI/EXEC/WATCH) and
connection commands, with Redis's replies (cmd/pmkv/README.md lists them).
A write is answered once durable; a pipeline's writes are committed
together. An address other than loopback needs a password (-requirepass
or -user); with none, clients from outside loopback are refused
(protected mode). -metrics-addr serves Prometheus metrics at /metrics.
SIGINT or SIGTERM stops accepting, finishes the requests in flight, closes
the store (a checkpoint) and exits 0; SIGHUP does the same and exits 129.
With -raft-id the node is a member of a raft group: writes go through the
leader's log, followers answer READONLY naming the leader (README:
"Replicated with raft").
Try it with redis-cli -p 6380 SET k v.`

type serveFlags struct {
	sf              *storeFlags
	addr, pass      string
	users           userFlags
	tlsCert, tlsKey string
	metricsAddr     string
	protected       bool
	maxClients      int
	maxRequest      byteSize
	writeTimeout    time.Duration
	drainTimeout    time.Duration
	raft            raftFlags
}

// userFlags are -user NAME:PASS flags, repeated.
type userFlags map[string]string

func (u userFlags) String() string { return "" }
func (u userFlags) Type() string   { return "NAME:PASS" }

func (u userFlags) Set(s string) error {
	name, pass, ok := strings.Cut(s, ":")
	if !ok || name == "" || pass == "" {
		return fmt.Errorf("%q: want NAME:PASSWORD", s)
	}
	u[name] = pass
	return nil
}

func serveCommand(sf *storeFlags) cli.Command {
	f := &serveFlags{sf: sf, users: userFlags{}}
	return cli.Command{Name: "serve", Short: "serve the store over the Redis protocol", Long: serveUsage, Flags: f.register,
		Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return f.run(ctx, args, stdout, stderr)
		}}
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:6380", "address to listen on")
	fs.StringVar(&f.pass, "requirepass", "", "password of the default user (AUTH PASS)")
	fs.Var(f.users, "user", "a user and its password (AUTH NAME PASS); repeatable")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve TLS with this certificate (PEM; with -tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the certificate's private key (PEM)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (off when empty)")
	fs.BoolVar(&f.protected, "protected-mode", true, "without a password, refuse clients from outside loopback")
	fs.IntVar(&f.maxClients, "maxclients", 10000, "most clients connected at once")
	f.maxRequest = 512 << 20
	fs.Var(&f.maxRequest, "max-request", "largest argument of a request (Redis's proto-max-bulk-len)")
	fs.DurationVar(&f.writeTimeout, "write-timeout", 10*time.Second, "a client that does not read its replies for this long is disconnected")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", 10*time.Second, "at shutdown, how long requests in flight may take")
	f.raft.register(fs)
}

func (f *serveFlags) run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	if err := cli.Args(args, 0, "no arguments"); err != nil {
		return err
	}
	if err := f.sf.limits(); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	var rc replica.Config
	if f.raft.on() {
		if rc, err = f.raft.config(f.sf); err != nil {
			return err
		}
	}
	o, err := f.sf.options(true)
	if err != nil {
		return err
	}
	ln, err := f.listen()
	if err != nil {
		f.sf.unmake() // the directories options made for a new store
		return err
	}
	s, err := openStore(o)
	if err != nil {
		f.sf.unmake()
		ln.Close()
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close (checkpoint): %w", cerr)
		}
	}()
	ks, ok := s.(server.KVStore)
	if !ok {
		ln.Close()
		return errors.New("the store is not a kv store")
	}
	var b server.Backend = server.KV{S: ks}
	if f.raft.on() {
		node, err := f.raft.start(rc, ks, o, ln, stderr)
		if err != nil {
			ln.Close()
			return err
		}
		defer node.Close() // before the store's Close (deferred earlier)
		b = node
	}
	srv := server.New(f.config(b, ln, stderr))
	stopMetrics, err := f.serveMetrics(srv)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopMetrics()
	fmt.Fprintf(stdout, "pmkv serve: listening on %s (store %s)\n", ln.Addr(), o.Devices[0])
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	clients, commands := srv.Served()
	fmt.Fprintf(stdout, "pmkv serve: shut down: %d clients served, %d commands; store closed\n", clients, commands)
	if context.Cause(ctx) == cli.ErrHangup {
		return ctx.Err() // exit status 129; SIGINT and SIGTERM are serve's normal stop
	}
	return nil
}

func (f *serveFlags) config(b server.Backend, ln net.Listener, stderr io.Writer) server.Config {
	users := map[string]string{}
	for n, p := range f.users {
		users[n] = p
	}
	if f.pass != "" {
		users["default"] = f.pass
	}
	port := 0
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		port = ta.Port
	}
	return server.Config{
		Backend: b, Users: users, ProtectedMode: f.protected,
		MaxClients: f.maxClients, MaxBulk: int64(f.maxRequest), MaxValue: int64(f.sf.maxValue), WriteTimeout: f.writeTimeout,
		DrainTimeout: f.drainTimeout, Log: logTo(stderr), Port: port,
	}
}

// serveLog, when set, takes the server's warnings instead of stderr (tests).
var serveLog io.Writer

func logTo(stderr io.Writer) io.Writer {
	if serveLog != nil {
		return serveLog
	}
	return stderr
}

// listen opens -addr, with TLS when -tls-cert is given.
func (f *serveFlags) listen() (net.Listener, error) {
	var cfg *tls.Config
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, usagef("-tls-cert %s, -tls-key %s: %v", f.tlsCert, f.tlsKey, err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, usagef("-addr %s: %v", f.addr, err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	return ln, nil
}

// serveMetrics serves /metrics on -metrics-addr until the returned stop.
func (f *serveFlags) serveMetrics(srv *server.Server) (func(), error) {
	if f.metricsAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", f.metricsAddr)
	if err != nil {
		return nil, usagef("-metrics-addr %s: %v", f.metricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", server.NewMetrics(srv).Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return func() { hs.Close() }, nil
}

func (f *serveFlags) check() error {
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usagef("-addr %q: %v (want HOST:PORT)", f.addr, err)
	}
	if !loopback(host) && f.pass == "" && len(f.users) == 0 {
		return usagef("-addr %s is not loopback: give -requirepass or -user", f.addr)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("-tls-cert and -tls-key go together")
	}
	if f.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(f.metricsAddr); err != nil {
			return usagef("-metrics-addr %q: %v (want HOST:PORT)", f.metricsAddr, err)
		}
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
