package main

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestServeTTLSIGKILL: deadlines are durable. A key set with EX 1 is gone
// once its deadline passed, also when the server was SIGKILLed and
// restarted in between; a TTL set before a SIGKILL is there after it.
func TestServeTTLSIGKILL(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv (the stand-in has no durability)")
	}
	dir := filepath.Join(t.TempDir(), "s")
	addr := freeAddr(t)
	args := append(append([]string{"serve"}, small(dir)...), "-addr", addr)
	srv, _ := pmkvProcess(t, args...)
	waitListening(t, addr)
	ctx := context.Background()
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2}))
	require.NoError(t, c.Set(ctx, "short", "v", time.Second).Err())
	require.NoError(t, c.Set(ctx, "long", "v", 0).Err())
	require.True(t, c.Expire(ctx, "long", time.Hour).Val())
	require.NoError(t, c.Do(ctx, "SET", "px", "v", "PX", "3600000").Err())
	require.NoError(t, c.Set(ctx, "kept", "v", 0).Err())
	shortAt := c.PExpireTime(ctx, "short").Val()
	longAt := c.PExpireTime(ctx, "long").Val()
	require.Positive(t, int64(shortAt))
	c.Close()
	require.NoError(t, srv.Process.Signal(syscall.SIGKILL))
	srv.Wait()

	srv, stderr := pmkvProcess(t, args...)
	waitListening(t, addr)
	c = redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2}))
	defer c.Close()
	require.Equal(t, longAt, c.PExpireTime(ctx, "long").Val(), "the deadline survived the kill")
	require.Positive(t, c.TTL(ctx, "px").Val())
	require.Equal(t, time.Duration(-1), c.TTL(ctx, "kept").Val(), "no deadline stays none")
	if wait := time.Until(time.UnixMilli(shortAt.Milliseconds() + 1)); wait > 0 {
		time.Sleep(wait) // until the wall clock is past the deadline
	}
	require.ErrorIs(t, c.Get(ctx, "short").Err(), redis.Nil, "gone after its deadline")
	require.Equal(t, time.Duration(-2), c.TTL(ctx, "short").Val())
	require.Equal(t, "v", c.Get(ctx, "long").Val())
	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, exitCode(t, srv, stderr), stderr.String())
}
