package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/braid-pm/braid/persist/crash"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// Crash tests: a seeded workload of StoreLogs, prefix and suffix
// DeleteRange and Set on a small store; at every fence the simulator
// builds crash images, OpenRegion recovers each, and the check demands
// what doc.go promises: the acknowledged log, with the operation in
// flight done, undone or (StoreLogs: a prefix of the batch; a suffix
// deletion: cut anywhere from min on) partly done, and each stable key
// its acknowledged or its new value.

var crashGeometry = Options{Segments: 3, SegmentSize: 4 << 10, StableSize: 4 << 10}

const probeTerm = 999 // the entry the check appends after recovering

type crashOp struct {
	kind     int // 0 StoreLogs, 1 prefix, 2 suffix, 3 Set
	logs     []*raft.Log
	max, min uint64
	key, val []byte
}

type crashModel struct {
	created  bool
	acked    []*raft.Log
	kv       map[string][]byte
	inflight *crashOp
}

// ops is the workload's seeded sequence, decided from the model as it
// goes (op plans the next operation on the acknowledged state).
func (h *crashModel) op(rng *rand.Rand, term *uint64) *crashOp {
	n := len(h.acked)
	last := uint64(0)
	if n > 0 {
		last = h.acked[n-1].Index
	}
	switch k := rng.IntN(10); {
	case k < 5 || n == 0:
		var ls []*raft.Log
		for i := range 1 + rng.IntN(4) {
			l := entry(last+1+uint64(i), *term)
			l.Data = bytes.Repeat([]byte{byte(l.Index)}, 8+rng.IntN(60))
			ls = append(ls, l)
		}
		return &crashOp{kind: 0, logs: ls}
	case k < 7:
		return &crashOp{kind: 1, max: h.acked[rng.IntN(n)].Index}
	case k < 8:
		*term++
		return &crashOp{kind: 2, min: h.acked[rng.IntN(n)].Index}
	}
	key := []byte([]string{"CurrentTerm", "LastVoteTerm", "LastVoteCand"}[rng.IntN(3)])
	return &crashOp{kind: 3, key: key, val: bytes.Repeat([]byte{byte(rng.Uint32())}, 1+rng.IntN(200))}
}

func (h *crashModel) apply(s *Store, o *crashOp) error {
	switch o.kind {
	case 0:
		return s.StoreLogs(o.logs)
	case 1:
		return s.DeleteRange(h.acked[0].Index, o.max)
	case 2:
		return s.DeleteRange(o.min, h.acked[len(h.acked)-1].Index)
	}
	return s.Set(o.key, o.val)
}

func (h *crashModel) acknowledge(o *crashOp) {
	switch o.kind {
	case 0:
		h.acked = append(h.acked, o.logs...)
	case 1:
		for len(h.acked) > 0 && h.acked[0].Index <= o.max {
			h.acked = h.acked[1:]
		}
	case 2:
		for len(h.acked) > 0 && h.acked[len(h.acked)-1].Index >= o.min {
			h.acked = h.acked[:len(h.acked)-1]
		}
	case 3:
		h.kv[string(o.key)] = o.val
	}
}

func (h *crashModel) workload(seed uint64, ops int, v variant) func(*crash.Run) error {
	return func(w *crash.Run) error {
		*h = crashModel{kv: map[string][]byte{}}
		rng := rand.New(rand.NewPCG(seed, 7))
		o := crashGeometry
		o.variant = v
		s, err := Create(w.Region("r"), &o)
		if err != nil {
			return err
		}
		h.created = true
		term := uint64(1)
		for range ops {
			op := h.op(rng, &term)
			h.inflight = op
			if err := h.apply(s, op); err != nil {
				return err
			}
			h.acknowledge(op)
			h.inflight = nil
		}
		return s.Close()
	}
}

