package replica

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/raftstore"
)

// Config is a node's settings.
type Config struct {
	ID         string        // this node's raft server ID
	RaftAddr   string        // the raft transport's address (HOST:PORT)
	ClientAddr string        // the Redis address clients are redirected to
	Peers      []raft.Server // every voter, this node too: bootstraps a new group
	Dir        string        // raft's state: raft.pm, snapshots, the restore marker
	Store      server.KVStore
	// StaleReads serves reads on a follower from its own store (they may
	// miss the latest writes); without it a follower refuses reads.
	StaleReads bool
	// LogSegment is raftstore's segment size for a new log (0: its
	// default); an entry holds at most a quarter of it, up to 4 MiB.
	LogSegment int
	// Region maps raftstore's file (ForcePMem...); nil: persist's default.
	Region *persist.Options
	// SnapshotThreshold and TrailingLogs are raft's (0: 4096 each);
	// SnapshotInterval how often raft checks the threshold (0: 10s).
	SnapshotThreshold, TrailingLogs uint64
	SnapshotInterval                time.Duration
	// Timeouts are raft's heartbeat and election timeouts (0: 1s).
	Timeouts time.Duration
	Log      io.Writer // raft's warnings and errors (nil: discarded)
	Variant  Variant   // tests: a broken node (variant.go)
}

// Node is one member of the raft group: raft, its log on braid, and the
// replicated Backend the RESP server runs on.
type Node struct {
	cfg    Config
	r      *raft.Raft
	fsm    *fsm
	logs   *raftstore.Store
	trans  *raft.NetworkTransport
	notify chan bool
	done   chan struct{}
	wg     sync.WaitGroup
	ver    verifier
	limit  int // the most bytes of one entry

	mu     sync.Mutex
	term   uint64 // leadership generation: bumped at every change
	ready  bool   // leader, and its hello of this generation applied
	failed atomic.Pointer[error]
	closed sync.Once
}

// Start opens the raft state in cfg.Dir (made when missing) and joins
// the group; a new state with cfg.Peers bootstraps it (safe on every
// node given the same peers).
func Start(cfg Config) (n *Node, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	path := filepath.Join(cfg.Dir, "raft.pm")
	_, statErr := os.Stat(path)
	fresh := errors.Is(statErr, os.ErrNotExist)
	if fresh {
		if err := mustBeEmpty(cfg.Store); err != nil {
			return nil, err
		}
	}
	n = &Node{cfg: cfg, notify: make(chan bool, 16), done: make(chan struct{})}
	n.fsm = newFSM(cfg.Store, cfg.Dir, n.stop)
	o := &raftstore.Options{Region: cfg.Region}
	if fresh {
		o.SegmentSize = cfg.LogSegment
	}
	if n.logs, err = raftstore.Open(path, o); err != nil {
		return nil, fmt.Errorf("replica: raft log %s: %w", path, err)
	}
	n.limit = n.logs.MaxData() - entrySlack
	defer func() {
		if err != nil {
			n.release()
		}
	}()
	if err := n.startRaft(); err != nil {
		return nil, err
	}
	n.wg.Add(1)
	go n.watch()
	if fresh && len(cfg.Peers) > 0 {
		err := n.r.BootstrapCluster(raft.Configuration{Servers: cfg.Peers}).Error()
		if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return nil, fmt.Errorf("replica: bootstrap: %w", err)
		}
	}
	return n, nil
}

func (cfg *Config) check() error {
	switch {
	case cfg.ID == "":
		return fmt.Errorf("%w: no raft ID", ErrInvalid)
	case cfg.RaftAddr == "":
		return fmt.Errorf("%w: no raft address", ErrInvalid)
	case cfg.Dir == "":
		return fmt.Errorf("%w: no raft directory", ErrInvalid)
	case cfg.Store == nil:
		return fmt.Errorf("%w: no store", ErrInvalid)
	}
	if len(cfg.Peers) > 0 {
		self := false
		for _, p := range cfg.Peers {
			self = self || string(p.ID) == cfg.ID
		}
		if !self {
			return fmt.Errorf("%w: the peers %v do not include this node's ID %q", ErrInvalid, cfg.Peers, cfg.ID)
		}
	}
	return nil
}

// entrySlack is room left in a raft entry below raftstore's limit.
const entrySlack = 64

