package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/cmd/pmkv/internal/replica"
)

// raftNode is one pmkv serve process of a raft group.
type raftNode struct {
	id, addr, raftAddr, dir string
	cmd                     *exec.Cmd
	stderr                  *strings.Builder
}

// raftTestFlags make snapshots and log compaction happen within the
// tests' few thousand writes.
var raftTestFlags = []string{"-raft-segment", "1MiB", "-raft-snapshot-entries", "300", "-raft-trailing", "100",
	"-raft-snapshot-interval", "100ms", "-raft-timeout", "3s"} // 3s: no election for a slow heartbeat on a loaded machine

func newRaftGroup(t *testing.T, n int) ([]*raftNode, string) {
	base := t.TempDir()
	nodes := make([]*raftNode, n)
	var peers []string
	for i := range nodes {
		nodes[i] = &raftNode{id: fmt.Sprint("n", i), addr: freeAddr(t), raftAddr: freeAddr(t), dir: filepath.Join(base, fmt.Sprint("n", i))}
		peers = append(peers, nodes[i].id+"="+nodes[i].raftAddr)
	}
	return nodes, strings.Join(peers, ",")
}

func (n *raftNode) start(t *testing.T, peers string, extra ...string) {
	t.Helper()
	args := append(append([]string{"serve"}, small(n.dir)...), "-addr", n.addr, "-raft-id", n.id, "-raft-addr", n.raftAddr, "-raft-peers", peers)
	n.cmd, n.stderr = pmkvProcess(t, append(append(args, raftTestFlags...), extra...)...)
	waitListening(t, n.addr)
}

func (n *raftNode) kill(t *testing.T) {
	require.NoError(t, n.cmd.Process.Signal(syscall.SIGKILL))
	n.cmd.Wait()
	n.cmd = nil
}

func (n *raftNode) stop(t *testing.T) {
	if n.cmd == nil {
		return
	}
	require.NoError(t, n.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, exitCode(t, n.cmd, n.stderr), "%s: %s", n.id, n.stderr)
	n.cmd = nil
}

// replInfo is a node's INFO replication fields (nil when it does not answer).
func replInfo(addr string) map[string]string {
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1}))
	defer c.Close()
	s, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitLeader polls (bounded by count) until a running node is a leader
// ready to serve, and returns it.
func waitLeader(t *testing.T, nodes []*raftNode) *raftNode {
	t.Helper()
	for range 1500 {
		for _, n := range nodes {
			if n.cmd == nil {
				continue
			}
			if m := replInfo(n.addr); m["role"] == "master" && m["raft_leader_ready"] == "1" {
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader was elected")
	return nil
}

// waitApplied polls (bounded by count) until n applied index at least.
func waitApplied(t *testing.T, n *raftNode, index int) {
	t.Helper()
	got := 0
	for range 1500 {
		got, _ = strconv.Atoi(replInfo(n.addr)["raft_applied_index"])
		if got >= index {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s applied %d, not %d", n.id, got, index)
}

// writeLog is what the writers of TestServeRaftFailover learned: keys
// acknowledged, keys refused (nothing ran: READONLY, NOTLEADER,
// TRYAGAIN) and how many SETs had another error (outcome unknown).
type writeLog struct {
	mu      sync.Mutex
	acked   map[string]string
	refused map[string]bool
	unknown int
}

func (w *writeLog) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

var refusal = regexp.MustCompile(`^(READONLY|NOTLEADER|TRYAGAIN) `)

var leaderIn = regexp.MustCompile(`Leader: (\S+:\d+)$`)

// writers SET unique keys, each starting on the node at start and moving
// as a client of a raft group does: to the leader a refusal names, else
// (a dead node) to the next of addrs. They stop when stop is closed.
func writers(addrs []string, start string, stop chan struct{}, w *writeLog) *sync.WaitGroup {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			clients := map[string]*redis.Client{}
			defer func() {
				for _, c := range clients {
					c.Close()
				}
			}()
			addr, next := start, g
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c := clients[addr]
				if c == nil {
					c = redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, PoolSize: 1}))
					clients[addr] = c
				}
				k, v := fmt.Sprintf("g%d:%06d", g, i), fmt.Sprintf("value %d of writer %d", i, g)
				err := c.Set(context.Background(), k, v, 0).Err()
				w.mu.Lock()
				switch {
				case err == nil:
					w.acked[k] = v
				case refusal.MatchString(err.Error()):
					w.refused[k] = true
				default:
					w.unknown++
				}
				w.mu.Unlock()
				switch m := leaderIn.FindStringSubmatch(fmt.Sprint(err)); {
				case err == nil:
				case m != nil:
					addr = m[1]
				default:
					next++
					addr = addrs[next%len(addrs)]
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	return &wg
}

// waitAcked polls (bounded by count) until the writers have n acks.
func waitAcked(t *testing.T, w *writeLog, n int) {
	t.Helper()
	for range 6000 {
		if w.count() >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the writers have %d acknowledged SETs, not %d", w.count(), n)
}

// checkWrites reads every acknowledged key (its value) and every refused
// one (absent) on the node at addr.
func checkWrites(t *testing.T, addr string, w *writeLog) {
	t.Helper()
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2}))
	defer c.Close()
	ctx := context.Background()
	p := c.Pipeline()
	gets := map[string]*redis.StringCmd{}
	for k := range w.acked {
		gets[k] = p.Get(ctx, k)
	}
	for k := range w.refused {
		gets[k] = p.Get(ctx, k)
	}
	p.Exec(ctx)
	for k, v := range w.acked {
		require.Equal(t, v, gets[k].Val(), "acknowledged key %s on %s: %v", k, addr, gets[k].Err())
	}
	for k := range w.refused {
		require.True(t, errors.Is(gets[k].Err(), redis.Nil), "refused key %s is on %s: %q %v", k, addr, gets[k].Val(), gets[k].Err())
	}
}

// dump is every key and value on the node at addr (KEYS, then MGET).
func dump(t *testing.T, addr string) map[string]string {
	t.Helper()
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2}))
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	m := map[string]string{}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		vals, err := c.MGet(ctx, keys[:n]...).Result()
		require.NoError(t, err)
		for i, v := range vals {
			m[keys[i]] = fmt.Sprint(v)
		}
		keys = keys[n:]
	}
	return m
}

