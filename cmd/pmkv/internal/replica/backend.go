package replica

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/kv"
)

// Get implements server.Backend: on the leader a linearizable read (a
// quorum confirms the leadership after the read arrived, then the local
// store answers: it has applied every write acknowledged before); on a
// follower a NotLeaderError, or with StaleReads its own store's value.
func (n *Node) Get(key []byte) (server.Entry, error) {
	if err := n.readable(); err != nil {
		return server.Entry{}, err
	}
	return server.KV{S: n.cfg.Store}.Get(key)
}

// GetDeferred implements server.Deferred: Get without the quorum round,
// for a run of commands whose write, committed in this term after it,
// proves the leadership (Confirm does when it writes nothing).
func (n *Node) GetDeferred(key []byte) (server.Entry, error) {
	if err := n.Writable(); err != nil {
		return server.Entry{}, err
	}
	return server.KV{S: n.cfg.Store}.Get(key)
}

// Confirm implements server.Deferred: the check GetDeferred left out.
func (n *Node) Confirm() error { return n.readable() }

// Scan implements server.Backend, with Get's rules.
func (n *Node) Scan(from []byte, fn func(key []byte) bool) error {
	if err := n.readable(); err != nil {
		return err
	}
	return server.KV{S: n.cfg.Store}.Scan(from, fn)
}

// Stats implements server.Backend: this node's store.
func (n *Node) Stats() server.Stats { return server.KV{S: n.cfg.Store}.Stats() }

func (n *Node) readable() error {
	if p := n.failed.Load(); p != nil {
		return *p
	}
	if n.r.State() != raft.Leader {
		if n.cfg.StaleReads {
			return nil
		}
		return &NotLeaderError{Leader: n.Leader()}
	}
	if !n.isReady() {
		return errNotReady
	}
	if err := n.ver.verify(n.r); err != nil {
		return n.notLeader(false, err)
	}
	return nil
}

// notLeader maps a raft error that says nothing was done.
func (n *Node) notLeader(write bool, err error) error {
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
		errors.Is(err, raft.ErrLeadershipTransferInProgress) {
		return &NotLeaderError{Write: write, Leader: n.Leader()}
	}
	return fmt.Errorf("replica: %w", err)
}

// Apply implements server.Backend: ops go into raft entries (one, unless
// they are larger than an entry holds), applied in order; it returns once
// this node's store applied them all, so a read after it sees them. The
// server holds the keys' locks meanwhile, and read them on this node
// after every earlier write to them was applied: a read-modify-write is
// computed once, on the leader, and the log holds its result.
func (n *Node) Apply(ops []server.Op) error {
	if err := n.Writable(); err != nil {
		return err
	}
	entries, err := n.split(ops)
	if err != nil {
		return err
	}
	futures := make([]raft.ApplyFuture, len(entries))
	for i, e := range entries {
		futures[i] = n.r.Apply(e, 0)
	}
	if n.cfg.Variant == NoApplyWait {
		return nil
	}
	var first error
	refused := 0 // entries raft refused before appending them
	for _, f := range futures {
		err := f.Error()
		switch {
		case err == nil:
			if r, ok := f.Response().(error); ok && r != nil {
				err = r
			}
		case errors.Is(err, raft.ErrNotLeader):
			refused++
		default:
			err = uncertain(err)
		}
		if first == nil {
			first = err
		}
	}
	switch {
	case refused == len(futures):
		return &NotLeaderError{Write: true, Leader: n.Leader()} // nothing appended
	case refused > 0:
		return uncertain(raft.ErrLeadershipLost) // some entries appended, some not
	}
	return first
}

