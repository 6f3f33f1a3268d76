package fam

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// Crash tests: a workload creates an array and updates its objects; at
// every fence (and at the end) the simulator builds crash images in which
// any subset of the written, not yet durable 8-byte words reached the media
// (word-atomic model), recovers each image with Open, and the check demands
// that every object is its last acknowledged value or the value of the
// update in flight, never a mix. Some images also crash again inside the
// recovery (and inside a first update after it).

// history is what the workload has acknowledged, read by the check while
// the workload is paused at a crash point.
type history struct {
	size     int
	n        int
	created  bool
	acked    [][]byte // last acknowledged value per object (nil: zeros)
	inflight int      // object being updated, or -1
	next     []byte   // its new value
}

func newHistory(size, n int) *history {
	return &history{size: size, n: n, acked: make([][]byte, n), inflight: -1}
}

func (h *history) value(op int) []byte {
	v := make([]byte, h.size)
	for i := range v {
		// Mixes top bits (meta FAMBs) and low bits in every word.
		v[i] = byte(op*37+i*11) ^ byte(0x80*((op+i)&1))
	}
	return v
}

// workload runs ops updates round-robin over the objects of an array made
// by create and updated by update.
func (h *history) workload(ops int, create func(*persist.Region) (func(int, []byte) error, error)) func(*crash.Run) error {
	return func(w *crash.Run) error {
		h.created, h.inflight = false, -1
		clear(h.acked)
		update, err := create(w.Region("r"))
		if err != nil {
			return err
		}
		h.created = true
		w.Durable("create")
		for op := range ops {
			i := (op * 7) % h.n
			h.inflight, h.next = i, h.value(op)
			if err := update(i, h.next); err != nil {
				return err
			}
			h.acked[i], h.inflight = h.next, -1
			w.Durable("update")
		}
		return nil
	}
}

// verify checks one recovered object value.
func (h *history) verify(i int, got []byte) error {
	want := h.acked[i]
	if want == nil {
		want = make([]byte, h.size)
	}
	if bytes.Equal(got, want) {
		return nil
	}
	if h.inflight == i && bytes.Equal(got, h.next) {
		return nil
	}
	if h.inflight == i {
		return fmt.Errorf("object %d is %x: neither the old value %x nor the new %x", i, got, want, h.next)
	}
	return fmt.Errorf("object %d is %x, want %x (not being updated)", i, got, want)
}

// after is the value check writes into object 0 after recovery.
var after = bytes.Repeat([]byte{0xa5}, MaxSize)

// check opens a crash image with open, reads every object with read, and
// verifies them; then it updates object 0 once more and reads it back, to
// show the recovered array is usable (its fence is a crash point for the
// crash-during-recovery images too).
func (h *history) check(open func(*persist.Region) (read func(int, []byte) error, update func(int, []byte) error, err error)) func(*crash.Image) error {
	after := after[:h.size]
	return func(img *crash.Image) error {
		read, update, err := open(img.Region("r"))
		if !h.created {
			// Nothing promised yet; but an array that opens must be all zeros.
			if err != nil {
				return nil
			}
		} else if err != nil {
			return fmt.Errorf("open after the array was created: %w", err)
		}
		got := make([]byte, h.size)
		for i := range h.n {
			if err := read(i, got); err != nil {
				return fmt.Errorf("read object %d: %w", i, err)
			}
			if i == 0 && img.InRecovery() && bytes.Equal(got, after) {
				continue // the crash hit the update below, in the first check
			}
			if !h.created {
				if !bytes.Equal(got, make([]byte, h.size)) {
					return fmt.Errorf("unfinished Create: object %d is %x", i, got)
				}
				continue
			}
			if err := h.verify(i, got); err != nil {
				return err
			}
		}
		if update == nil {
			return nil
		}
		v := after
		if err := update(0, v); err != nil {
			return fmt.Errorf("update after recovery: %w", err)
		}
		if err := read(0, got); err != nil || !bytes.Equal(got, v) {
			return fmt.Errorf("read after recovery and update: %x, %v", got, err)
		}
		return nil
	}
}

func famCreate(size, n int) func(*persist.Region) (func(int, []byte) error, error) {
	return func(r *persist.Region) (func(int, []byte) error, error) {
		a, err := Create(r, &Options{ObjectSize: size, Count: n})
		if err != nil {
			return nil, err
		}
		return a.Update, nil
	}
}

