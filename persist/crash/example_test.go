package crash_test

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
)

// toyLog is a tiny persistent log: a count word at offset 0, then one
// 8-byte entry per append. An append writes the entry and makes it
// durable, then commits it by storing the new count with persist.Store64
// and making that durable: two barriers. broken skips the first barrier,
// so entry and count are in flight together.
type toyLog struct {
	r      *persist.Region
	broken bool
}

func (l *toyLog) append(v uint64) error {
	b := l.r.Bytes()
	n := persist.Load64(b[0:])
	off := 8 + 8*int(n)
	persist.Store64(b[off:], v)
	if l.broken {
		if err := l.r.Flush(b[off : off+8]); err != nil {
			return err
		}
	} else if err := l.r.Persist(b[off : off+8]); err != nil {
		return err
	}
	persist.Store64(b[0:], n+1)
	return l.r.Persist(b[0:8])
}

// recoverLog is the log's recovery: the committed entries.
func recoverLog(r *persist.Region) ([]uint64, error) {
	b := r.Bytes()
	n := persist.Load64(b[0:])
	if n > uint64(len(b)/8-1) {
		return nil, fmt.Errorf("toy: count %d does not fit the region", n)
	}
	var out []uint64
	for i := 0; i < int(n); i++ {
		out = append(out, persist.Load64(b[8+8*i:]))
	}
	return out, nil
}

// toyCrashTest returns the workload and the check of the toy log's crash
// test. The workload records what was acknowledged (the appends that
// returned) and what is in flight; the check recovers each crash image
// and accepts exactly the acknowledged entries, plus the one in flight.
func toyCrashTest(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	var acked []uint64
	var inflight uint64
	workload := func(w *crash.Run) error {
		acked, inflight = nil, 0 // the workload may run more than once
		l := &toyLog{r: w.Region("log"), broken: broken}
		for v := uint64(1); v <= 5; v++ {
			inflight = v * 11
			if err := l.append(v * 11); err != nil {
				return err
			}
			acked, inflight = append(acked, v*11), 0
			w.Durable("append") // everything written so far must be durable now
		}
		return nil
	}
	check := func(img *crash.Image) error {
		got, err := recoverLog(img.Region("log"))
		if err != nil {
			return err
		}
		want := acked
		if len(got) == len(acked)+1 && inflight != 0 {
			want = append(append([]uint64(nil), acked...), inflight)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("recovered %v, acknowledged %v (in flight %d)", got, acked, inflight)
		}
		return nil
	}
	return workload, check
}

// A crash test of a toy log and of its broken variant. In a test, call
// crash.Test(t, cfg, workload, check): it fails the test on every failure
// and prints the replay line of each.
func Example() {
	cfg := crash.Config{Regions: []crash.Spec{{Name: "log", Size: 4096}}}

	workload, check := toyCrashTest(false)
	rep, err := crash.Check(cfg, workload, check)
	if err != nil {
		panic(err)
	}
	fmt.Printf("correct: %d fences, %d crash points, %d images, %d failures\n", rep.Fences, rep.Points, rep.Images, len(rep.Failures))

	workload, check = toyCrashTest(true)
	rep, err = crash.Check(cfg, workload, check)
	if err != nil {
		panic(err)
	}
	f := rep.Failures[0]
	fmt.Printf("broken: caught at fence %d, %d word survived: %v\n", f.Point.Fence, len(f.Survived), f.Err)
	fmt.Println("replay:", f.ReplayKey)
	// Output:
	// correct: 10 fences, 11 crash points, 21 images, 0 failures
	// broken: caught at fence 1, 1 word survived: recovered [0], acknowledged [] (in flight 11)
	// replay: seq=1 image=1 keep=0
}
