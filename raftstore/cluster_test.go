package raftstore

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// TestCluster runs a 3-node hashicorp/raft cluster on loopback TCP, every
// node's log and stable store a raftstore file: commands applied through
// the leader, the leader stopped and its store closed, more commands
// through the new leader, then the old node restarted from its file (and
// its snapshots): it rejoins and holds every acknowledged command. Raft
// snapshots and compacts the log (DeleteRange of prefixes) throughout.
// Bounded by counts; the waits below only give up on a cluster that never
// gets there.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("a raft cluster on loopback")
	}
	dir := t.TempDir()
	nodes := make([]*testNode, 3)
	var servers []raft.Server
	for i := range nodes {
		n, err := startNode(t, dir, i, "127.0.0.1:0")
		require.NoError(t, err)
		nodes[i] = n
		servers = append(servers, raft.Server{ID: n.id, Address: n.addr})
	}
	defer func() {
		for _, n := range nodes {
			n.stop()
		}
	}()
	require.NoError(t, nodes[0].r.BootstrapCluster(raft.Configuration{Servers: servers}).Error())
	leader := waitLeader(t, nodes)
	var acked []string
	apply := func(l *testNode, k int) {
		for range k {
			cmd := fmt.Sprintf("cmd-%d", len(acked))
			require.NoError(t, l.r.Apply([]byte(cmd), 30*time.Second).Error())
			acked = append(acked, cmd)
		}
	}
	apply(leader, 150)
	old := leader
	addr := old.addr
	old.stop()
	leader = waitLeader(t, nodes)
	require.NotSame(t, old, leader)
	apply(leader, 150)
	require.NoError(t, leader.r.Barrier(30*time.Second).Error())
	require.Equal(t, acked, leader.fsm.list(), "the new leader's state")
	// A snapshot compacts the log to TrailingLogs entries (DeleteRange).
	require.NoError(t, leader.r.Snapshot().Error())
	first, err := leader.store.FirstIndex()
	require.NoError(t, err)
	require.Greater(t, first, uint64(1), "raft compacted the new leader's log")

	// The old node comes back from its files, at its address.
	i := old.index
	nodes[i], err = startNode(t, dir, i, string(addr))
	require.NoError(t, err)
	want := leader.r.AppliedIndex()
	for range 600 {
		if nodes[i].r.AppliedIndex() >= want {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.GreaterOrEqual(t, nodes[i].r.AppliedIndex(), want, "the old leader did not catch up")
	require.Equal(t, acked, nodes[i].fsm.list(), "the old leader's state after it rejoined")
}

type testNode struct {
	index int
	id    raft.ServerID
	addr  raft.ServerAddress
	r     *raft.Raft
	store *Store
	trans *raft.NetworkTransport
	fsm   *listFSM
	once  sync.Once
}

func startNode(t *testing.T, dir string, i int, bind string) (*testNode, error) {
	d := filepath.Join(dir, fmt.Sprint(i))
	s, err := Open(d+".pm", fast(&Options{Segments: 4, SegmentSize: 64 << 10, StableSize: 16 << 10}))
	if err != nil {
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStore(d, 2, io.Discard)
	if err != nil {
		s.Close()
		return nil, err
	}
	trans, err := raft.NewTCPTransport(bind, nil, 3, 10*time.Second, io.Discard)
	if err != nil {
		s.Close()
		return nil, err
	}
	n := &testNode{index: i, id: raft.ServerID(fmt.Sprint(i)), addr: trans.LocalAddr(), store: s, trans: trans, fsm: &listFSM{}}
	conf := raft.DefaultConfig()
	conf.LocalID = n.id
	conf.Logger = hclog.NewNullLogger()
	conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout = time.Second, time.Second, 500*time.Millisecond
	conf.SnapshotThreshold, conf.TrailingLogs = 64, 32
	n.r, err = raft.NewRaft(conf, n.fsm, s, s, snaps, trans)
	if err != nil {
		trans.Close()
		s.Close()
		return nil, err
	}
	return n, nil
}

func (n *testNode) stop() {
	n.once.Do(func() {
		n.r.Shutdown().Error()
		n.trans.Close()
		n.store.Close()
	})
}

func waitLeader(t *testing.T, nodes []*testNode) *testNode {
	t.Helper()
	for range 600 {
		for _, n := range nodes {
			if n.r.State() == raft.Leader {
				return n
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no leader")
	return nil
}

// listFSM keeps the commands applied, in order.
type listFSM struct {
	mu   sync.Mutex
	cmds []string
}

func (f *listFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, string(l.Data))
	return nil
}

func (f *listFSM) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) { return listSnap(f.list()), nil }

func (f *listFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var cmds []string
	if err := json.NewDecoder(rc).Decode(&cmds); err != nil {
		return err
	}
	f.mu.Lock()
	f.cmds = cmds
	f.mu.Unlock()
	return nil
}

type listSnap []string

func (s listSnap) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode([]string(s)); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (listSnap) Release() {}
