package replica

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/kv"
)

func openKV(t *testing.T) *kv.Store {
	t.Helper()
	dir := structtest.TempShm(t)
	o := &kv.Options{Devices: []string{filepath.Join(dir, "dev0")}, CheckpointDir: filepath.Join(dir, "ckpt"),
		SegmentSize: 256 << 10, DeviceSize: 16 << 20, WorkersPerDevice: 2, PMem: true, OrderedIndex: true}
	for _, d := range append(o.Devices, o.CheckpointDir) {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	s, err := kv.Open(o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// testFSM is an fsm over a fresh store whose failures the test sees.
func testFSM(t *testing.T) (*fsm, *[]error) {
	var failed []error
	var mu sync.Mutex
	f := newFSM(openKV(t), t.TempDir(), func(err error) { mu.Lock(); failed = append(failed, err); mu.Unlock() })
	return f, &failed
}

// future is a deadline no test run reaches; past one every run is after.
const future, past = int64(1) << 50, int64(1000)

// randomLog is n entries of 1 to 5 puts (some with deadlines, some
// already past) and deletes over 40 keys, and the state they leave.
func randomLog(seed uint64, n int) ([]*raft.Log, map[string]server.Entry) {
	rng := rand.New(rand.NewPCG(seed, 1))
	want := map[string]server.Entry{}
	var logs []*raft.Log
	for i := range n {
		var ops []server.Op
		for range 1 + rng.IntN(5) {
			k := fmt.Sprintf("key%02d", rng.IntN(40))
			switch r := rng.IntN(10); {
			case r < 2:
				ops = append(ops, server.Op{Key: []byte(k), Del: true})
				delete(want, k)
			default:
				o := server.Op{Key: []byte(k), Value: fmt.Appendf(nil, "v%d-%d", i, rng.IntN(1000))}
				switch r {
				case 2:
					o.Deadline = future
				case 3:
					o.Deadline = past
				}
				ops = append(ops, o)
				if o.Deadline == past {
					delete(want, k)
				} else {
					want[k] = server.Entry{Value: o.Value, Deadline: o.Deadline}
				}
			}
		}
		logs = append(logs, &raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: encodeOps(ops)})
	}
	return logs, want
}

func contents(t *testing.T, s server.KVStore) map[string]server.Entry {
	t.Helper()
	got := map[string]server.Entry{}
	require.NoError(t, eachEntry(s, func(k []byte, e server.Entry) error {
		if e.Value == nil {
			e.Value = []byte{}
		}
		got[string(k)] = e
		return nil
	}))
	return got
}

func normal(m map[string]server.Entry) map[string]server.Entry {
	for k, e := range m {
		if e.Value == nil {
			e.Value = []byte{}
			m[k] = e
		}
	}
	return m
}

func applyAll(t *testing.T, f *fsm, logs []*raft.Log) {
	t.Helper()
	for _, l := range logs {
		require.Nil(t, f.Apply(l), "entry %d", l.Index)
	}
}

// TestFSMSnapshotWhileApplying: a snapshot persisted while the log goes
// on being applied (so its keys are from its index or later), restored
// on a store full of other keys, then the log after its index applied:
// that store equals the one that applied the whole log, and the model.
// Applying the log again from an earlier index (a restart that does not
// restore its snapshot) changes nothing.
func TestFSMSnapshotWhileApplying(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			logs, want := randomLog(seed, 400)
			a, failA := testFSM(t)
			applyAll(t, a, logs[:200])
			sn, err := a.Snapshot()
			require.NoError(t, err)
			var buf bytes.Buffer
			done := make(chan error)
			go func() { done <- sn.(*snapshot).write(&buf) }()
			applyAll(t, a, logs[200:])
			require.NoError(t, <-done)

			b, failB := testFSM(t)
			require.NoError(t, b.s.Apply(junk()))
			require.NoError(t, b.Restore(nopCloser{bytes.NewReader(buf.Bytes())}))
			_, err = os.Stat(b.marker)
			require.ErrorIs(t, err, os.ErrNotExist, "the restore marker is gone once the restore is done")
			applyAll(t, b, logs[200:])
			require.Equal(t, normal(want), contents(t, a.s), "the store that applied the whole log")
			require.Equal(t, normal(want), contents(t, b.s), "the store restored from the snapshot")

			applyAll(t, a, logs[120:])
			require.Equal(t, normal(want), contents(t, a.s), "the log applied again from index 121")
			require.Empty(t, *failA)
			require.Empty(t, *failB)
		})
	}
}

