package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/braid-pm/braid/bench/raftpeers"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// clusterResult is one store's cluster figures of one round.
type clusterResult struct {
	p50, p99, perSec    float64 // one client: µs per Apply, applies/s
	cp50, cp99, cperSec float64 // c.clients clients
	leaderUs, followUs  float64 // µs of StoreLogs per Apply (one client): leader, mean follower
}

// timed counts the time a node spends in StoreLogs.
type timed struct {
	raftpeers.Store
	ns, calls atomic.Int64
}

func (t *timed) StoreLogs(logs []*raft.Log) error {
	t0 := time.Now()
	err := t.Store.StoreLogs(logs)
	t.ns.Add(int64(time.Since(t0)))
	t.calls.Add(1)
	return err
}

func (t *timed) StoreLog(l *raft.Log) error { return t.StoreLogs([]*raft.Log{l}) }

type fsm struct{ n atomic.Uint64 }

func (f *fsm) Apply(*raft.Log) any                 { return f.n.Add(1) }
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) { return snap{}, nil }
func (f *fsm) Restore(rc io.ReadCloser) error      { return rc.Close() }

type snap struct{}

func (snap) Persist(s raft.SnapshotSink) error { return s.Close() }
func (snap) Release()                          {}

type node struct {
	r     *raft.Raft
	store *timed
	trans *raft.NetworkTransport
}

func startCluster(p raftpeers.Peer, dir string) ([]*node, error) {
	var nodes []*node
	var servers []raft.Server
	for i := range 3 {
		d := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nodes, err
		}
		s, err := p.Open(d)
		if err != nil {
			return nodes, err
		}
		trans, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 10*time.Second, io.Discard)
		if err != nil {
			s.Close()
			return nodes, err
		}
		nodes = append(nodes, &node{store: &timed{Store: s}, trans: trans})
		servers = append(servers, raft.Server{ID: raft.ServerID(fmt.Sprint(i)), Address: trans.LocalAddr()})
	}
	for i, n := range nodes {
		conf := raft.DefaultConfig()
		conf.LocalID = raft.ServerID(fmt.Sprint(i))
		conf.Logger = hclog.NewNullLogger()
		// Generous timeouts: the machine is shared, and an election in
		// the middle of a phase would measure the election.
		conf.HeartbeatTimeout, conf.ElectionTimeout = 2*time.Second, 2*time.Second
		conf.LeaderLeaseTimeout = time.Second
		conf.SnapshotThreshold = 1 << 40 // the phases measure the log, not snapshots
		r, err := raft.NewRaft(conf, &fsm{}, n.store, n.store, raft.NewInmemSnapshotStore(), n.trans)
		if err != nil {
			return nodes, err
		}
		n.r = r
	}
	if err := nodes[0].r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		return nodes, err
	}
	for range 600 {
		if nodes[0].r.State() == raft.Leader {
			return nodes, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nodes, fmt.Errorf("node 0 did not become leader in 30 s")
}

func stopCluster(nodes []*node) {
	for _, n := range nodes {
		if n.r != nil {
			n.r.Shutdown().Error()
		}
		n.trans.Close()
		n.store.Close()
	}
}

func cluster(c config, p raftpeers.Peer, dir string) (res clusterResult, err error) {
	nodes, err := startCluster(p, dir)
	defer stopCluster(nodes)
	if err != nil {
		return res, err
	}
	leader := nodes[0].r
	data := make([]byte, c.size)
	// Warm up, then one client.
	if _, _, err := phase(leader, data, 1, c.applies/10); err != nil {
		return res, err
	}
	before := make([][2]int64, 3)
	for i, n := range nodes {
		before[i] = [2]int64{n.store.ns.Load(), n.store.calls.Load()}
	}
	h, el, err := phase(leader, data, 1, c.applies)
	if err != nil {
		return res, err
	}
	res.p50, res.p99 = us(time.Duration(h.ValueAtQuantile(50))), us(time.Duration(h.ValueAtQuantile(99)))
	res.perSec = float64(c.applies) / el.Seconds()
	per := func(i int) float64 {
		return us(time.Duration(nodes[i].store.ns.Load()-before[i][0])) / float64(c.applies)
	}
	res.leaderUs, res.followUs = per(0), (per(1)+per(2))/2
	h, el, err = phase(leader, data, c.clients, c.applies)
	if err != nil {
		return res, err
	}
	res.cp50, res.cp99 = us(time.Duration(h.ValueAtQuantile(50))), us(time.Duration(h.ValueAtQuantile(99)))
	res.cperSec = float64(c.applies) / el.Seconds()
	return res, nil
}

// phase applies n commands from k goroutines and returns their latencies.
func phase(r *raft.Raft, data []byte, k, n int) (*hdrhistogram.Histogram, time.Duration, error) {
	hs := make([]*hdrhistogram.Histogram, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	t0 := time.Now()
	for g := range k {
		hs[g] = hdrhistogram.New(1, int64(30*time.Second), 3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += k {
				t := time.Now()
				if err := r.Apply(data, 10*time.Second).Error(); err != nil {
					errs[g] = fmt.Errorf("Apply %d: %w", i, err)
					return
				}
				hs[g].RecordValue(int64(time.Since(t)))
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	for g := 1; g < k; g++ {
		hs[0].Merge(hs[g])
	}
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	return hs[0], el, nil
}
