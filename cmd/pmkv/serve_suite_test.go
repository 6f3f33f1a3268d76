package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// respLine reads one RESP line (without CRLF).
func respLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSuffix(s, "\r\n")
}

// respBulk reads a bulk string's payload after its "$n" line.
func respBulk(t *testing.T, r *bufio.Reader, head string) []byte {
	t.Helper()
	require.True(t, strings.HasPrefix(head, "$"), "want a bulk string, got %q", head)
	n, err := strconv.Atoi(head[1:])
	require.NoError(t, err)
	b := make([]byte, n+2)
	_, err = io.ReadFull(r, b)
	require.NoError(t, err)
	return b[:n]
}

// replCommand reads one command of a replication stream as "arg arg ...".
func replCommand(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	head := respLine(t, r)
	require.True(t, strings.HasPrefix(head, "*"), "want an array, got %q", head)
	n, err := strconv.Atoi(head[1:])
	require.NoError(t, err)
	args := make([]string, n)
	for i := range args {
		args[i] = string(respBulk(t, r, respLine(t, r)))
	}
	return strings.Join(args, " ")
}

// TestServeSyncStream attaches to the replication stream with SYNC, as
// Redis's tests do, and checks what each write propagates: the command
// as given, or its absolute form (SET ... PXAT, PEXPIREAT, DEL for a
// deadline in the past, SET ... KEEPTTL for INCRBYFLOAT), nothing for a
// command that changed nothing, and a MULTI of several writes wrapped in
// MULTI/EXEC (of one write, not).
func TestServeSyncStream(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.NoError(t, c.Set(ctx, "before", "x", 0).Err())

	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("SYNC\r\n"))
	require.NoError(t, err)
	r := bufio.NewReader(nc)
	head := respLine(t, r) // the snapshot: "$n", n bytes, no CRLF (as Redis)
	n, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
	require.NoError(t, err, head)
	rdb := make([]byte, n)
	_, err = io.ReadFull(r, rdb)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(rdb), "REDIS0010"), "snapshot %q", rdb)
	require.Equal(t, "SELECT 0", replCommand(t, r))
	require.Contains(t, c.Info(ctx, "replication").Val(), "connected_slaves:1\r\n")

	now := time.Now().UnixMilli()
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Set(ctx, "b", "2", 100*time.Second).Err())
	require.NoError(t, c.Expire(ctx, "a", 50*time.Second).Err())
	require.NoError(t, c.Get(ctx, "a").Err())                         // a read: nothing
	require.Equal(t, int64(0), c.Del(ctx, "nosuch").Val())            // no effect: nothing
	require.NoError(t, c.IncrByFloat(ctx, "f", 1.5).Err())            // SET f 1.5 KEEPTTL
	require.NoError(t, c.Do(ctx, "EXPIREAT", "b", now/1000-10).Err()) // in the past: DEL b
	require.NoError(t, c.GetEx(ctx, "a", 0).Err())                    // plain GETEX: nothing
	require.NoError(t, c.Do(ctx, "GETEX", "a", "PERSIST").Err())      // PERSIST a
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {       // two writes: MULTI ... EXEC
		p.Set(ctx, "m1", "x", 0)
		p.Get(ctx, "m1")
		p.Incr(ctx, "m2")
		return nil
	})
	require.NoError(t, err)
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error { // one write: no MULTI
		p.Del(ctx, "m1")
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, c.FlushAll(ctx).Err())

	pxat := func(s string) int64 {
		f := strings.Fields(s)
		ms, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		require.NoError(t, err, s)
		return ms
	}
	require.Equal(t, "set a 1", replCommand(t, r)) // as the client sent it
	s := replCommand(t, r)
	require.True(t, strings.HasPrefix(s, "SET b 2 PXAT "), s)
	require.InDelta(t, now+100_000, pxat(s), 60_000)
	s = replCommand(t, r)
	require.True(t, strings.HasPrefix(s, "PEXPIREAT a "), s)
	require.InDelta(t, now+50_000, pxat(s), 60_000)
	require.Equal(t, "SET f 1.5 KEEPTTL", replCommand(t, r))
	require.Equal(t, "DEL b", replCommand(t, r))
	require.Equal(t, "PERSIST a", replCommand(t, r))
	for _, want := range []string{"MULTI", "set m1 x", "incr m2", "EXEC", "del m1", "flushall"} {
		require.Equal(t, want, replCommand(t, r))
	}
}

// TestServeSetrangeHuge: an offset near 2^63 is refused with Redis's
// error (its end overflowed int64 and crashed the server).
func TestServeSetrangeHuge(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	for _, off := range []int64{9223372036854775807, 2147483647} {
		err := c.SetRange(ctx, "K", off, "A").Err()
		require.ErrorContains(t, err, "string exceeds maximum allowed size", fmt.Sprint(off))
	}
	require.Equal(t, "PONG", c.Ping(ctx).Val())
}
