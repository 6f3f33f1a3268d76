package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// typeAcks are what one client had acknowledged: its list's elements in
// order, its hash's fields, its set's members, its sorted set's scores.
type typeAcks struct {
	list []string
	hash map[string]string
	set  []string
	zset map[string]float64
}

// typeWriter writes its own list, hash, set and sorted set (g names
// them) until the server is gone, recording each acknowledged write.
func typeWriter(ctx context.Context, addr string, g int, total *atomic.Int64, kill func()) *typeAcks {
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1}))
	defer c.Close()
	a := &typeAcks{hash: map[string]string{}, zset: map[string]float64{}}
	k := func(kind string) string { return fmt.Sprintf("%s:%d", kind, g) }
	for i := 0; ; i++ {
		v := fmt.Sprintf("v%06d", i)
		if i%16 == 15 { // a pipeline: its pushes acknowledged one by one
			p := c.Pipeline()
			for j := range 4 {
				p.RPush(ctx, k("l"), fmt.Sprintf("%s.%d", v, j))
			}
			cmds, _ := p.Exec(ctx)
			for j, cmd := range cmds {
				if cmd.Err() != nil {
					return a
				}
				a.list = append(a.list, fmt.Sprintf("%s.%d", v, j))
			}
			continue
		}
		var err error
		switch i % 4 {
		case 0:
			if err = c.RPush(ctx, k("l"), v).Err(); err == nil {
				a.list = append(a.list, v)
			}
		case 1:
			if err = c.HSet(ctx, k("h"), "f"+v, v).Err(); err == nil {
				a.hash["f"+v] = v
			}
		case 2:
			if err = c.SAdd(ctx, k("s"), v).Err(); err == nil {
				a.set = append(a.set, v)
			}
		default:
			if err = c.ZAdd(ctx, k("z"), redis.Z{Score: float64(i), Member: v}).Err(); err == nil {
				a.zset[v] = float64(i)
			}
		}
		if err != nil {
			return a
		}
		if total.Add(1) >= 2000 {
			kill()
		}
	}
}

// SIGKILL while clients push onto lists and write hashes, sets and
// sorted sets: every acknowledged write is there after a restart, and
// the lists keep their order (an unacknowledged push may be there too).
func TestServeTypesSIGKILL(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv (the stand-in has no durability)")
	}
	dir := filepath.Join(t.TempDir(), "s")
	addr := freeAddr(t)
	args := append(append([]string{"serve"}, small(dir)...), "-addr", addr)
	srv, stderr := pmkvProcess(t, args...)
	waitListening(t, addr)
	ctx := context.Background()
	var total atomic.Int64
	var once sync.Once
	kill := func() { once.Do(func() { srv.Process.Signal(syscall.SIGKILL) }) }
	acks := make([]*typeAcks, 4)
	var wg sync.WaitGroup
	for g := range acks {
		wg.Go(func() { acks[g] = typeWriter(ctx, addr, g, &total, kill) })
	}
	wg.Wait()
	srv.Wait()
	require.GreaterOrEqual(t, total.Load(), int64(2000), stderr.String())
	srv, stderr = pmkvProcess(t, args...)
	waitListening(t, addr)
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2}))
	defer c.Close()
	for g, a := range acks {
		l := c.LRange(ctx, fmt.Sprintf("l:%d", g), 0, -1).Val()
		require.GreaterOrEqual(t, len(l), len(a.list))
		require.LessOrEqual(t, len(l), len(a.list)+4, "at most one unacknowledged write per client")
		require.Equal(t, a.list, l[:len(a.list)], "the list keeps every acknowledged push, in order")
		h := c.HGetAll(ctx, fmt.Sprintf("h:%d", g)).Val()
		for f, v := range a.hash {
			require.Equal(t, v, h[f])
		}
		require.LessOrEqual(t, len(h), len(a.hash)+1)
		s := c.SMembers(ctx, fmt.Sprintf("s:%d", g)).Val()
		require.Subset(t, s, a.set)
		require.LessOrEqual(t, len(s), len(a.set)+1)
		z := c.ZRangeWithScores(ctx, fmt.Sprintf("z:%d", g), 0, -1).Val()
		require.GreaterOrEqual(t, len(z), len(a.zset))
		require.LessOrEqual(t, len(z), len(a.zset)+1)
		for _, el := range z {
			if want, ok := a.zset[el.Member.(string)]; ok {
				require.Equal(t, want, el.Score)
			}
		}
	}
	t.Logf("%d acknowledged typed writes read back after SIGKILL", total.Load())
	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, exitCode(t, srv, stderr), stderr.String())
	// pmkv get names a typed key instead of printing its encoding.
	code, out, msg := pmkv(t, cmd("get", dir, "l:0")...)
	require.Equal(t, 1, code, out)
	require.Contains(t, msg, `key "l:0" holds a list (a pmkv serve data type), not a string`)
	mustRun(t, cmd("put", dir, "tagged", "\xff\x01\x01")...)
	require.Equal(t, "\xff\x01\x01\n", mustRun(t, cmd("get", dir, "tagged")...), "pmkv put escapes a string that begins with the tag byte")
}
