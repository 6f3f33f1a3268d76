package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// twemproxy starts 3 pmkv serve processes and Debian's nutcracker
// (twemproxy) in front of them, all on loopback, and returns the proxy's
// address and the 3 servers' addresses. Everything is killed when the
// test ends. A pass other than "" is every pmkv's -requirepass and the
// proxy's redis_auth (twemproxy AUTHs its server connections with it and
// asks its clients for it).
func twemproxy(t *testing.T, pass string) (string, []string) {
	t.Helper()
	nut, err := exec.LookPath("nutcracker")
	if err != nil {
		t.Skip("nutcracker (twemproxy) is not on PATH: `make test-deps` installs Debian's nutcracker package (apt-get install nutcracker)")
	}
	if !kvReady(t) {
		t.Skip("needs package kv (the stand-in keeps no store shared between processes)")
	}
	base := t.TempDir()
	servers := make([]string, 3)
	var conf strings.Builder
	proxy := freeAddr(t)
	fmt.Fprintf(&conf, "braid:\n  listen: %s\n  redis: true\n  hash: fnv1a_64\n  distribution: ketama\n", proxy)
	if pass != "" {
		fmt.Fprintf(&conf, "  redis_auth: %s\n", pass)
	}
	conf.WriteString("  auto_eject_hosts: false\n  server_connections: 1\n  servers:\n")
	for i := range servers {
		servers[i] = freeAddr(t)
		args := append(append([]string{"serve"}, small(filepath.Join(base, fmt.Sprint("pmkv", i)))...), "-addr", servers[i])
		if pass != "" {
			args = append(args, "-requirepass", pass)
		}
		c, stderr := pmkvProcess(t, args...)
		t.Cleanup(func() {
			c.Process.Kill()
			c.Wait()
			if t.Failed() {
				t.Logf("pmkv serve %d stderr:\n%s", i, stderr)
			}
		})
		waitListening(t, servers[i])
		// Named servers: ketama hashes the name, so the key placement
		// does not depend on the ports the test happened to get.
		fmt.Fprintf(&conf, "   - %s:1 pmkv%d\n", servers[i], i)
	}
	confFile := filepath.Join(base, "nutcracker.yml")
	require.NoError(t, os.WriteFile(confFile, []byte(conf.String()), 0o644))
	logFile := filepath.Join(base, "nutcracker.log")
	stats := strings.Split(freeAddr(t), ":")
	out, err := exec.Command(nut, "-t", "-c", confFile).CombinedOutput()
	require.NoError(t, err, "nutcracker -t: %s\n%s", out, conf.String())
	c := exec.Command(nut, "-c", confFile, "-o", logFile, "-a", stats[0], "-s", stats[1], "-v", "6")
	require.NoError(t, c.Start())
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("nutcracker log:\n%s", b)
		}
	})
	waitListening(t, proxy)
	return proxy, servers
}

// TestTwemproxy: pmkv serve sharded by twemproxy over 3 processes. Every
// key written through the proxy reads back through it and lives on
// exactly one of the 3 servers, each server holding a share;
// redis-benchmark runs through the proxy without an error; and the
// string and key commands twemproxy forwards answer through it as pmkv
// answers them directly.
func TestTwemproxy(t *testing.T) {
	proxy, servers := twemproxy(t, "")
	ctx := context.Background()
	p := newClient(t, proxy, &redis.Options{MaxRetries: -1, DisableIdentity: true, Dialer: dialNoHello})
	direct := make([]*redis.Client, len(servers))
	for i, a := range servers {
		direct[i] = newClient(t, a, nil)
	}

	require.Equal(t, "PONG", p.Ping(ctx).Val())
	const n = 600
	for i := range n {
		require.NoError(t, p.Set(ctx, fmt.Sprintf("key:%d", i), fmt.Sprint("value ", i), 0).Err())
	}
	for i := range n {
		require.Equal(t, fmt.Sprint("value ", i), p.Get(ctx, fmt.Sprintf("key:%d", i)).Val(), "key:%d through the proxy", i)
	}
	var total int64
	for i, d := range direct {
		size, err := d.DBSize(ctx).Result()
		require.NoError(t, err)
		require.GreaterOrEqual(t, size, int64(n/10), "pmkv %d holds %d of %d keys", i, size, n)
		total += size
	}
	require.Equal(t, int64(n), total, "the 3 servers hold every key once")
	for i := range n {
		k, holders := fmt.Sprintf("key:%d", i), 0
		for _, d := range direct {
			if v, err := d.Get(ctx, k).Result(); err == nil {
				require.Equal(t, fmt.Sprint("value ", i), v)
				holders++
			} else {
				require.ErrorIs(t, err, redis.Nil)
			}
		}
		require.Equal(t, 1, holders, "%s is on exactly one server", k)
	}

	// MGET, MSET, DEL and EXISTS over many keys: twemproxy splits them
	// by server and merges the replies.
	keys := make([]string, 40)
	pairs := make([]any, 0, 2*len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("multi:%d", i)
		pairs = append(pairs, keys[i], fmt.Sprint("m", i))
	}
	require.NoError(t, p.MSet(ctx, pairs...).Err())
	vals, err := p.MGet(ctx, append(keys, "multi:none")...).Result()
	require.NoError(t, err)
	require.Len(t, vals, len(keys)+1)
	for i := range keys {
		require.Equal(t, fmt.Sprint("m", i), vals[i])
	}
	require.Nil(t, vals[len(keys)])
	require.Equal(t, int64(len(keys)), p.Exists(ctx, append(keys, "multi:none")...).Val())
	require.Equal(t, int64(len(keys)/2), p.Del(ctx, append(slices.Clone(keys[:len(keys)/2]), "multi:none")...).Val())
	require.Equal(t, int64(len(keys)/2), p.Exists(ctx, keys...).Val())

	benchmarkThrough(t, p, proxy)
	compareThrough(t, p, direct[0])
}

