package fptree

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist/crash"
)

// Crash tests: a workload creates a tree of 4-slot leaves (so that most
// inserts split and most deletes that empty a leaf free it) and runs
// random inserts, updates and deletes — one at a time, or in PutBatch
// groups — over a small key space; at every fence, including those inside
// splits, leaf frees and (in the images that crash again) recovery, the
// simulator builds crash images from the words that may or may not have
// reached the media. The check recovers each image with Open and demands:
// Check passes (the chain sorted, every key in its leaf's range with its
// fingerprint, the inner nodes and the allocator agreeing with the chain:
// no leaf leaked or used twice), no empty leaf but the head is left in the
// chain, every key is reachable by Get and Scan, and the keys and values
// are exactly those acknowledged, plus the operation in flight applied
// whole or not at all (for a batch: each of its keys old or new). Then it
// puts one more key, whose fences are crash points of recovery too.

// change is one operation of a crash workload.
type change struct {
	k, v uint64
	del  bool
}

// crashRun is what the workload has acknowledged, read by the check while
// the workload is paused at a crash point.
type crashRun struct {
	created  bool
	acked    map[uint64]uint64
	inflight []change // the operation (or batch) running
	variant  variant
	// What the images held, to show the recoveries ran: a split log set,
	// a free log set.
	splitLogs, freeLogs int
}

// reopenEvery is how many operations the workload runs between reopens.
const reopenEvery = 50

// afterKey is the key the check puts after recovery.
const afterKey = math.MaxUint64 - 1

// workload runs ops operations chosen with seed; with batch, every fourth
// is a PutBatch of up to 6 keys.
func (h *crashRun) workload(seed uint64, ops, leaves int, space uint64, batch bool) func(*crash.Run) error {
	return func(w *crash.Run) error {
		h.created, h.acked, h.inflight = false, map[uint64]uint64{}, nil
		rnd := structtest.NewRand(seed)
		tr, err := Create(w.Region("t"), &Options{LeafSlots: 4, Leaves: leaves, Group: 4})
		if err != nil {
			return err
		}
		h.created = true
		w.Durable("create")
		tr.variant = h.variant
		for op := range ops {
			k := rnd.Uint64() % space
			switch x := rnd.Intn(8); {
			case batch && x < 2:
				n := 1 + rnd.Intn(6)
				keys, vals := make([]uint64, n), make([]uint64, n)
				h.inflight = h.inflight[:0]
				for i := range keys {
					keys[i], vals[i] = rnd.Uint64()%space, uint64(op)<<8|uint64(i)
					h.inflight = append(h.inflight, change{k: keys[i], v: vals[i]})
				}
				err := tr.PutBatch(keys, vals)
				if err != nil && !errors.Is(err, ErrFull) {
					return err
				}
				for i := range keys {
					// After ErrFull some were put: the tree says which.
					if v, ok, gerr := tr.Get(keys[i]); gerr != nil {
						return gerr
					} else if ok {
						h.acked[keys[i]] = v
					}
				}
			case x < 5:
				v := uint64(op) << 8
				h.inflight = append(h.inflight[:0], change{k: k, v: v})
				if err := tr.Put(k, v); errors.Is(err, ErrFull) {
					h.inflight = h.inflight[:0]
					continue
				} else if err != nil {
					return err
				}
				h.acked[k] = v
			default:
				h.inflight = append(h.inflight[:0], change{k: k, del: true})
				// Some deletes leave the leaf they empty linked, as a
				// crash before the free would: the next Open unlinks it.
				tr.keepEmpty = op%4 == 0
				if _, err := tr.Delete(k); err != nil {
					return err
				}
				delete(h.acked, k)
			}
			h.inflight = h.inflight[:0]
			w.Durable("op")
			if op%reopenEvery == reopenEvery-1 {
				// A clean reopen: Open's writes (the unlinks of the
				// empty leaves) are durable when it returns.
				if err := tr.Close(); err != nil {
					return err
				}
				if tr, err = open(w.Region("t"), nil, h.variant); err != nil {
					return err
				}
				tr.variant = h.variant
				w.Durable("reopen")
			}
		}
		return tr.Close()
	}
}