// split encodes ops as entries of at most n.limit bytes each.
func (n *Node) split(ops []server.Op) ([][]byte, error) {
	var out [][]byte
	start, size := 0, 1+10
	for i, o := range ops {
		s := opSize(o)
		if 1+10+s > n.limit {
			return nil, replyErr(fmt.Errorf("replica: %w: a write of %d bytes; a raft entry holds at most %d", kv.ErrTooLarge, s, n.limit),
				fmt.Sprintf("ERR string exceeds maximum allowed size (a write of key and value %d bytes; a raft entry holds at most %d: a quarter of -raft-segment, up to 4MiB)", len(o.Key)+len(o.Value), n.limit))
		}
		if size+s > n.limit {
			out = append(out, encodeOps(ops[start:i]))
			start, size = i, 1+10
		}
		size += s
	}
	if start < len(ops) || len(ops) == 0 {
		out = append(out, encodeOps(ops[start:]))
	}
	return out, nil
}

// Replication is INFO's replication section: Redis's fields (role, the
// master's host and port on a follower) and raft's.
func (n *Node) Replication() [][2]string {
	st := n.r.Stats()
	leader := n.Leader()
	var f [][2]string
	add := func(k, v string) { f = append(f, [2]string{k, v}) }
	if n.r.State() == raft.Leader {
		add("role", "master")
		peers := st["num_peers"]
		add("connected_slaves", peers)
	} else {
		add("role", "slave")
		host, port, _ := net.SplitHostPort(leader)
		add("master_host", host)
		add("master_port", port)
		link := "down"
		if leader != "" {
			link = "up"
		}
		add("master_link_status", link)
		add("slave_read_only", "1")
	}
	add("raft_id", n.cfg.ID)
	add("raft_state", n.r.State().String())
	add("raft_leader", leader)
	_, id := n.r.LeaderWithID()
	add("raft_leader_id", string(id))
	add("raft_term", st["term"])
	add("raft_last_log_index", st["last_log_index"])
	add("raft_commit_index", st["commit_index"])
	applied, restores := n.fsm.appliedIndex()
	add("raft_applied_index", strconv.FormatUint(applied, 10)) // in the store, not only sent to it
	first, _ := n.logs.FirstIndex()
	add("raft_first_log_index", strconv.FormatUint(first, 10))
	add("raft_last_snapshot_index", st["last_snapshot_index"])
	add("raft_snapshots_restored", strconv.Itoa(restores))
	ready := "0"
	if n.isReady() {
		ready = "1"
	}
	add("raft_leader_ready", ready)
	stale := "0"
	if n.cfg.StaleReads {
		stale = "1"
	}
	add("raft_stale_reads", stale)
	return f
}

// verifier shares raft.VerifyLeader between concurrent reads: a read
// waits for a round that starts after it arrived (the next one, when one
// is in flight), so one round of heartbeats answers every read waiting.
type verifier struct {
	mu      sync.Mutex
	running bool
	next    *round
}

type round struct {
	done chan struct{}
	err  error
}

func (v *verifier) verify(r *raft.Raft) error {
	v.mu.Lock()
	if v.next == nil {
		v.next = &round{done: make(chan struct{})}
	}
	rd := v.next
	if !v.running {
		v.start(r)
	}
	v.mu.Unlock()
	<-rd.done
	return rd.err
}

// start runs the next round; v.mu is held.
func (v *verifier) start(r *raft.Raft) {
	rd := v.next
	v.next, v.running = nil, true
	go func() {
		rd.err = r.VerifyLeader().Error()
		close(rd.done)
		v.mu.Lock()
		v.running = false
		if v.next != nil {
			v.start(r)
		}
		v.mu.Unlock()
	}()
}

// Writable is the refusal of a write before it reads anything: a
// NotLeaderError on a follower, TRYAGAIN on a leader not yet ready.
func (n *Node) Writable() error {
	if p := n.failed.Load(); p != nil {
		return *p
	}
	if n.r.State() != raft.Leader {
		return &NotLeaderError{Write: true, Leader: n.Leader()}
	}
	if !n.isReady() {
		return errNotReady
	}
	return nil
}