// TestTwemproxyAuth: with redis_auth, twemproxy AUTHs its connections to
// pmkv serve -requirepass and asks its own clients for the password.
func TestTwemproxyAuth(t *testing.T) {
	proxy, servers := twemproxy(t, "s3cret")
	ctx := context.Background()
	anon := newClient(t, proxy, &redis.Options{MaxRetries: -1, DisableIdentity: true, Dialer: dialNoHello})
	require.ErrorContains(t, anon.Get(ctx, "k").Err(), "NOAUTH")
	p := newClient(t, proxy, &redis.Options{MaxRetries: -1, DisableIdentity: true, Dialer: dialNoHello, Password: "s3cret"})
	// The keys differ in their first bytes: twemproxy's fnv1a_64 (its low
	// 32 bits) puts keys that differ only in their last byte on one arc of
	// the ketama ring, so k0..k59 would all land on one server (murmur spreads them).
	for i := range 60 {
		require.NoError(t, p.Set(ctx, fmt.Sprintf("%d:auth", i), i, 0).Err())
	}
	var total int64
	for _, a := range servers {
		require.ErrorContains(t, newClient(t, a, nil).DBSize(ctx).Err(), "NOAUTH", "pmkv itself asks for the password")
		size, err := newClient(t, a, &redis.Options{Password: "s3cret"}).DBSize(ctx).Result()
		require.NoError(t, err)
		require.Positive(t, size, "%d keys on %s", size, a)
		total += size
	}
	require.Equal(t, int64(60), total)
	for i := range 60 {
		require.Equal(t, fmt.Sprint(i), p.Get(ctx, fmt.Sprintf("%d:auth", i)).Val())
	}
}

// benchmarkThrough runs redis-benchmark's SET and GET through the proxy
// and checks its output has no error and its keys read back.
func benchmarkThrough(t *testing.T, p *redis.Client, proxy string) {
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Log("redis-benchmark is not on PATH (Debian's redis-tools): skipping the benchmark through the proxy")
		return
	}
	host, port, _ := strings.Cut(proxy, ":")
	out, err := exec.Command(bench, "-h", host, "-p", port, "-t", "set,get", "-n", "2000", "-r", "1000", "-q").CombinedOutput()
	require.NoError(t, err, "redis-benchmark: %s", out)
	lines := 0
	for l := range strings.SplitSeq(strings.ReplaceAll(string(out), "\r", "\n"), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l == "WARNING: Could not fetch server CONFIG" {
			// The one warning expected: twemproxy does not forward
			// CONFIG GET, which redis-benchmark sends first.
			continue
		}
		low := strings.ToLower(l)
		require.False(t, strings.Contains(low, "err") || strings.Contains(low, "warning") || strings.Contains(low, "reset"),
			"redis-benchmark through twemproxy: %q\n%s", l, out)
		if strings.HasPrefix(l, "SET:") || strings.HasPrefix(l, "GET:") {
			lines++
		}
	}
	require.GreaterOrEqual(t, lines, 2, "redis-benchmark reports SET and GET:\n%s", out)
	// -r 1000: the keys are key:000000000000 .. key:000000000999, each
	// set to a 3-byte value (redis-benchmark's default -d).
	ctx := context.Background()
	found := 0
	for i := range 1000 {
		v, err := p.Get(ctx, fmt.Sprintf("key:%012d", i)).Result()
		if err == redis.Nil {
			continue
		}
		require.NoError(t, err)
		require.Len(t, v, 3, "key:%012d", i)
		found++
	}
	require.Positive(t, found, "redis-benchmark's keys read back through the proxy")
}