func (h *crashRun) check(img *crash.Image) error {
	if mem := img.Region("t").Bytes(); len(mem) >= leavesOff {
		if at(unsafe.Pointer(&mem[logOff]), 0) != 0 {
			h.splitLogs++
		}
		if at(unsafe.Pointer(&mem[logOff]), 8) != 0 {
			h.freeLogs++
		}
	}
	tr, err := open(img.Region("t"), nil, h.variant)
	if !h.created && err != nil {
		return nil // a crash inside Create: no tree yet (or what was there before)
	}
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	defer tr.Close()
	if err := tr.Check(); err != nil {
		return fmt.Errorf("check after recovery: %w", err)
	}
	got := map[uint64]uint64{}
	leaves := 0
	for l := uint32(0); ; leaves++ {
		p := tr.leaf(l)
		if l != 0 && at(p, offBitmap) == 0 {
			return fmt.Errorf("the empty leaf %d is left in the chain", l)
		}
		if l = uint32(at(p, offNext)); l == 0 {
			break
		}
	}
	if used, capacity := tr.Leaves(); used != leaves+1 || capacity != tr.cap {
		return fmt.Errorf("%d leaves in use after recovery, the chain has %d", used, leaves+1)
	}
	var prev uint64
	if err := tr.Scan(0, math.MaxUint64, func(k, v uint64) bool {
		if len(got) > 0 && k <= prev {
			err = fmt.Errorf("Scan returned key %d after %d", k, prev)
		}
		prev, got[k] = k, v
		return err == nil
	}); err != nil {
		return err
	}
	if tr.Len() != len(got) {
		return fmt.Errorf("Len is %d, Scan found %d keys", tr.Len(), len(got))
	}
	for k, v := range got {
		if gv, ok, err := tr.Get(k); err != nil || !ok || gv != v {
			return fmt.Errorf("key %d scanned with value %d, Get says %d, %v, %v", k, v, gv, ok, err)
		}
	}
	if img.InRecovery() {
		delete(got, afterKey) // the check's own Put, in the first check
	}
	if err := h.compare(got); err != nil {
		return err
	}
	// A first change after recovery: its fences are crash points of the
	// images that crash during recovery.
	if err := tr.Put(afterKey, 1); err != nil && !errors.Is(err, ErrFull) {
		return fmt.Errorf("put after recovery: %w", err)
	}
	return nil
}

// compare checks the recovered keys against the acknowledged ones and the
// operation in flight.
func (h *crashRun) compare(got map[uint64]uint64) error {
	pending := map[uint64][]change{}
	for _, c := range h.inflight {
		pending[c.k] = append(pending[c.k], c)
	}
	ok := func(k uint64) error {
		v, have := got[k]
		want, had := h.acked[k]
		if have == had && v == want {
			return nil
		}
		for _, c := range pending[k] {
			if c.del && !have || !c.del && have && v == c.v {
				return nil
			}
		}
		if len(pending[k]) > 0 {
			return fmt.Errorf("key %d is %d (present %v): neither its acknowledged %d (present %v) nor the change in flight %+v", k, v, have, want, had, pending[k])
		}
		return fmt.Errorf("key %d is %d (present %v), acknowledged %d (present %v), not being changed", k, v, have, want, had)
	}
	for k := range got {
		if err := ok(k); err != nil {
			return err
		}
	}
	for k := range h.acked {
		if err := ok(k); err != nil {
			return err
		}
	}
	return nil
}

func crashConfig(seed uint64, garbage bool) crash.Config {
	return crash.Config{Regions: []crash.Spec{{Name: "t", Size: 8 << 10, Garbage: garbage}}, Seed: seed}
}

// TestCrash runs the workloads under the simulator: single operations
// with room to spare, a tree kept near full (ErrFull and leaf reuse), and
// PutBatch groups.
func TestCrash(t *testing.T) {
	for _, c := range []struct {
		name   string
		seed   uint64
		ops    int
		leaves int
		space  uint64
		batch  bool
	}{
		{"ops", 1, 200, 0, 24, false},
		{"ops-garbage", 5, 200, 0, 60, false},
		{"near-full", 2, 200, 6, 28, false},
		{"batches", 3, 120, 0, 24, true},
		{"batches-near-full", 6, 120, 7, 40, true},
	} {
		if raceEnabled {
			c.ops = c.ops * 2 / 3 // the race detector slows the simulator about tenfold
		}
		t.Run(c.name, func(t *testing.T) {
			h := &crashRun{}
			rep := crash.Test(t, crashConfig(c.seed, c.name == "ops-garbage"), h.workload(c.seed, c.ops, c.leaves, c.space, c.batch), h.check)
			require.Greater(t, rep.Points, c.ops/2, "a crash point at every fence")
			require.Positive(t, rep.RecoveryPoints, "crashes during recovery were injected")
			require.Positive(t, h.splitLogs, "images with a split in flight were recovered")
			if !c.batch {
				require.Positive(t, h.freeLogs, "images with a leaf free in flight were recovered")
			}
			t.Logf("%d images recovered a split from its log, %d a leaf free", h.splitLogs, h.freeLogs)
		})
	}
}

