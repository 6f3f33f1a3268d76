package main

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"github.com/spf13/pflag"

	"github.com/braid-pm/braid/cmd/pmkv/internal/replica"
	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/kv"
	"github.com/braid-pm/braid/persist"
)

// raftFlags run serve as a member of a hashicorp/raft group.
type raftFlags struct {
	id, addr, peers, dir string
	staleReads           bool
	segment              byteSize
	threshold, trailing  uint64
	interval, timeout    time.Duration
}

func (r *raftFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.id, "raft-id", "", "replicate: this node's raft ID (off when empty)")
	fs.StringVar(&r.addr, "raft-addr", "127.0.0.1:7380", "the raft transport's address (unauthenticated: keep it on a private network)")
	fs.StringVar(&r.peers, "raft-peers", "", "every voter as ID=HOST:PORT (raft addresses), comma-separated: a new group's members")
	fs.StringVar(&r.dir, "raft-dir", "", "raft's log, snapshots and state (default DIR/raft)")
	fs.BoolVar(&r.staleReads, "raft-stale-reads", false, "a follower answers reads from its own store (stale); else it refuses them")
	r.segment = 32 << 20
	fs.Var(&r.segment, "raft-segment", "raft log segment size, for a new log (an entry holds a quarter, up to 4MiB)")
	fs.Uint64Var(&r.threshold, "raft-snapshot-entries", 4096, "snapshot after this many new log entries")
	fs.Uint64Var(&r.trailing, "raft-trailing", 4096, "log entries kept after a snapshot (for followers that lag)")
	fs.DurationVar(&r.interval, "raft-snapshot-interval", 10*time.Second, "how often raft checks -raft-snapshot-entries")
	fs.DurationVar(&r.timeout, "raft-timeout", time.Second, "raft's heartbeat and election timeout")
}

func (r *raftFlags) on() bool { return r.id != "" }

// config checks the flags and makes the node's configuration.
func (r *raftFlags) config(sf *storeFlags) (replica.Config, error) {
	cfg := replica.Config{ID: r.id, RaftAddr: r.addr, Dir: r.dir, StaleReads: r.staleReads, LogSegment: int(r.segment),
		SnapshotThreshold: r.threshold, TrailingLogs: r.trailing, SnapshotInterval: r.interval, Timeouts: r.timeout}
	if _, _, err := net.SplitHostPort(r.addr); err != nil {
		return cfg, usagef("-raft-addr %q: %v (want HOST:PORT)", r.addr, err)
	}
	if cfg.Dir == "" {
		if sf.dir == "" {
			return cfg, usagef("-raft-id with -devices needs -raft-dir")
		}
		cfg.Dir = filepath.Join(sf.dir, "raft")
	}
	if r.peers != "" {
		for _, p := range strings.Split(r.peers, ",") {
			id, addr, ok := strings.Cut(strings.TrimSpace(p), "=")
			if _, _, err := net.SplitHostPort(addr); !ok || id == "" || err != nil {
				return cfg, usagef("-raft-peers: %q: want ID=HOST:PORT", p)
			}
			cfg.Peers = append(cfg.Peers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(id), Address: raft.ServerAddress(addr)})
		}
	}
	switch {
	case r.segment < 64<<10:
		return cfg, usagef("-raft-segment %d: want at least 64KiB", r.segment)
	case r.threshold < 1 || r.trailing < 1:
		return cfg, usagef("-raft-snapshot-entries and -raft-trailing: want at least 1")
	case r.interval <= 0 || r.timeout <= 0:
		return cfg, usagef("-raft-snapshot-interval and -raft-timeout must be positive")
	}
	return cfg, nil
}

// raftVariant, when set, makes serve's raft nodes a broken variant (tests).
var raftVariant replica.Variant

// start joins the group over the open store s; the Backend replaces kv's.
func (r *raftFlags) start(cfg replica.Config, s server.KVStore, o *kv.Options, ln net.Listener, stderr io.Writer) (*replica.Node, error) {
	cfg.Store, cfg.ClientAddr, cfg.Log = s, ln.Addr().String(), stderr
	cfg.Region = &persist.Options{ForcePMem: o.PMem}
	cfg.Variant = raftVariant
	n, err := replica.Start(cfg)
	if err != nil {
		return nil, fmt.Errorf("raft: %w", err)
	}
	return n, nil
}