// forwarded are string and key commands twemproxy forwards (its
// notes/redis.md), run in this order on fresh keys a..z. A leading "~"
// marks a reply that is a remaining time, compared by sign only.
var forwarded = [][]string{
	{"SET", "a", "10"}, {"GET", "a"}, {"SET", "a", "11", "NX"}, {"SET", "a", "12", "XX"}, {"GET", "a"},
	{"SET", "b", "1", "XX"}, {"SET", "b", "1", "NX"}, {"SET", "a", "13", "GET"},
	{"SET", "c", "v", "EX", "1000"}, {"~TTL", "c"}, {"~PTTL", "c"}, {"SET", "d", "v", "PX", "900000"}, {"~PTTL", "d"},
	{"PERSIST", "c"}, {"TTL", "c"}, {"PERSIST", "c"}, {"PERSIST", "z"}, {"TTL", "z"}, {"PTTL", "z"},
	{"EXPIRE", "a", "1000"}, {"~TTL", "a"}, {"PEXPIRE", "b", "900000"}, {"~PTTL", "b"}, {"EXPIRE", "z", "10"},
	{"EXPIREAT", "c", "4102444800"}, {"~TTL", "c"}, {"PEXPIREAT", "c", "4102444800000"}, {"~PTTL", "c"},
	{"EXISTS", "a"}, {"EXISTS", "z"}, {"TYPE", "a"}, {"TYPE", "z"},
	{"INCR", "n"}, {"INCRBY", "n", "41"}, {"DECR", "n"}, {"DECRBY", "n", "40"}, {"INCR", "a"}, {"INCRBYFLOAT", "f", "1.5"},
	{"APPEND", "s", "hello"}, {"APPEND", "s", " world"}, {"STRLEN", "s"}, {"STRLEN", "z"},
	{"GETRANGE", "s", "0", "4"}, {"GETRANGE", "s", "-5", "-1"}, {"GETRANGE", "z", "0", "4"},
	{"SETRANGE", "s", "6", "WORLD"}, {"GET", "s"}, {"SETRANGE", "r", "3", "x"}, {"GET", "r"},
	{"GETSET", "s", "new"}, {"GETSET", "y", "first"}, {"GET", "s"},
	{"SETNX", "s", "x"}, {"SETNX", "t", "x"}, {"GET", "t"},
	{"SETEX", "e", "1000", "v"}, {"~TTL", "e"}, {"PSETEX", "g", "900000", "v"}, {"~PTTL", "g"},
	{"GETEX", "e", "PERSIST"}, {"TTL", "e"}, {"GETEX", "g", "EX", "500"}, {"~TTL", "g"}, {"GETDEL", "t"}, {"GET", "t"},
	{"BITCOUNT", "s"}, {"BITCOUNT", "s", "0", "1"}, {"SETBIT", "bits", "7", "1"}, {"SETBIT", "bits", "7", "1"},
	{"GETBIT", "bits", "7"}, {"GETBIT", "bits", "100"}, {"BITCOUNT", "bits"}, {"BITPOS", "bits", "1"},
	{"MSET", "m1", "1", "m2", "2"}, {"MGET", "m1", "z", "m2"}, {"EXISTS", "m1", "m2", "z"},
	{"DEL", "m1", "z"}, {"UNLINK", "m2"}, {"EXISTS", "m1", "m2"},
	// Errors pass through as the server gives them.
	{"INCR", "s"}, {"SET", "a", "b", "EX", "0"}, {"SET", "a", "b", "NX", "XX"}, {"GETBIT", "bits", "-1"},
	{"SETRANGE", "s", "-1", "x"}, {"EXPIRE", "a", "x"}, {"TYPE", "a"},
}

// compareThrough runs forwarded through the proxy and directly on one
// pmkv, each on its own keys, and requires the same replies.
func compareThrough(t *testing.T, p, d *redis.Client) {
	ctx := context.Background()
	for _, c := range forwarded {
		name, byTime := strings.CutPrefix(c[0], "~")
		var pr, dr string
		for _, side := range []struct {
			cl     *redis.Client
			prefix string
			reply  *string
		}{{p, "proxied:", &pr}, {d, "direct:", &dr}} {
			args := []any{name}
			for i, a := range c[1:] {
				if i == 0 || (name == "MSET" && i%2 == 0) || name == "MGET" || name == "DEL" || name == "EXISTS" || name == "UNLINK" {
					a = side.prefix + a
				}
				args = append(args, a)
			}
			v, err := side.cl.Do(ctx, args...).Result()
			if n, ok := v.(int64); ok && byTime && n > 0 {
				v = "a positive time"
			}
			*side.reply = fmt.Sprintf("%#v %v", v, err)
		}
		require.Equal(t, dr, pr, "%v through twemproxy", c)
	}
}

// dialNoHello dials for go-redis through twemproxy. go-redis v9 opens
// every connection with HELLO, which twemproxy 0.5.0 does not forward: it
// closes the connection (go-redis issue 2616). The connection answers
// that one HELLO itself with the error Redis 5 gives, and go-redis goes
// on in RESP2.
func dialNoHello(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &noHello{Conn: c}, nil
}

type noHello struct {
	net.Conn
	first   bool // the first write has been seen
	pending []byte
}

func (c *noHello) Write(b []byte) (int, error) {
	if !c.first {
		c.first = true
		if _, rest, ok := bytes.Cut(b, []byte("\r\n")); ok && len(rest) > 9 && bytes.EqualFold(rest[:9], []byte("$5\r\nhello")) {
			c.pending = []byte("-ERR unknown command 'HELLO'\r\n")
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

func (c *noHello) Read(b []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
