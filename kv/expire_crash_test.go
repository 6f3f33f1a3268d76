package kv

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// The expiry crash tests run the crash tests' store (crash_test.go) with
// a clock that stands still at t0 and a workload of 40 puts with deadlines
// (future, none, past), Expire, Persist, deletes, batches, expirer rounds,
// a checkpoint and a GC pass. After every crash the check recovers and
// requires each key to hold its last acknowledged value and deadline, or
// those of the operation in flight, an expired key to stay gone, Check to
// pass and a new put with a deadline to win.

type ttlCrashOp struct {
	kind int // 0 put, 1 expire, 2 persist, 3 delete, 4 batch, 5 expirer round, 6 checkpoint, 7 gc
	keys []string
	vals []string
	dls  []int64
}

const ttlCrashKeys = 8

func ttlCrashOps(seed uint64, n int) []ttlCrashOp {
	rnd := structtest.NewRand(seed)
	val := func(i int) string {
		b := make([]byte, 150+rnd.Intn(50))
		for j := range b {
			b[j] = byte('a' + (i+j)%26)
		}
		return fmt.Sprintf("%d:%s", i, b)
	}
	key := func() string { return fmt.Sprintf("k%d", rnd.Intn(ttlCrashKeys)) }
	dl := func(i int) int64 {
		switch rnd.Intn(5) {
		case 0:
			return 0
		case 1:
			return t0 - 1 - int64(i) // past: the put is never seen
		}
		return t0 + int64(time.Hour/time.Millisecond) + int64(i)
	}
	var ops []ttlCrashOp
	for i := range n {
		switch r := rnd.Intn(20); {
		case i == n/3:
			ops = append(ops, ttlCrashOp{kind: 6})
		case i == 3*n/4:
			ops = append(ops, ttlCrashOp{kind: 7})
		case r < 9:
			ops = append(ops, ttlCrashOp{kind: 0, keys: []string{key()}, vals: []string{val(i)}, dls: []int64{dl(i)}})
		case r < 11:
			d := dl(i)
			if d == 0 {
				d = t0 + 7
			}
			ops = append(ops, ttlCrashOp{kind: 1, keys: []string{key()}, dls: []int64{d}})
		case r < 13:
			ops = append(ops, ttlCrashOp{kind: 2, keys: []string{key()}})
		case r < 14:
			ops = append(ops, ttlCrashOp{kind: 3, keys: []string{key()}})
		case r < 17:
			op := ttlCrashOp{kind: 4}
			for j := range 3 {
				op.keys = append(op.keys, key())
				op.vals = append(op.vals, val(i*10+j))
				op.dls = append(op.dls, dl(i*10+j))
			}
			ops = append(ops, op)
		default:
			ops = append(ops, ttlCrashOp{kind: 5})
		}
	}
	return ops
}

// ttlState is what a key holds: "" absent (or expired: the clock stands
// at t0).
type ttlState = ttlVal

func ttlLive(v string, dl int64) ttlState {
	if dl != 0 && dl < t0 {
		return ttlState{}
	}
	return ttlState{v, dl}
}

// ttlEffect is what op does to the keys of state: each key's states after
// each of the op's operations on it (a batch is not atomic: a crash may
// keep any of its operations), the last one its final state.
func ttlEffect(op *ttlCrashOp, state map[string]ttlState) map[string][]ttlState {
	out := map[string][]ttlState{}
	for j, k := range op.keys {
		cur := state[k]
		if prev := out[k]; len(prev) > 0 {
			cur = prev[len(prev)-1]
		}
		switch op.kind {
		case 0, 4:
			cur = ttlLive(op.vals[j], op.dls[j])
		case 1:
			if cur.v != "" {
				cur = ttlLive(cur.v, op.dls[j])
			}
		case 2:
			cur.dl = 0
		case 3:
			cur = ttlState{}
		}
		out[k] = append(out[k], cur)
	}
	return out
}

type ttlCrashModel struct {
	mu       sync.Mutex
	acked    map[string]ttlState
	inflight map[string][]ttlState // the in-flight operation's effect
	fs, disk *memDir
}

func ttlCrashOptions(region func(string) *persist.Region, fs *memDir, b broken) *Options {
	b.oneWriter = true
	o := crashOptions(region, fs, b)
	o.Clock = func() time.Time { return time.UnixMilli(t0) }
	o.ExpireInterval = -1
	return o
}

