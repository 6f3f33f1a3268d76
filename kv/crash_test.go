package kv

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// The crash tests run a store on simulated segments: 2 devices, one
// worker each, segments of 4 KiB, and a workload of puts, deletes and
// batches with a checkpoint and a GC pass in the middle. After every
// crash the check recovers and requires each key to hold its last
// acknowledged value or an in-flight one, Check to pass, and a new put to
// win over everything recovered.
const (
	crashDevs    = 2
	crashSegs    = 7
	crashSegSize = 4096
)

func crashConfig(seed uint64, images int) crash.Config {
	// Bounded for make test's budget (persist/crash's defaults cover
	// every unit alone and every pair on paths of up to 200 units): with
	// ~80-word batches every pair at each path would multiply these
	// tests' images by 15, every unit alone by 6. The report's coverage
	// line says what was left out.
	cfg := crash.Config{Seed: seed, MaxImages: images, Pairs: 16, MaxAlone: images}
	for d := range crashDevs {
		for j := range crashSegs {
			cfg.Regions = append(cfg.Regions, crash.Spec{Name: segRegion(d, j), Size: crashSegSize})
		}
	}
	return cfg
}

func crashOptions(region func(string) *persist.Region, fs *memDir, b broken) *Options {
	return fakeNUMA(&Options{
		SegmentSize: crashSegSize, WorkersPerDevice: 1, GCThreshold: -1, Shards: 4, MergeLogs: b.mergeLogs, WorkerReads: b.workers, DedicatedWorkers: b.workers,
		media:  &simMedia{devs: crashDevs, segs: crashSegs, region: region, fs: fs},
		broken: b,
	}, crashDevs)
}

type crashOp struct {
	kind int // 0 put, 1 delete, 2 batch, 3 checkpoint, 4 gc
	keys []string
	vals []string
}