// readAll returns the store's log, checking that it is one run of
// indexes.
func readAll(s *Store) ([]*raft.Log, error) {
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if first == 0 {
		return nil, nil
	}
	var ls []*raft.Log
	for i := first; i <= last; i++ {
		l := new(raft.Log)
		if err := s.GetLog(i, l); err != nil {
			return nil, fmt.Errorf("GetLog(%d) of the log %d..%d: %w", i, first, last, err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func sameLogs(a, b []*raft.Log) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Index != b[i].Index || a[i].Term != b[i].Term || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func describe(ls []*raft.Log) string {
	if len(ls) == 0 {
		return "empty"
	}
	return fmt.Sprintf("%d..%d (%d entries)", ls[0].Index, ls[len(ls)-1].Index, len(ls))
}

// logAllowed says whether got is a log the crash may leave.
func (h *crashModel) logAllowed(got []*raft.Log) bool {
	acked := h.acked
	if sameLogs(got, acked) {
		return true
	}
	o := h.inflight
	switch {
	case o == nil:
		return false
	case o.kind == 0:
		for k := 1; k <= len(o.logs); k++ {
			if sameLogs(got, append(append([]*raft.Log(nil), acked...), o.logs[:k]...)) {
				return true
			}
		}
	case o.kind == 1:
		k := 0
		for k < len(acked) && acked[k].Index <= o.max {
			k++
		}
		return sameLogs(got, acked[k:])
	case o.kind == 2 && o.min <= acked[0].Index:
		return len(got) == 0 // DeleteRange from the first: a prefix deletion of everything
	case o.kind == 2:
		return len(got) <= len(acked) && len(got) > 0 && got[len(got)-1].Index >= o.min-1 && sameLogs(got, acked[:len(got)])
	}
	return false
}

func (h *crashModel) check(img *crash.Image) error {
	s, err := OpenRegion(img.Region("r"), nil)
	if err != nil {
		if !h.created {
			return nil
		}
		return fmt.Errorf("open after Create returned: %w", err)
	}
	// Not closed: Close records the logs' tails (fences that would be
	// recovery crash points, five logs' worth per image), and the image's
	// region goes away with the claims when the check returns.
	got, err := readAll(s)
	if err != nil {
		return err
	}
	if img.InRecovery() && len(got) > 0 && got[len(got)-1].Term == probeTerm {
		got = got[:len(got)-1] // the probe below, appended in the first check
	}
	if !h.logAllowed(got) {
		return fmt.Errorf("the log is %s, acknowledged %s, in flight %+v", describe(got), describe(h.acked), h.inflight)
	}
	for _, k := range []string{"CurrentTerm", "LastVoteTerm", "LastVoteCand"} {
		v, err := s.Get([]byte(k))
		if errors.Is(err, ErrKeyNotFound) {
			v = nil
		} else if err != nil {
			return err
		}
		o := h.inflight
		if !bytes.Equal(v, h.kv[k]) && (o == nil || o.kind != 3 || string(o.key) != k || !bytes.Equal(v, o.val)) {
			return fmt.Errorf("stable key %s is %x, acknowledged %x", k, v, h.kv[k])
		}
	}
	// The recovered store takes appends (and this append's fences are
	// crash points of the images that crash again in recovery).
	last, _ := s.LastIndex()
	if img.InRecovery() {
		return nil
	}
	return s.StoreLog(&raft.Log{Index: last + 1, Term: probeTerm, Data: []byte("probe")})
}

func crashConfig(seed uint64) crash.Config {
	return crash.Config{
		Regions:   []crash.Spec{{Name: "r", Size: 24 << 10, Garbage: true}},
		Seed:      seed,
		MaxImages: 24,
		Pairs:     16,
		MaxAlone:  16,
	}
}

func TestCrash(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var h crashModel
			crash.Test(t, crashConfig(seed), h.workload(seed, 70, 0), h.check)
		})
	}
}

// TestCrashBroken: each broken variant is caught.
func TestCrashBroken(t *testing.T) {
	for _, v := range []struct {
		name string
		v    variant
	}{
		{"volatile-floor", variantVolatileFloor},
		{"truncate-first", variantTruncateFirst},
		{"flip-first", variantFlipFirst},
	} {
		t.Run(v.name, func(t *testing.T) {
			var h crashModel
			// A small budget per crash point: each variant is caught
			// in the first images of the crash point that breaks it.
			cfg := crashConfig(1)
			cfg.MaxImages, cfg.MaxAlone, cfg.Pairs, cfg.RecoveryCrashes = 4, 4, -1, -1
			rep, err := crash.Check(cfg, h.workload(1, 200, v.v), h.check)
			require.NoError(t, err)
			require.True(t, rep.Failed(), "the broken variant %s was not caught", v.name)
			t.Logf("caught: %s", rep.Failures[0].Summary())
		})
	}
}
