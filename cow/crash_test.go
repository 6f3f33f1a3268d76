package cow

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// Crash tests: a workload creates an array and updates its objects; at
// every fence (and at the end) the simulator builds crash images in which
// any subset of the written, not yet durable 8-byte words reached the media
// (word-atomic model), opens each image, and the check demands that every
// object is its last acknowledged value or the value of the update in
// flight, never a mix.

type history struct {
	size     int
	n        int
	sum      bool
	created  bool
	acked    [][]byte
	inflight int
	next     []byte
}

func (h *history) value(op int) []byte {
	v := make([]byte, h.size)
	for i := range v {
		v[i] = byte(op*37 + i*11 + 1)
	}
	return v
}

func (h *history) workload(ops int, update func(a *Array, i int, v []byte) error) func(*crash.Run) error {
	return func(w *crash.Run) error {
		h.created, h.inflight = false, -1
		h.acked = make([][]byte, h.n)
		a, err := Create(w.Region("r"), &Options{ObjectSize: h.size, Count: h.n, Checksum: h.sum})
		if err != nil {
			return err
		}
		h.created = true
		w.Durable("create")
		for op := range ops {
			i := (op * 5) % h.n
			h.inflight, h.next = i, h.value(op)
			if err := update(a, i, h.next); err != nil {
				return err
			}
			h.acked[i], h.inflight = h.next, -1
			w.Durable("update")
		}
		return nil
	}
}

// after is what check writes into object 0 once the image is open.
var after = bytes.Repeat([]byte{0x5a}, MaxSize)

func (h *history) check(img *crash.Image) error {
	a, err := Open(img.Region("r"), nil)
	if err != nil {
		if !h.created {
			return nil // nothing promised yet
		}
		return fmt.Errorf("open after the array was created: %w", err)
	}
	if a.Checksum() != h.sum {
		return fmt.Errorf("opened with checksums %v, created with %v", a.Checksum(), h.sum)
	}
	if err := a.Check(); err != nil {
		return err
	}
	got := make([]byte, h.size)
	zeros := make([]byte, h.size)
	for i, v := range h.acked {
		if v == nil {
			h.acked[i] = zeros
		}
	}
	for i := range h.n {
		if err := a.Read(i, got); err != nil {
			return fmt.Errorf("read object %d: %w", i, err)
		}
		switch {
		case i == 0 && img.InRecovery() && bytes.Equal(got, after[:h.size]):
			// the crash hit the update below, in the first check
		case !h.created:
			if !bytes.Equal(got, zeros) {
				return fmt.Errorf("unfinished Create: object %d is %x", i, got)
			}
		case bytes.Equal(got, h.acked[i]):
		case h.inflight == i && bytes.Equal(got, h.next):
		case h.inflight == i:
			return fmt.Errorf("object %d is %x: neither the old value %x nor the new %x", i, got, h.acked[i], h.next)
		default:
			return fmt.Errorf("object %d is %x, want %x (not being updated)", i, got, h.acked[i])
		}
	}
	// The opened array is usable (and this update's fences are crash
	// points for the images that crash again after a crash).
	if err := a.Update(0, after[:h.size]); err != nil {
		return err
	}
	if err := a.Read(0, got); err != nil || !bytes.Equal(got, after[:h.size]) {
		return fmt.Errorf("read after update: %x, %v", got, err)
	}
	return nil
}

func update(a *Array, i int, v []byte) error { return a.Update(i, v) }

func updateChecked(a *Array, i int, v []byte) error {
	if err := a.Update(i, v); err != nil {
		return err
	}
	return a.Check()
}

// flipFirst is the broken CoW: the selector is advanced before the new copy
// is durable, and both are made durable under one barrier, so the selector
// may reach the media without the data it names.
func flipFirst(a *Array, i int, v []byte) error {
	mem, o, err := a.object(i)
	if err != nil {
		return err
	}
	s := sel(mem, o)
	seq := atomic.LoadUint64(s) + 1
	if a.sum {
		seq = uint64(uint32(seq)) | uint64(check(uint32(seq), v))<<32
	}
	c := o + a.copyAt(seq)
	copy(mem[c:c+a.size], v)
	atomic.StoreUint64(s, seq)
	if err := a.r.Flush(mem[c : c+a.size]); err != nil {
		return err
	}
	return a.r.Persist(mem[o : o+8])
}

func TestCrash(t *testing.T) {
	for _, c := range []struct {
		size    int
		sum     bool
		garbage bool
		mode    persist.Mode
	}{
		{8, false, false, 0}, {16, false, false, 0}, {40, false, false, 0}, {64, false, false, 0}, {200, false, false, 0},
		{16, false, true, 0}, {64, false, true, 0}, {16, false, false, persist.ModeEADR},
		{3, true, false, 0}, {16, true, false, 0}, {40, true, false, 0}, {64, true, false, 0}, {200, true, false, 0},
		{16, true, true, 0}, {16, true, false, persist.ModeEADR},
	} {
		name := fmt.Sprint(c.size)
		if c.sum {
			name += "/checksum"
		}
		if c.garbage {
			name += "/garbage"
		}
		if c.mode == persist.ModeEADR {
			name += "/eadr"
		}
		t.Run(name, func(t *testing.T) {
			h := &history{size: c.size, n: 3, sum: c.sum}
			up := update
			if c.sum {
				up = updateChecked // every durable state of the workload verifies
			}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 8 << 10, Garbage: c.garbage}}, Seed: uint64(c.size), Mode: c.mode}
			rep := crash.Test(t, cfg, h.workload(8, up), h.check)
			require.Greater(t, rep.Points, 16, "two barriers per update")
			require.Positive(t, rep.RecoveryPoints)
		})
	}
}

func TestCrashCatchesBroken(t *testing.T) {
	for _, c := range []struct {
		size int
		sum  bool
	}{{16, false}, {64, false}, {16, true}} {
		name := fmt.Sprintf("cow-flip-before-persist/%d", c.size)
		if c.sum {
			name += "/checksum"
		}
		t.Run(name, func(t *testing.T) {
			h := &history{size: c.size, n: 3, sum: c.sum}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 8 << 10}}, Seed: 1}
			rep, err := crash.Check(cfg, h.workload(6, flipFirst), h.check)
			require.NoError(t, err)
			require.True(t, rep.Failed(), "the simulator must catch %s", name)
			t.Logf("variant %s: caught (%s)", name, rep.Failures[0].Summary())
		})
	}
}