// crashOps is the workload's script: over 10 keys, values of 150-200 bytes
// (so that segments fill and GC has garbage to clean).
func crashOps(seed uint64, n int) []crashOp {
	rnd := structtest.NewRand(seed)
	val := func(i int) string {
		b := make([]byte, 150+rnd.Intn(50))
		for j := range b {
			b[j] = byte('a' + (i+j)%26)
		}
		return fmt.Sprintf("%d:%s", i, b)
	}
	ops := []crashOp{{kind: 0, keys: []string{"k0"}, vals: []string{"first"}}}
	for i := 1; i < n; i++ {
		key := func() string { return fmt.Sprintf("k%d", rnd.Intn(10)) }
		switch {
		case i == n/3:
			ops = append(ops, crashOp{kind: 3})
		case i == 3*n/4:
			ops = append(ops, crashOp{kind: 4})
		case rnd.Intn(10) < 7:
			ops = append(ops, crashOp{kind: 0, keys: []string{key()}, vals: []string{val(i)}})
		case rnd.Intn(2) == 0:
			ops = append(ops, crashOp{kind: 1, keys: []string{key()}, vals: []string{""}})
		default:
			op := crashOp{kind: 2}
			for j := range 3 {
				op.keys = append(op.keys, key())
				if rnd.Intn(4) == 0 {
					op.vals = append(op.vals, "")
				} else {
					op.vals = append(op.vals, val(i*10+j))
				}
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// crashModel is what the workload acknowledged: the value of each key ("":
// deleted or never written) and the operation in flight.
type crashModel struct {
	mu       sync.Mutex // the check runs in a worker's fence (ackBeforeFence's gate keeps the workload waiting then)
	acked    map[string]string
	inflight *crashOp
	flying   map[int]*crashOp // the concurrent tests' clients' operations in flight (crashconc_test.go)
	workers  int              // WorkersPerDevice when not 1 (crashconc_test.go)
	fs       *memDir          // the workload's disk
	disk     *memDir          // the disk of the machine a crash image is taken of
	segSize  int64            // 0: crashSegSize (the poison tests' are larger)
}

func crashWorkload(ops []crashOp, b broken, m *crashModel) func(*crash.Run) error {
	return func(w *crash.Run) error {
		m.mu.Lock()
		m.acked, m.inflight = map[string]string{}, nil
		m.mu.Unlock()
		m.fs = newMemDir()
		m.fs.onWrite = func(name string) { w.Crash("wrote " + name) }
		m.disk = m.fs
		o := crashOptions(w.Region, m.fs, b)
		if m.segSize != 0 {
			o.SegmentSize = m.segSize
		}
		if b.ackBeforeFence {
			o.ackGate = newAckGate()
		}
		s, err := Open(o)
		if err != nil {
			return err
		}
		for i := range ops {
			op := &ops[i]
			m.mu.Lock()
			m.inflight = op
			m.mu.Unlock()
			var rep GCReport
			rep, err = runCrashOp(s, op)
			if op.kind == 4 && err == nil && rep.Cleaned == 0 && !b.any() {
				err = fmt.Errorf("the GC pass cleaned nothing: %+v", rep)
			}
			if err == nil {
				m.mu.Lock()
				for j, k := range op.keys {
					m.acked[k] = op.vals[j]
				}
				m.inflight = nil
				m.mu.Unlock()
				w.Durable(fmt.Sprintf("op %d", i))
			}
			if o.ackGate != nil && op.kind <= 2 {
				o.ackGate.step() // the early-acknowledged batch is written and fenced now
			}
			if err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
		}
		return s.Close()
	}
}

func (b broken) any() bool {
	return b != broken{mergeLogs: b.mergeLogs, workers: b.workers, unfencedMax: b.unfencedMax}
}

func crashCheck(b broken, m *crashModel) func(*crash.Image) error {
	return func(img *crash.Image) error {
		// A crash inside this check's recovery is an image of this
		// check's machine: its disk is this one.
		parent := m.disk
		fs := parent.clone()
		m.disk = fs
		defer func() { m.disk = parent }()
		o := crashOptions(img.Region, fs, b)
		o.WorkersPerDevice = max(o.WorkersPerDevice, m.workers)
		s, err := Open(o)
		if err != nil {
			return fmt.Errorf("recovery: %w", err)
		}
		defer s.Close()
		m.mu.Lock()
		acked, inflight := maps.Clone(m.acked), m.inflight
		flying := slices.Collect(maps.Values(m.flying))
		m.mu.Unlock()
		for i := range 10 {
			k := fmt.Sprintf("k%d", i)
			allowed := map[string]bool{acked[k]: true}
			for _, op := range append(flying, inflight) {
				if op == nil {
					continue
				}
				for j, ik := range op.keys {
					if ik == k {
						allowed[op.vals[j]] = true
					}
				}
			}
			if img.InRecovery() && k == "k0" {
				allowed["probe"] = true
			}
			v, err := s.Get([]byte(k))
			if errors.Is(err, ErrNotFound) {
				v, err = []byte(""), nil
			}
			if err != nil {
				return fmt.Errorf("get %s: %w", k, err)
			}
			if !allowed[string(v)] {
				return fmt.Errorf("key %s recovered as %q, acknowledged %q (in flight: %v)", k, v, acked[k], inflight)
			}
		}
		if err := s.Check(); err != nil {
			return err
		}
		// A put after recovery must win over everything recovered.
		if err := s.Put([]byte("k0"), []byte("probe")); err != nil {
			return fmt.Errorf("put after recovery: %w", err)
		}
		v, err := s.Get([]byte("k0"))
		if err != nil || string(v) != "probe" {
			return fmt.Errorf("after recovery, put k0=probe then get gives %q, %v", v, err)
		}
		return nil
	}
}

func TestCrash(t *testing.T) {
	// Each data path (pathVariants) with the direct index (the default)
	// and with merge logs; the direct index also with batches fenced
	// every 2 metadata entries (the bound on what a torn batch leaves past
	// a log's end, made small enough for its batches to reach it).
	for _, v := range pathVariants {
		for _, merge := range []bool{false, true} {
			seed := uint64(1)
			if merge {
				seed = 2
			}
			t.Run(fmt.Sprintf("%s/%d", v.name, seed), func(t *testing.T) {
				ops := crashOps(seed, 60)
				m := &crashModel{}
				b := broken{mergeLogs: merge, workers: v.workers}
				if !merge {
					b.unfencedMax = 3 * entrySize
				}
				rep := crash.Test(t, crashConfig(seed, 16), crashWorkload(ops, b, m), crashCheck(b, m))
				t.Logf("%v", rep)
			})
		}
	}
}

func TestCrashBroken(t *testing.T) {
	for _, v := range pathVariants {
		for name, b := range map[string]broken{
			"ack before fence":          {ackBeforeFence: true},
			"no value checksum":         {noValueCRC: true},
			"free before switch":        {freeBeforeSwitch: true},
			"serial counter not kept":   {noSerialRestore: true},
			"every entry a batch start": {everyBatchStart: true},
		} {
			b.workers = v.workers
			t.Run(v.name+"/"+name, func(t *testing.T) {
				ops := crashOps(1, 60)
				m := &crashModel{}
				rep, err := crash.Check(crashConfig(1, 32), crashWorkload(ops, b, m), crashCheck(b, m))
				require.NoError(t, err)
				require.True(t, rep.Failed(), "the simulator did not catch %q", name)
				t.Logf("caught: %s", rep.Failures[0].Summary())
				if b.ackBeforeFence {
					// The early acknowledgment is ordered against the
					// workload (ackGate): a second run finds the same
					// failures (the workload's closure is named after the
					// call that made it).
					again, err := crash.Check(crashConfig(1, 32), crashWorkload(ops, b, m), crashCheck(b, m))
					require.NoError(t, err)
					require.Equal(t, len(rep.Failures), len(again.Failures))
					unnamed := regexp.MustCompile(`crashWorkload[.0-9]*`)
					require.Equal(t, unnamed.ReplaceAllString(rep.Failures[0].Summary(), ""), unnamed.ReplaceAllString(again.Failures[0].Summary(), ""))
				}
			})
		}
	}
}

// runCrashOp runs one operation of a crash workload on s (the GC report
// for kind 4).
func runCrashOp(s *Store, op *crashOp) (GCReport, error) {
	switch op.kind {
	case 0:
		return GCReport{}, s.Put([]byte(op.keys[0]), []byte(op.vals[0]))
	case 1:
		return GCReport{}, s.Delete([]byte(op.keys[0]))
	case 2:
		var bt Batch
		for j, k := range op.keys {
			if op.vals[j] == "" {
				bt.Delete([]byte(k))
			} else {
				bt.Put([]byte(k), []byte(op.vals[j]))
			}
		}
		return GCReport{}, s.Apply(&bt)
	case 3:
		return GCReport{}, s.Checkpoint()
	case 4:
		return s.GC()
	}
	return GCReport{}, nil
}
