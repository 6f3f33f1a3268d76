package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestServeStrings(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.Equal(t, int64(1), c.Incr(ctx, "n").Val())
	require.Equal(t, int64(11), c.IncrBy(ctx, "n", 10).Val())
	require.Equal(t, int64(9), c.DecrBy(ctx, "n", 2).Val())
	require.Equal(t, 10.5, c.IncrByFloat(ctx, "n", 1.5).Val())
	require.ErrorContains(t, c.Incr(ctx, "n").Err(), "ERR value is not an integer or out of range")
	require.NoError(t, c.Set(ctx, "max", "9223372036854775807", 0).Err())
	require.ErrorContains(t, c.Incr(ctx, "max").Err(), "ERR increment or decrement would overflow")
	require.True(t, c.SetNX(ctx, "nx", "1", 0).Val())
	require.False(t, c.SetNX(ctx, "nx", "2", 0).Val())
	require.Equal(t, "1", c.Do(ctx, "GETSET", "nx", "3").Val())
	require.Equal(t, "3", c.GetDel(ctx, "nx").Val())
	require.Equal(t, int64(5), c.Append(ctx, "ap", "hello").Val())
	require.Equal(t, int64(11), c.Append(ctx, "ap", " world").Val())
	require.Equal(t, "world", c.GetRange(ctx, "ap", -5, -1).Val())
	require.Equal(t, int64(11), c.SetRange(ctx, "ap", 6, "WORLD").Val())
	require.Equal(t, int64(11), c.StrLen(ctx, "ap").Val())
	require.Equal(t, "string", c.Type(ctx, "ap").Val())
	require.Equal(t, "none", c.Type(ctx, "nokey").Val())
	require.NoError(t, c.Rename(ctx, "ap", "ap2").Err())
	require.ErrorContains(t, c.Rename(ctx, "ap", "x").Err(), "ERR no such key")
	require.Equal(t, int64(0), c.SetBit(ctx, "b", 7, 1).Val())
	require.Equal(t, int64(1), c.GetBit(ctx, "b", 7).Val())
	// Redis's range: offsets below 2^32 (512 MiB); SETBIT past it must not
	// build the value (1<<35-1 made the server allocate 4 GiB).
	require.Equal(t, int64(0), c.GetBit(ctx, "b", 1<<32-1).Val())
	for _, off := range []int64{1 << 32, 1<<35 - 1, 1 << 35} {
		require.ErrorContains(t, c.GetBit(ctx, "b", off).Err(), "ERR bit offset is not an integer or out of range")
		require.ErrorContains(t, c.SetBit(ctx, "b", off, 1).Err(), "ERR bit offset is not an integer or out of range")
	}
	// A value over the store's limit is refused before it is built (the
	// server used to allocate it, up to 512 MiB, and let kv refuse it).
	over := "over the store's limit of"
	require.ErrorContains(t, c.SetRange(ctx, "r", 500<<20, "x").Err(), over)
	require.ErrorContains(t, c.SetBit(ctx, "r", 8*(500<<20), 1).Err(), over)
	require.ErrorContains(t, c.SetRange(ctx, "r", 600<<20, "x").Err(), "ERR string exceeds maximum allowed size")
	require.Equal(t, int64(0), c.Exists(ctx, "r").Val())
	require.Equal(t, int64(1), c.BitCount(ctx, "b", nil).Val())
	require.Equal(t, int64(7), c.BitPos(ctx, "b", 1).Val())
	require.Equal(t, int64(1), c.BitOpNot(ctx, "nb", "b").Val())
	require.ErrorIs(t, c.Do(ctx, "SET", "g", "1", "GET").Err(), redis.Nil)
	require.Equal(t, "1", c.Do(ctx, "SET", "g", "2", "NX", "GET").Val())
	require.NoError(t, c.FlushAll(ctx).Err())
	require.Equal(t, int64(0), c.DBSize(ctx).Val())
	require.NoError(t, c.Do(ctx, "FUNCTION", "FLUSH").Err())
	require.Equal(t, []any{nil}, c.Do(ctx, "COMMAND", "INFO", "nosuch").Val())
}

func TestServeMultiWatch(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	res, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "a", "1", 0)
		p.Incr(ctx, "a")
		p.Get(ctx, "a")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "2", res[2].(*redis.StringCmd).Val())
	// WATCH: a write by another client between WATCH and EXEC aborts it.
	other := newClient(t, addr, nil)
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, other.Set(ctx, "a", "changed", 0).Err())
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "a", "mine", 0)
			return nil
		})
		return err
	}, "a")
	require.ErrorIs(t, err, redis.TxFailedErr)
	require.Equal(t, "changed", c.Get(ctx, "a").Val())
	// A refused command inside MULTI aborts the EXEC.
	conn := c.Conn()
	defer conn.Close()
	require.NoError(t, conn.Do(ctx, "MULTI").Err())
	require.Error(t, conn.Do(ctx, "GET").Err())
	require.ErrorContains(t, conn.Do(ctx, "EXEC").Err(), "EXECABORT")
}

