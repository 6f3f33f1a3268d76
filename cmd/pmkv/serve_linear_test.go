package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// respInput and respOutput are one operation of TestServeLinearizable.
type respInput struct{ op, key, val string }

type respOutput struct {
	val   string
	found bool
	n     int64
}

type respState struct {
	exists bool
	val    string
}

// respModel is a Redis string key under SET, GET, INCR, SETNX and DEL.
var respModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(respInput).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return respState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(respState), input.(respInput), output.(respOutput)
		switch in.op {
		case "set":
			return true, respState{true, in.val}
		case "get":
			return out.found == st.exists && (!out.found || out.val == st.val), st
		case "incr":
			n := int64(0)
			if st.exists {
				n, _ = strconv.ParseInt(st.val, 10, 64)
			}
			return out.n == n+1, respState{true, strconv.FormatInt(n+1, 10)}
		case "setnx":
			if st.exists {
				return out.n == 0, st
			}
			return out.n == 1, respState{true, in.val}
		case "del":
			if st.exists {
				return out.n == 1, respState{}
			}
			return out.n == 0, st
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(respInput), output.(respOutput)
		return fmt.Sprintf("%s(%s, %s) -> %q found=%v n=%d", in.op, in.key, in.val, out.val, out.found, out.n)
	},
}

// TestServeLinearizable: concurrent clients of pmkv serve doing SET, GET,
// INCR, SETNX and DEL on three keys (some of them pipelined, so that runs
// of commands share a batch) produce a linearizable history (porcupine).
func TestServeLinearizable(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	require.Equal(t, porcupine.Ok, linearHistory(t, addr, 6, 120, 7), "the history is not linearizable")
}

// linearHistory runs clients doing ops operations each (seeded) on the
// server at addr and checks the history with porcupine.
func linearHistory(t *testing.T, addr string, clients, ops int, seed uint64) porcupine.CheckResult {
	t.Logf("seed %d", seed)
	var mu sync.Mutex
	var hist []porcupine.Operation
	var wg sync.WaitGroup
	for id := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1, ReadTimeout: -1, WriteTimeout: -1}))
			defer c.Close()
			for range ops {
				in := respInput{key: fmt.Sprintf("k%d", rng.IntN(3)), val: strconv.Itoa(rng.IntN(100))}
				in.op = []string{"set", "get", "incr", "incr", "setnx", "del"}[rng.IntN(6)]
				call := time.Now().UnixNano()
				out, err := respDo(c, in)
				for try := 0; try < 300 && err != nil && refusal.MatchString(err.Error()); try++ {
					time.Sleep(20 * time.Millisecond) // refused, nothing ran (a raft leader not ready): again
					out, err = respDo(c, in)
				}
				ret := time.Now().UnixNano()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				hist = append(hist, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, hist, clients*ops)
	res, _ := porcupine.CheckOperationsVerbose(respModel, hist, time.Minute)
	return res
}

func respDo(c *redis.Client, in respInput) (respOutput, error) {
	ctx := context.Background()
	switch in.op {
	case "set":
		return respOutput{}, c.Set(ctx, in.key, in.val, 0).Err()
	case "get":
		v, err := c.Get(ctx, in.key).Result()
		if errors.Is(err, redis.Nil) {
			return respOutput{}, nil
		}
		return respOutput{val: v, found: true}, err
	case "incr":
		n, err := c.Incr(ctx, in.key).Result()
		return respOutput{n: n}, err
	case "setnx":
		ok, err := c.SetNX(ctx, in.key, in.val, 0).Result()
		if ok {
			return respOutput{n: 1}, err
		}
		return respOutput{}, err
	default:
		n, err := c.Del(ctx, in.key).Result()
		return respOutput{n: n}, err
	}
}