// TestServeRaftFailover: three pmkv serve processes as a raft group on
// loopback; writers SET unique keys on the leader through go-redis. A
// follower is SIGKILLed mid-write and restarted; then the leader is
// SIGKILLed mid-write, the writers move to the new leader, and the old
// leader restarts (every node has -raft-stale-reads, to read it directly).
// Every acknowledged SET is on the new leader and on the old one once it
// caught up (by then raft compacted the log past it: it is sent a
// snapshot), no refused SET is anywhere, and the three nodes hold the
// same keys and values. Bounded by counts of
// writes; the waits only give up on a group that never gets there.
func TestServeRaftFailover(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv")
	}
	nodes, peers := newRaftGroup(t, 3)
	for _, n := range nodes {
		n.start(t, peers, "-raft-stale-reads")
	}
	defer func() {
		for _, n := range nodes {
			if n.cmd != nil {
				n.cmd.Process.Kill()
				n.cmd.Wait()
			}
		}
	}()
	lead := waitLeader(t, nodes)
	w := &writeLog{acked: map[string]string{}, refused: map[string]bool{}}
	stop := make(chan struct{})
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr)
	}
	wg := writers(addrs, lead.addr, stop, w)
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}()

	waitAcked(t, w, 400)
	var follower *raftNode
	for _, n := range nodes {
		if n != lead {
			follower = n
		}
	}
	follower.kill(t)
	waitAcked(t, w, 800)
	follower.start(t, peers, "-raft-stale-reads")
	waitAcked(t, w, 1200)

	lead.kill(t)
	before := w.count()
	next := waitLeader(t, nodes)
	waitAcked(t, w, before+800)
	close(stop)
	wg.Wait()

	lead.start(t, peers, "-raft-stale-reads")
	checkWrites(t, next.addr, w)
	li := replInfo(next.addr)
	commit, _ := strconv.Atoi(li["raft_commit_index"])
	first, _ := strconv.Atoi(li["raft_first_log_index"])
	require.Greater(t, first, 1, "the leader compacted its log (snapshots, -raft-trailing)")
	waitApplied(t, lead, commit)
	checkWrites(t, lead.addr, w)
	oi := replInfo(lead.addr)
	require.Equal(t, "slave", oi["role"], "the old leader rejoined as a follower")
	require.NotEqual(t, "0", oi["raft_snapshots_restored"], "the old leader, behind the leader's compacted log, was sent a snapshot")
	want := dump(t, next.addr)
	for _, n := range nodes {
		waitApplied(t, n, commit)
		require.Equal(t, want, dump(t, n.addr), "%s holds what the leader holds", n.id)
	}
	t.Logf("%d SETs acknowledged, %d refused, %d of unknown outcome; leader %s -> %s; commit index %d, first log index %d; %d keys on every node",
		len(w.acked), len(w.refused), w.unknown, lead.id, next.id, commit, first, len(want))
	for _, n := range nodes {
		n.stop(t)
	}
}

// TestServeRaftLinearizable: TestServeLinearizable's clients (SET, GET,
// INCR, SETNX, DEL on three keys, some pipelined) on the leader of a
// 3-node group (in this process) produce a linearizable history: the
// reads confirmed by a quorum and the read-modify-writes computed on the
// leader under its key locks, through the raft log. The variant that
// answers writes before they are applied is caught.
func TestServeRaftLinearizable(t *testing.T) {
	if !kvReady(t) {
		t.Skip("needs package kv")
	}
	for _, v := range []struct {
		name    string
		variant replica.Variant
		want    porcupine.CheckResult
	}{{"correct", replica.Correct, porcupine.Ok}, {"noApplyWait", replica.NoApplyWait, porcupine.Illegal}} {
		t.Run(v.name, func(t *testing.T) {
			raftVariant = v.variant
			defer func() { raftVariant = replica.Correct }()
			leader := startRaftGroup(t)
			require.Equal(t, v.want, linearHistory(t, leader, 6, 100, 11))
		})
	}
}

// startRaftGroup starts 3 raft nodes in this process (until the test
// ends) and returns the leader's client address.
func startRaftGroup(t *testing.T) string {
	nodes, peers := newRaftGroup(t, 3)
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, startServe(t, n.dir, append([]string{"-raft-id", n.id, "-raft-addr", n.raftAddr, "-raft-peers", peers}, raftTestFlags...)...))
	}
	for range 1500 {
		for _, a := range addrs {
			if m := replInfo(a); m["role"] == "master" && m["raft_leader_ready"] == "1" {
				return a
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader was elected")
	return ""
}