func junk() *kv.Batch {
	var b kv.Batch
	for i := range 30 {
		b.Put(fmt.Appendf(nil, "junk%d", i), []byte("x"))
		b.Put(fmt.Appendf(nil, "key%02d", i), []byte("old"))
	}
	return &b
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// A damaged snapshot is refused (ErrCorrupt), never loaded as keys: a
// flipped byte anywhere, or one cut short. Refused after it began
// loading, the node stops and the marker stays (restored again at start).
func TestFSMDamagedSnapshot(t *testing.T) {
	logs, _ := randomLog(9, 100)
	a, _ := testFSM(t)
	applyAll(t, a, logs)
	sn, err := a.Snapshot()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, sn.(*snapshot).write(&buf))
	good := buf.Bytes()
	rng := rand.New(rand.NewPCG(3, 3))
	b, fail := testFSM(t)
	for range 60 {
		bad := bytes.Clone(good)
		i := rng.IntN(len(bad))
		bad[i] ^= byte(1 + rng.IntN(255))
		if rng.IntN(4) == 0 {
			bad = bad[:i]
		}
		*fail = nil
		require.NoError(t, removeMarker(b.marker))
		err := b.Restore(nopCloser{bytes.NewReader(bad)})
		require.ErrorIs(t, err, ErrCorrupt, "byte %d of %d", i, len(good))
		if _, serr := os.Stat(b.marker); serr == nil {
			require.NotEmpty(t, *fail, "a restore refused after it began stops the node")
			require.ErrorIs(t, err, ErrStopped)
		}
	}
}

// An entry that does not decode stops the node with ErrCorrupt; one the
// store refuses as too large is refused alike everywhere (no stop).
func TestFSMBadEntries(t *testing.T) {
	f, fail := testFSM(t)
	for i, data := range [][]byte{nil, {9}, {kindOps, 5}, {kindOps, 1, 2}, {kindHello, 200}} {
		err, _ := f.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: data}).(error)
		require.ErrorIs(t, err, ErrCorrupt, "%x", data)
		require.ErrorIs(t, err, ErrStopped)
	}
	require.Len(t, *fail, 5)
	*fail = nil
	big := encodeOps([]server.Op{{Key: []byte("k"), Value: make([]byte, 2<<20)}})
	err, _ := f.Apply(&raft.Log{Index: 9, Type: raft.LogCommand, Data: big}).(error)
	require.ErrorIs(t, err, kv.ErrTooLarge)
	require.Empty(t, *fail)
	require.Nil(t, f.Apply(&raft.Log{Index: 10, Type: raft.LogCommand, Data: encodeHello("n1", "127.0.0.1:1")}))
	require.Equal(t, "127.0.0.1:1", f.member("n1"))
}

func FuzzDecodeOps(f *testing.F) {
	f.Add(encodeOps([]server.Op{{Key: []byte("a"), Value: []byte("b"), Deadline: 7}, {Key: []byte("c"), Del: true}})[1:])
	f.Fuzz(func(t *testing.T, b []byte) {
		ops, err := decodeOps(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		again, err := decodeOps(encodeOps(ops)[1:])
		require.NoError(t, err)
		require.Equal(t, ops, again, "a decoded entry encodes back to the same ops")
	})
}

func FuzzSnapshot(f *testing.F) {
	a := newFSM(memStore{}, f.TempDir(), func(error) {})
	a.members["n"] = "127.0.0.1:1"
	var buf bytes.Buffer
	require.NoError(f, (&snapshot{f: a, members: a.members}).write(&buf))
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		sr, err := newSnapReader(bytes.NewReader(b))
		for err == nil {
			var ok bool
			_, _, ok, err = sr.next()
			if !ok {
				break
			}
		}
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
		}
	})
}

// memStore is a KVStore of two keys, for the snapshot fuzz seed.
type memStore struct{}

func (memStore) GetAt(k []byte) ([]byte, int64, error) { return append([]byte("v-"), k...), 42, nil }
func (memStore) Apply(*kv.Batch) error                 { return nil }
func (memStore) Stats() kv.Stats                       { return kv.Stats{} }
func (memStore) Scan(from, _ []byte, fn func(k, v []byte) bool) error {
	for _, k := range []string{"a", "b"} {
		if string(from) <= k && !fn([]byte(k), nil) {
			break
		}
	}
	return nil
}