// TestServeIncrSetnxConcurrent: INCR and SETNX from many clients are
// atomic read-modify-writes: no increment lost, exactly one SETNX wins.
func TestServeIncrSetnxConcurrent(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	const clients, each = 8, 100
	var wg sync.WaitGroup
	wins := make([]int, clients)
	for g := range clients {
		wg.Go(func() {
			c := newClient(t, addr, nil)
			for i := range each {
				if err := c.Incr(ctx, "counter").Err(); err != nil {
					t.Error(err)
					return
				}
				if c.SetNX(ctx, fmt.Sprintf("lock%d", i), g, 0).Val() {
					wins[g]++
				}
			}
		})
	}
	wg.Wait()
	c := newClient(t, addr, nil)
	require.Equal(t, fmt.Sprint(clients*each), c.Get(ctx, "counter").Val())
	total := 0
	for _, w := range wins {
		total += w
	}
	require.Equal(t, each, total, "each lock key won once")
}

func TestServeHello3(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 3}))
	defer c.Close()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.Equal(t, "v", c.Get(ctx, "k").Val())
	m, err := c.Do(ctx, "HELLO", "3").Result()
	require.NoError(t, err)
	require.Equal(t, int64(3), m.(map[any]any)["proto"])
	require.Contains(t, c.ClientList(ctx).Val(), "resp=3")
	require.ErrorContains(t, c.Do(ctx, "HELLO", "4").Err(), "NOPROTO")
}

// TestServeCrossProtocol: a browser's POST runs nothing and the
// connection is dropped, with Redis's warning in the log.
func TestServeCrossProtocol(t *testing.T) {
	kvReady(t)
	addr, logs := startServeLog(t, filepath.Join(t.TempDir(), "s"))
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("POST / HTTP/1.1\r\nHost: 127.0.0.1:6380\r\nContent-Length: 13\r\n\r\nSET pwned 1\r\n"))
	require.NoError(t, err)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(conn)
	require.NoError(t, err, "the server closed the connection")
	require.Empty(t, string(got), "nothing is answered")
	c := newClient(t, addr, nil)
	require.ErrorIs(t, c.Get(context.Background(), "pwned").Err(), redis.Nil)
	require.Contains(t, logs(), "Possible SECURITY ATTACK")
}

func TestServeMetrics(t *testing.T) {
	kvReady(t)
	maddr := freeAddr(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"), "-metrics-addr", maddr)
	ctx := context.Background()
	c := newClient(t, addr, nil)
	for i := range 5 {
		require.NoError(t, c.Set(ctx, fmt.Sprint(i), "v", 0).Err())
	}
	require.NoError(t, c.Get(ctx, "1").Err())
	resp, err := http.Get("http://" + maddr + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	text := string(body)
	for _, want := range []string{
		`pmkv_commands_total{cmd="set"} 5`, `pmkv_commands_total{cmd="get"} 1`,
		`pmkv_command_duration_seconds_count{cmd="set"} 5`, "pmkv_connected_clients 1",
		"kv_keys 5", "kv_puts_total 5", "kv_fences_total", "kv_checkpoints_total", "kv_segments",
		"kv_expired_keys_total", "kv_recovery_seconds",
	} {
		require.Contains(t, text, want)
	}
	info := c.Info(ctx, "all").Val()
	for _, f := range []string{"used_memory:", "used_memory_rss:", "role:master", "tcp_port:", "uptime_in_seconds:",
		"instantaneous_ops_per_sec:", "keyspace_hits:1", "keyspace_misses:0", "expired_keys:", "used_cpu_user:",
		"mem_allocator:", "db0:keys=5,expires=0"} {
		require.Contains(t, info, f)
	}
	require.NotContains(t, info, "kv_space_amplification", "5 small keys do not fill a segment")
}

// startServeLog is startServe that also returns the server's log so far.
func startServeLog(t *testing.T, dir string) (string, func() string) {
	var mu sync.Mutex
	var b strings.Builder
	w := &lockedBuf{mu: &mu, b: &b}
	prev := serveLog
	serveLog = w
	t.Cleanup(func() { serveLog = prev })
	addr := startServe(t, dir)
	return addr, func() string { mu.Lock(); defer mu.Unlock(); return b.String() }
}
