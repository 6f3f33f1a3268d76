package ycsb

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// memDB is an in-memory engine for the driver's tests: a map, and a sorted
// copy of its keys for scans.
type memDB struct {
	mu     sync.RWMutex
	m      map[string][]byte
	sorted []string
	// broken variants
	dropEvery int64 // acknowledge but lose every n-th put
	stale     bool  // keep returning the first version
	puts      atomic.Int64
}

func newMemDB() *memDB { return &memDB{m: map[string][]byte{}} }

func (d *memDB) Put(key, value []byte) error {
	if d.dropEvery > 0 && d.puts.Add(1)%d.dropEvery == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.m[string(key)]; ok && d.stale {
		return nil
	}
	if _, ok := d.m[string(key)]; !ok {
		d.sorted = nil
	}
	d.m[string(key)] = slices.Clone(value)
	return nil
}

func (d *memDB) Get(key []byte) ([]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	v, ok := d.m[string(key)]
	if !ok {
		return nil, fmt.Errorf("mem: %q: %w", key, ErrNotFound)
	}
	return v, nil
}

func (d *memDB) Delete(key []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m, string(key))
	d.sorted = nil
	return nil
}

func (d *memDB) Scan(from []byte, n int, fn func(key, value []byte) bool) error {
	d.mu.Lock()
	if d.sorted == nil {
		for k := range d.m {
			d.sorted = append(d.sorted, k)
		}
		slices.Sort(d.sorted)
	}
	i, _ := slices.BinarySearch(d.sorted, string(from))
	var keys []string
	for ; i < len(d.sorted) && len(keys) < n; i++ {
		keys = append(keys, d.sorted[i])
	}
	vals := make([][]byte, len(keys))
	for j, k := range keys {
		vals[j] = d.m[k]
	}
	d.mu.Unlock()
	for j, k := range keys {
		if !fn([]byte(k), vals[j]) {
			break
		}
	}
	return nil
}

func (d *memDB) Close() error { return nil }

func benchCfg(clients int) Config {
	return Config{Records: 1000, ValueSize: 100, Clients: clients, Verify: true, Seed: 42}
}

// Every core workload runs over a correct engine with every read judged
// correct, each operation type of its mix reported.
func TestRunCoreWorkloads(t *testing.T) {
	db := newMemDB()
	b, err := New(db, benchCfg(4))
	require.NoError(t, err)
	res, err := b.Load(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(1000), res.Operations)
	require.Len(t, db.m, 1000)
	require.Equal(t, "INSERT", res.Ops[0].Op)
	for _, w := range append(slices.Clone(Core), Workload{Name: "U", Read: 0.5, Update: 0.5, Distribution: DistUniform}) {
		res, err := b.Run(context.Background(), w, Run{Operations: 2000})
		require.NoError(t, err, w.Name)
		require.Equal(t, int64(2000), res.Operations, w.Name)
		require.True(t, res.Verify.AllCorrect(), "%s: %+v", w.Name, *res.Verify)
		require.Positive(t, res.Verify.Correct, w.Name)
		ops := map[string]int64{}
		for _, o := range res.Ops {
			ops[o.Op] = o.Count
			require.Positive(t, o.P50Us, "%s %s", w.Name, o.Op)
			require.LessOrEqual(t, o.P50Us, o.P99Us)
			require.LessOrEqual(t, o.P99Us, o.P999Us)
			require.LessOrEqual(t, o.P999Us, o.MaxUs*1.001)
		}
		for op, p := range map[string]float64{"READ": w.Read, "UPDATE": w.Update, "INSERT": w.Insert, "SCAN": w.Scan, "READ-MODIFY-WRITE": w.RMW} {
			if p > 0 {
				require.Positive(t, ops[op], "%s %s", w.Name, op)
			}
		}
		if w.RMW > 0 {
			require.Equal(t, ops["READ-MODIFY-WRITE"], ops["UPDATE"], "F's updates are its read-modify-writes'")
		}
		t.Logf("%s: %v", w.Name, ops)
	}
	// D and E inserted keys after the loaded ones, and every one exists.
	require.Greater(t, int64(len(db.m)), int64(1000))
	require.Equal(t, int64(len(db.m))-1, b.inserts.Last())
	var buf bytes.Buffer
	tb := NewTable(&buf)
	tb.Add(Info{Engine: "mem", Durability: "none", Device: "DRAM"}, res)
	require.NoError(t, tb.Flush())
	require.Contains(t, buf.String(), "INSERT")
	require.Contains(t, buf.String(), "none")
}

// Deliberately broken engines are caught by -verify: lost acknowledged
// updates (stale reads) are wrong, lost inserts missing.
func TestVerifyCatchesBrokenEngines(t *testing.T) {
	a, _ := Lookup("a")
	for _, c := range []struct {
		name string
		db   *memDB
		want func(v Verify) bool
	}{
		{"drops every 7th put", &memDB{m: map[string][]byte{}, dropEvery: 7}, func(v Verify) bool { return v.Missing > 0 && v.Wrong > 0 }},
		{"keeps the first version", &memDB{m: map[string][]byte{}, stale: true}, func(v Verify) bool { return v.Wrong > 0 && v.Missing == 0 }},
	} {
		b, err := New(c.db, benchCfg(2))
		require.NoError(t, err)
		_, err = b.Load(context.Background())
		require.NoError(t, err)
		res, err := b.Run(context.Background(), a, Run{Operations: 4000})
		require.NoError(t, err)
		t.Logf("%s: %+v", c.name, *res.Verify)
		require.True(t, c.want(*res.Verify), "%s: %+v", c.name, *res.Verify)
	}
}

// An engine error stops the phase and is returned with the operation and
// key; a cancelled context stops it too, with the partial result.
func TestRunStops(t *testing.T) {
	b, err := New(&failing{}, benchCfg(3))
	require.NoError(t, err)
	_, err = b.Load(context.Background())
	require.ErrorContains(t, err, "INSERT user")
	require.ErrorContains(t, err, "device full")

	ctx, cancel := context.WithCancel(context.Background())
	db := newMemDB()
	cfg := benchCfg(2)
	cfg.Records = 1 << 20
	n := 0
	cfg.Progress = func(done, total int64) {
		n++
		require.Equal(t, int64(1<<20), total)
		cancel()
	}
	b, err = New(db, cfg)
	require.NoError(t, err)
	res, err := b.Load(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, res.Interrupted)
	require.Less(t, res.Operations, int64(1<<20))
	require.Positive(t, n)
	_, err = b.Run(context.Background(), Core[0], Run{Operations: 10})
	require.ErrorContains(t, err, "Run before Load")
}

type failing struct{ memDB }

func (*failing) Put(key, value []byte) error { return fmt.Errorf("failing: device full") }

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		msg string
	}{
		{Config{Records: 0, ValueSize: 100, Clients: 1}, "0 records"},
		{Config{Records: 10, ValueSize: 8, Clients: 1}, "at least 16"},
		{Config{Records: 10, ValueSize: 100, Clients: 0}, "0 clients"},
		{Config{Records: 10, ValueSize: 100, Clients: 1, Keys: KeyFormat{ZeroPadding: 30}}, "zero padding"},
	} {
		_, err := New(newMemDB(), c.cfg)
		require.ErrorContains(t, err, c.msg)
	}
	b, err := New(newMemDB(), benchCfg(1))
	require.NoError(t, err)
	_, err = b.Load(context.Background())
	require.NoError(t, err)
	_, err = b.Run(context.Background(), Core[0], Run{})
	require.ErrorContains(t, err, "want an operation count")
	require.True(t, strings.HasPrefix(Header, "engine"))
}