// TestCrashCatchesBroken: the simulator catches every protocol step left
// out — an insert whose bitmap bit is committed with its slot (one fence,
// not two), a split whose micro log is not durable before the new leaf is
// linked, and the others of variant.go — for the reason named: the
// failure is at a crash point (or a durability point) of the step's
// function, or of recovery for a step of recovery, and says what broke.
func TestCrashCatchesBroken(t *testing.T) {
	for _, c := range []struct {
		name    string
		variant variant
		batch   bool
		ops     int
		where   string // the crash point: its function, or "durable" and its label, or "recovery: " and the function there; | separates choices
		why     string // in the check's error; | separates choices
	}{
		{"bitmap-before-slot", bitmapFirst, false, 60, "commit", "acknowledged 0 (present false)"},
		{"bitmap-before-slot-batch", bitmapFirst, true, 60, "commitGroup", "twice"},
		{"split-log-not-durable", splitUnlogged, false, 60, "split", ""},
		{"split-leaf-not-durable", splitLeafUndrained, false, 60, "split", ""},
		{"split-link-with-clear", splitLinkWithClear, false, 60, "split", ""},
		{"split-clear-unflushed", splitClearUnflushed, false, 60, "durable op", "not durable"},
		{"unlink-unflushed", unlinkUnflushed, false, 200, "durable op|unlink", "not durable|back link"},
		{"redo-no-mark", redoNoMark, false, 60, "split", "never given out"},
		{"redo-clears-first", redoClearFirst, false, 60, "recovery: clearLog", ""},
		{"walk-unlink-unflushed", walkUnlinkUnflushed, false, 200, "recovery: split|durable reopen", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &crashRun{variant: c.variant}
			rep, err := crash.Check(crashConfig(4, false), h.workload(4, c.ops, 0, 24, c.batch), h.check)
			require.NoError(t, err)
			require.True(t, rep.Failed(), "the simulator must catch %s", c.name)
			f := rep.Failures[0]
			t.Logf("%s: caught: %s", c.name, f.Summary())
			where := f.Point.Func + " " + f.Point.Kind + " " + f.Point.Label
			if f.Recovery != nil {
				where = "recovery: " + strings.TrimPrefix(f.Recovery.Func, "fptree.(*Tree).")
			}
			require.True(t, slices.ContainsFunc(strings.Split(c.where, "|"), func(w string) bool { return strings.Contains(where, w) }),
				"%s: caught at the wrong place (want %s): %s", c.name, c.where, f.Summary())
			require.True(t, slices.ContainsFunc(strings.Split(c.why, "|"), func(w string) bool { return strings.Contains(f.Err.Error(), w) }),
				"%s: caught for another reason (want %s): %s", c.name, c.why, f.Summary())
		})
	}
}

// TestFreeLogNeeded: a leaf free without its micro log (the unlink
// alone: the predecessor's next, the successor's back link and the leaf's
// own, one fence) is caught. The chain is the allocator, so the unlink
// would be the whole free, but the three words may reach the media apart,
// and Open cross-checks the back links (a link that contradicts the
// chain is damage, walk.go): only the log tells a torn unlink from a
// damaged next.
func TestFreeLogNeeded(t *testing.T) {
	h := &crashRun{variant: freeUnlogged}
	rep, err := crash.Check(crashConfig(4, false), h.workload(4, 200, 0, 24, false), h.check)
	require.NoError(t, err)
	require.True(t, rep.Failed(), "the unlogged free is caught")
	require.Contains(t, rep.Failures[0].Err.Error(), "back link")
	t.Logf("free-unlogged: caught: %s", rep.Failures[0].Summary())
}
