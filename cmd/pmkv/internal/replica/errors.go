package replica

import (
	"errors"
	"fmt"

	"github.com/braid-pm/braid/persist"
)

var (
	// ErrCorrupt marks a log entry or snapshot that does not decode.
	ErrCorrupt = persist.NewError("replica: corrupt entry or snapshot", persist.ErrCorrupt)
	// ErrStopped is a node that stopped applying the log: an entry its
	// store could not take (full, failed), or a restore that failed.
	ErrStopped = errors.New("replica: this node stopped applying the raft log; restart it (raft replays the log from its last snapshot)")
	// ErrNotEmpty is a node started on a store that holds keys but no
	// raft state: a group starts from empty stores.
	ErrNotEmpty = persist.NewError("replica: the store holds keys but no raft state (a raft group starts from empty stores)", persist.ErrInvalid)
	// ErrInvalid is a bad Config.
	ErrInvalid = persist.NewError("replica: invalid configuration", persist.ErrInvalid)
)

// NotLeaderError is a command sent to a node that is not the leader: a
// write always, a read unless Config.StaleReads. Nothing of it ran.
type NotLeaderError struct {
	Write  bool
	Leader string // the leader's client address; "" while unknown
}

func (e *NotLeaderError) leader() string {
	if e.Leader == "" {
		return "unknown (an election is in progress)"
	}
	return e.Leader
}

func (e *NotLeaderError) Error() string {
	return "replica: not the leader; leader: " + e.leader()
}

// RESPError is the reply the server sends for it.
func (e *NotLeaderError) RESPError() string {
	if e.Write {
		return "READONLY You can't write against a read only replica. Leader: " + e.leader()
	}
	return "NOTLEADER Reads are served by the raft leader (this node runs without -raft-stale-reads). Leader: " + e.leader()
}

// replyError is an error with its own RESP reply.
type replyError struct {
	err   error
	reply string
}

func (e *replyError) Error() string          { return e.err.Error() }
func (e *replyError) Unwrap() error          { return e.err }
func (e *replyError) RESPError() string      { return e.reply }
func replyErr(err error, reply string) error { return &replyError{err: err, reply: reply} }

// errNotReady is a leader that has not yet applied the log of earlier
// terms (its hello): nothing ran.
var errNotReady = replyErr(errors.New("replica: new leader not ready"),
	"TRYAGAIN This node was just elected raft leader and is applying the log; retry")

// uncertain is a write whose entry raft may have committed or not: the
// leader lost its leadership, or shut down, before it knew.
func uncertain(err error) error {
	return replyErr(fmt.Errorf("replica: write outcome unknown: %w", err),
		"ERR replica: "+err.Error()+" before the write was known to be committed: it may or may not have been applied")
}
