package replica

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/kv"
)

// fsm is raft's state machine: the kv store. Every entry is a set of
// blind puts and deletes with absolute deadlines, computed by the leader
// (see doc.go), so applying it is deterministic and applying it again
// changes nothing: a node restarts without restoring its snapshot and
// raft replays the log from the snapshot's index over what the store
// already holds.
type fsm struct {
	s      server.KVStore
	marker string // exists while a Restore has not finished
	fail   func(error)

	mu       sync.Mutex
	members  map[string]string // raft ID -> client address, from hellos
	applied  uint64            // the last index applied
	restores int               // snapshots restored since start
}

func newFSM(s server.KVStore, dir string, fail func(error)) *fsm {
	return &fsm{s: s, marker: filepath.Join(dir, restoreMarker), fail: fail, members: map[string]string{}}
}

// restoreMarker is the file that says the store is in the middle of a
// snapshot's restore: at start, raft then restores the snapshot again.
const restoreMarker = "restoring"

// Apply implements raft.FSM. Its result is nil or the error of the
// entry's write; an error that is not the entry's own fault (the store
// full, failed or closed) also stops this node (fail): raft would apply
// the next entries over a store that missed this one.
func (f *fsm) Apply(l *raft.Log) any {
	defer func() {
		f.mu.Lock()
		f.applied = l.Index
		f.mu.Unlock()
	}()
	if l.Type != raft.LogCommand {
		return nil
	}
	if len(l.Data) == 0 {
		return f.stop(fmt.Errorf("%w: empty entry at index %d", ErrCorrupt, l.Index))
	}
	switch l.Data[0] {
	case kindOps:
		ops, err := decodeOps(l.Data[1:])
		if err != nil {
			return f.stop(fmt.Errorf("entry %d: %w", l.Index, err))
		}
		err = server.KV{S: f.s}.Apply(ops)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kv.ErrTooLarge), errors.Is(err, kv.ErrInvalid):
			return err // refused on every node alike (the same store flags)
		}
		return f.stop(fmt.Errorf("entry %d: %w", l.Index, err))
	case kindHello:
		id, addr, err := decodeHello(l.Data[1:])
		if err != nil {
			return f.stop(fmt.Errorf("entry %d: %w", l.Index, err))
		}
		f.mu.Lock()
		f.members[id] = addr
		f.mu.Unlock()
		return nil
	}
	return f.stop(fmt.Errorf("%w: entry %d of kind %d", ErrCorrupt, l.Index, l.Data[0]))
}

func (f *fsm) stop(err error) error {
	err = fmt.Errorf("%w: %w", ErrStopped, err)
	f.fail(err)
	return err
}

func (f *fsm) member(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.members[id]
}

func (f *fsm) appliedIndex() (applied uint64, restores int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied, f.restores
}

// Snapshot implements raft.FSM: the keys are read by Persist, while the
// log goes on (snapshot.go says why that is exact).
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &snapshot{f: f, members: maps.Clone(f.members)}, nil
}

// Restore implements raft.FSM: the store becomes the snapshot's keys.
// The marker file stands from before the first write to after the last,
// so that a crash in between restores again at the next start.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	sr, err := newSnapReader(rc)
	if err != nil {
		return fmt.Errorf("replica: restore: %w", err)
	}
	if err := writeMarker(f.marker); err != nil {
		return fmt.Errorf("replica: restore: %w", err)
	}
	if err := f.load(sr); err != nil {
		return f.stop(fmt.Errorf("restore: %w", err))
	}
	f.mu.Lock()
	f.members = sr.members
	f.restores++
	f.mu.Unlock()
	if err := removeMarker(f.marker); err != nil {
		return fmt.Errorf("replica: restore: %w", err)
	}
	return nil
}

// restoreBatch bounds the bytes of one Apply of a restore.
const restoreBatch = 1 << 20

// load deletes every key of the store, then puts the snapshot's.
func (f *fsm) load(sr *snapReader) error {
	var ops []server.Op
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := server.KV{S: f.s}.Apply(ops)
		ops, size = ops[:0], 0
		return err
	}
	add := func(o server.Op) error {
		ops = append(ops, o)
		if size += len(o.Key) + len(o.Value) + 32; size >= restoreBatch || len(ops) >= scanChunk {
			return flush()
		}
		return nil
	}
	err := eachEntry(f.s, func(k []byte, _ server.Entry) error { return add(server.Op{Key: k, Del: true}) })
	if err == nil {
		err = flush()
	}
	for err == nil {
		k, e, ok, nerr := sr.next()
		if nerr != nil || !ok {
			err = nerr
			break
		}
		err = add(server.Op{Key: k, Value: e.Value, Deadline: e.Deadline})
	}
	if err != nil {
		return err
	}
	return flush()
}

func writeMarker(path string) error {
	fd, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fd.Sync(); err != nil {
		fd.Close()
		return err
	}
	if err := fd.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func removeMarker(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