// mustBeEmpty refuses a store holding a key.
func mustBeEmpty(s server.KVStore) error {
	any := false
	err := s.Scan(nil, nil, func(_, _ []byte) bool { any = true; return false })
	if err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if any {
		return ErrNotEmpty
	}
	return nil
}

func (n *Node) startRaft() error {
	cfg := n.cfg
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	snaps, err := raft.NewFileSnapshotStore(cfg.Dir, 2, logw)
	if err != nil {
		return fmt.Errorf("replica: snapshots: %w", err)
	}
	if n.trans, err = raft.NewTCPTransport(cfg.RaftAddr, nil, 3, 10*time.Second, logw); err != nil {
		return fmt.Errorf("replica: raft address %s: %w", cfg.RaftAddr, err)
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(cfg.ID)
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: logw})
	conf.NotifyCh = n.notify
	conf.SnapshotThreshold, conf.TrailingLogs, conf.SnapshotInterval = 4096, 4096, 10*time.Second
	if cfg.SnapshotThreshold > 0 {
		conf.SnapshotThreshold = cfg.SnapshotThreshold
	}
	if cfg.TrailingLogs > 0 {
		conf.TrailingLogs = cfg.TrailingLogs
	}
	if cfg.SnapshotInterval > 0 {
		conf.SnapshotInterval = cfg.SnapshotInterval
	}
	if cfg.Timeouts > 0 {
		conf.HeartbeatTimeout, conf.ElectionTimeout = cfg.Timeouts, cfg.Timeouts
		conf.LeaderLeaseTimeout = cfg.Timeouts / 2
	}
	// The store keeps what it applied: restoring the snapshot at every
	// start would rewrite it. Only a restore cut by a crash is redone.
	_, err = os.Stat(n.fsm.marker)
	conf.NoSnapshotRestoreOnStart = errors.Is(err, os.ErrNotExist)
	if n.r, err = raft.NewRaft(conf, n.fsm, n.logs, n.logs, snaps, n.trans); err != nil {
		return fmt.Errorf("replica: raft: %w", err)
	}
	if !conf.NoSnapshotRestoreOnStart {
		if err := removeMarker(n.fsm.marker); err != nil {
			return fmt.Errorf("replica: %w", err)
		}
	}
	return nil
}

// watch follows leadership: a new leader applies a hello (its client
// address, for the followers' redirects) and serves once it is applied:
// by then every entry of earlier terms is applied too.
func (n *Node) watch() {
	defer n.wg.Done()
	for {
		select {
		case <-n.done:
			return
		case leader := <-n.notify:
			n.mu.Lock()
			n.term++
			gen := n.term
			n.ready = false
			n.mu.Unlock()
			if leader {
				n.wg.Add(1)
				go n.hello(gen)
			}
		}
	}
}

func (n *Node) hello(gen uint64) {
	defer n.wg.Done()
	f := n.r.Apply(encodeHello(n.cfg.ID, n.cfg.ClientAddr), 0)
	if f.Error() != nil || f.Response() != nil {
		return // leadership lost (a new notification follows) or the node stopped
	}
	n.mu.Lock()
	n.ready = n.term == gen
	n.mu.Unlock()
}

func (n *Node) isReady() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ready
}

// stop is an entry the store could not take: the node stops applying.
func (n *Node) stop(err error) {
	if n.failed.CompareAndSwap(nil, &err) {
		if n.cfg.Log != nil {
			fmt.Fprintf(n.cfg.Log, "pmkv serve: %v\n", err)
		}
		go n.r.Shutdown() // not from raft's FSM goroutine, which Shutdown waits for
	}
}

// Close leaves the group (raft stops; the others elect a leader if this
// one was) and closes the raft log; the kv store is the caller's.
func (n *Node) Close() error {
	var err error
	n.closed.Do(func() {
		err = n.r.Shutdown().Error()
		close(n.done)
		n.wg.Wait()
		n.release()
	})
	return err
}

func (n *Node) release() {
	if n.trans != nil {
		n.trans.Close()
	}
	if n.logs != nil {
		n.logs.Close()
	}
}

// Raft is the node's raft (tests, INFO).
func (n *Node) Raft() *raft.Raft { return n.r }

// Leader is the leader's client address, "" while unknown.
func (n *Node) Leader() string {
	_, id := n.r.LeaderWithID()
	if id == "" {
		return ""
	}
	return n.fsm.member(string(id))
}

var _ server.Backend = (*Node)(nil)