func ttlCrashWorkload(ops []ttlCrashOp, b broken, m *ttlCrashModel) func(*crash.Run) error {
	return func(w *crash.Run) error {
		m.mu.Lock()
		m.acked, m.inflight = map[string]ttlState{}, nil
		m.mu.Unlock()
		m.fs = newMemDir()
		m.fs.onWrite = func(name string) { w.Crash("wrote " + name) }
		m.disk = m.fs
		s, err := Open(ttlCrashOptions(w.Region, m.fs, b))
		if err != nil {
			return err
		}
		for i := range ops {
			op := &ops[i]
			m.mu.Lock()
			eff := ttlEffect(op, m.acked)
			m.inflight = eff
			m.mu.Unlock()
			k := ""
			if len(op.keys) > 0 {
				k = op.keys[0]
			}
			switch op.kind {
			case 0:
				err = s.PutAt([]byte(k), []byte(op.vals[0]), op.dls[0])
			case 1:
				_, err = s.Expire([]byte(k), op.dls[0])
			case 2:
				_, err = s.Persist([]byte(k))
			case 3:
				err = s.Delete([]byte(k))
			case 4:
				var bt Batch
				for j, k := range op.keys {
					bt.PutAt([]byte(k), []byte(op.vals[j]), op.dls[j])
				}
				err = s.Apply(&bt)
			case 5:
				_, err = s.expireAll()
			case 6:
				err = s.Checkpoint()
			case 7:
				_, err = s.GC()
			}
			if err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
			m.mu.Lock()
			for k, sts := range eff {
				m.acked[k] = sts[len(sts)-1]
			}
			m.inflight = nil
			m.mu.Unlock()
			w.Durable(fmt.Sprintf("op %d", i))
		}
		return s.Close()
	}
}

func ttlCrashCheck(b broken, m *ttlCrashModel) func(*crash.Image) error {
	return func(img *crash.Image) error {
		parent := m.disk
		fs := parent.clone()
		m.disk = fs
		defer func() { m.disk = parent }()
		s, err := Open(ttlCrashOptions(img.Region, fs, b))
		if err != nil {
			return fmt.Errorf("recovery: %w", err)
		}
		defer s.Close()
		m.mu.Lock()
		acked, inflight := maps.Clone(m.acked), maps.Clone(m.inflight)
		m.mu.Unlock()
		for i := range ttlCrashKeys {
			k := fmt.Sprintf("k%d", i)
			allowed := []ttlState{acked[k]}
			allowed = append(allowed, inflight[k]...)
			if img.InRecovery() && k == "k0" {
				allowed = append(allowed, ttlState{"probe", t0 + 1})
			}
			v, dl, err := s.GetAt([]byte(k))
			if errors.Is(err, ErrNotFound) {
				v, dl, err = nil, 0, nil
			}
			if err != nil {
				return fmt.Errorf("get %s: %w", k, err)
			}
			got := ttlState{string(v), dl}
			found := false
			for _, a := range allowed {
				found = found || a == got
			}
			if !found {
				return fmt.Errorf("key %s recovered as %.12q deadline %d, acknowledged %.12q deadline %d (in flight: %v)",
					k, got.v, got.dl, acked[k].v, acked[k].dl, inflight[k])
			}
		}
		if err := s.Check(); err != nil {
			return err
		}
		if err := s.PutAt([]byte("k0"), []byte("probe"), t0+1); err != nil {
			return fmt.Errorf("put after recovery: %w", err)
		}
		v, dl, err := s.GetAt([]byte("k0"))
		if err != nil || string(v) != "probe" || dl != t0+1 {
			return fmt.Errorf("after recovery, put k0=probe (deadline %d) then get gives %q, %d, %v", t0+1, v, dl, err)
		}
		return nil
	}
}

func TestExpireCrash(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ops := ttlCrashOps(seed, 40)
			m := &ttlCrashModel{}
			b := broken{mergeLogs: seed == 2}
			crash.Test(t, crashConfig(seed, 16), ttlCrashWorkload(ops, b, m), ttlCrashCheck(b, m))
		})
	}
}

// TestExpireCrashBroken: a record whose CRC leaves its deadline out lets a
// torn deadline through as a wrong one; the crash tests catch it.
func TestExpireCrashBroken(t *testing.T) {
	b := broken{noDeadlineCRC: true}
	ops := ttlCrashOps(1, 40)
	m := &ttlCrashModel{}
	rep, err := crash.Check(crashConfig(1, 32), ttlCrashWorkload(ops, b, m), ttlCrashCheck(b, m))
	require.NoError(t, err)
	require.True(t, rep.Failed(), "the simulator did not catch a deadline outside the record's CRC")
	t.Logf("caught: %s", rep.Failures[0].Summary())
}