func famOpen(r *persist.Region) (func(int, []byte) error, func(int, []byte) error, error) {
	a, err := Open(r, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := a.Check(); err != nil {
		return nil, nil, err
	}
	// Recovery is idempotent: a second Open finds nothing to do.
	if err := a.Close(); err != nil {
		return nil, nil, err
	}
	b, err := Open(r, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("second open: %w", err)
	}
	if b.Recovered() != 0 {
		return nil, nil, fmt.Errorf("second open rolled back %d objects", b.Recovered())
	}
	return b.Read, b.Update, nil
}

// famOpenNoVersions is the broken FAM: recovery ignores the versions (no
// rollback) and reads decode the new fields whatever their version.
func famOpenNoVersions(r *persist.Region) (func(int, []byte) error, func(int, []byte) error, error) {
	a, err := open(r, 0, false)
	if err != nil {
		return nil, nil, err
	}
	read := func(i int, dst []byte) error {
		mem, o, err := a.object(i)
		if err != nil {
			return err
		}
		decode(a.blocksAt(mem, o), dst)
		return nil
	}
	return read, nil, nil
}

func logCreate(size, n int, opts *LogOptions) func(*persist.Region) (func(int, []byte) error, error) {
	return func(r *persist.Region) (func(int, []byte) error, error) {
		a, err := CreateLog(r, &LogOptions{ObjectSize: size, Count: n, Lanes: opts.Lanes, LaneBytes: opts.LaneBytes})
		if err != nil {
			return nil, err
		}
		return a.Update, nil
	}
}

func logOpen(r *persist.Region) (func(int, []byte) error, func(int, []byte) error, error) {
	a, err := OpenLog(r, nil)
	if err != nil {
		return nil, nil, err
	}
	return a.Read, a.Update, nil
}

// brokenLogUpdate writes the redo record and the in-place bytes under one
// barrier: the in-place write may reach the media while the record does
// not.
func brokenLogUpdate(a *LogArray) func(int, []byte) error {
	return func(i int, val []byte) error {
		mem := a.r.Bytes()
		l := i % len(a.lanes)
		ln := &a.lanes[l]
		if ln.pos+a.rec > a.laneBytes {
			if err := a.reset(mem, l); err != nil {
				return err
			}
		}
		rec := mem[a.laneOff(l)+ln.pos:][:a.rec]
		binary.LittleEndian.PutUint64(rec[8:], uint64(i))
		copy(rec[16:], val)
		persist.Store64(rec, uint64(a.rec)|uint64(popcount(rec[8:]))<<16|uint64(ln.gen)<<32)
		ln.pos += a.rec
		o := a.first + i*a.ostride
		copy(mem[o:o+a.size], val)
		if err := a.r.Flush(rec); err != nil {
			return err
		}
		return a.r.Persist(mem[o : o+a.size])
	}
}

type crashCase struct {
	name    string
	size    int
	n, ops  int
	garbage bool // the region starts as seeded random bytes
	cfg     crash.Config
	create  func(*persist.Region) (func(int, []byte) error, error)
	open    func(*persist.Region) (func(int, []byte) error, func(int, []byte) error, error)
}

func crashCases() []crashCase {
	var cs []crashCase
	for _, size := range []int{8, 16, 64, 132} {
		// Above 6 FAMBs per object the images of a fence are sampled:
		// several seeds.
		for seed := range uint64(1 + 2*min(1, size/64)) {
			cs = append(cs, crashCase{
				name: fmt.Sprintf("fam/%d/seed%d", size, seed), size: size, n: 3, ops: 8,
				cfg:    crash.Config{Seed: seed},
				create: famCreate(size, 3), open: famOpen,
			})
		}
	}
	cs = append(cs, crashCase{
		name: "fam/16/eadr", size: 16, n: 3, ops: 8,
		cfg:    crash.Config{Seed: 4, Mode: persist.ModeEADR},
		create: famCreate(16, 3), open: famOpen,
	})
	cs = append(cs, crashCase{
		name: "fam/16/garbage", size: 16, n: 4, ops: 10,
		garbage: true, cfg: crash.Config{Seed: 99},
		create: famCreate(16, 4), open: famOpen,
	})
	small := &LogOptions{Lanes: 2, LaneBytes: 64 + 4*32}
	for _, size := range []int{16, 64} {
		opts := small
		if size == 64 {
			opts = &LogOptions{Lanes: 2, LaneBytes: 64 + 2*128}
		}
		cs = append(cs, crashCase{
			name: fmt.Sprintf("log/%d", size), size: size, n: 3, ops: 10,
			cfg:    crash.Config{Seed: uint64(size) + 7},
			create: logCreate(size, 3, opts), open: logOpen,
		})
	}
	cs = append(cs, crashCase{
		name: "log/16/garbage", size: 16, n: 4, ops: 10,
		garbage: true, cfg: crash.Config{Seed: 5},
		create: logCreate(16, 4, small), open: logOpen,
	})
	return cs
}

func (c crashCase) config() crash.Config {
	cfg := c.cfg
	cfg.Regions = []crash.Spec{{Name: "r", Size: 16 << 10, Garbage: c.garbage}}
	return cfg
}

func TestCrash(t *testing.T) {
	for _, c := range crashCases() {
		t.Run(c.name, func(t *testing.T) {
			h := newHistory(c.size, c.n)
			rep := crash.Test(t, c.config(), h.workload(c.ops, c.create), h.check(c.open))
			require.Greater(t, rep.Points, c.ops, "a crash point at every fence")
			require.Positive(t, rep.RecoveryPoints, "crashes during recovery were injected")
		})
	}
}

// The broken variants the simulator must catch.
func TestCrashCatchesBroken(t *testing.T) {
	for _, c := range []struct {
		name   string
		size   int
		create func(*persist.Region) (func(int, []byte) error, error)
		open   func(*persist.Region) (func(int, []byte) error, func(int, []byte) error, error)
	}{
		{"fam-without-version-check/16", 16, famCreate(16, 3), famOpenNoVersions},
		{"fam-without-version-check/64", 64, famCreate(64, 3), famOpenNoVersions},
		{"log-one-barrier/16", 16, func(r *persist.Region) (func(int, []byte) error, error) {
			a, err := CreateLog(r, &LogOptions{ObjectSize: 16, Count: 3, Lanes: 1, LaneBytes: 1024})
			if err != nil {
				return nil, err
			}
			return brokenLogUpdate(a), nil
		}, logOpen},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHistory(c.size, 3)
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 16 << 10}}, Seed: 3}
			rep, err := crash.Check(cfg, h.workload(6, c.create), h.check(c.open))
			require.NoError(t, err)
			require.True(t, rep.Failed(), "the simulator must catch %s", c.name)
			t.Logf("variant %s: caught (%s)", c.name, rep.Failures[0].Summary())
		})
	}
}
