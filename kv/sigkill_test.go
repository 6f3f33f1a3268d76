package kv

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// The SIGKILL test: a child process (this test binary, TestSigkillChild)
// runs concurrent puts, deletes and gets on a few shared keys and writes
// every call and every return, with its time, to a pipe; the parent kills
// it with SIGKILL after a seeded number of returns, reopens the store,
// reads every key, and checks the whole history — the child's operations,
// those in flight when it died (outcome unknown) and the reads after the
// restart — for linearizability with porcupine (durable linearizability:
// nothing acknowledged is lost, nothing unacknowledged appears and then
// vanishes). Rounds alternate a clean Close of the parent's store with an
// abandoned one, and the store lives on across rounds (its cleaner runs).
// The rounds with Options.MergeLogs (killMergeRounds) run the same
// child with its index updates going through the merge logs.
const (
	killRounds      = 20
	killMergeRounds = 12
	killKeys        = 8
	killClients     = 4
	childEnv        = "BRAID_KV_CHILD_DIR"
	childMergeEnv   = "BRAID_KV_CHILD_MERGE"
	childPathEnv    = "BRAID_KV_CHILD_PATH" // the child's pathVariant
)

func killOptions(dir string, v pathVariant, merge bool) *Options {
	return fakeNUMA(v.apply(&Options{
		Devices:       []string{filepath.Join(dir, "dev0"), filepath.Join(dir, "dev1")},
		CheckpointDir: filepath.Join(dir, "ckpt"),
		SegmentSize:   64 << 10, DeviceSize: 40 * 64 << 10, WorkersPerDevice: 2, PMem: true,
		MergeLogs: merge,
	}), 2)
}

func TestSigkillChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("the child of TestSigkill")
	}
	out := os.NewFile(3, "history")
	s, err := Open(killOptions(dir, variantNamed(os.Getenv(childPathEnv)), os.Getenv(childMergeEnv) != ""))
	if err != nil {
		fmt.Fprintf(out, "X open: %v\n", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	emit := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format, args...)
		mu.Unlock()
	}
	seed, _ := strconv.ParseUint(os.Getenv("BRAID_KV_CHILD_SEED"), 10, 64)
	var wg sync.WaitGroup
	for g := range killClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := structtest.NewRand(seed*100 + uint64(g))
			for seq := 0; ; seq++ {
				key := fmt.Sprintf("k%d", rnd.Intn(killKeys))
				switch op := rnd.Intn(100); {
				case op < 45:
					val := fmt.Sprintf("s%d-g%d-%d-%s", seed, g, seq, strings.Repeat("x", rnd.Intn(200)))
					emit("C %d %d %d put %s %s\n", g, seq, time.Now().UnixNano(), key, val)
					err := s.Put([]byte(key), []byte(val))
					emit("R %d %d %d %s\n", g, seq, time.Now().UnixNano(), result(nil, err))
				case op < 60:
					emit("C %d %d %d del %s -\n", g, seq, time.Now().UnixNano(), key)
					err := s.Delete([]byte(key))
					emit("R %d %d %d %s\n", g, seq, time.Now().UnixNano(), result(nil, err))
				default:
					emit("C %d %d %d get %s -\n", g, seq, time.Now().UnixNano(), key)
					v, err := s.Get([]byte(key))
					emit("R %d %d %d %s\n", g, seq, time.Now().UnixNano(), result(v, err))
				}
			}
		}()
	}
	wg.Wait()
}

// result encodes an operation's outcome: "ok", "v <value>", "-" (not
// found), or "E <error>".
func result(v []byte, err error) string {
	switch {
	case err == ErrNotFound:
		return "-"
	case err != nil:
		return "E " + strings.ReplaceAll(err.Error(), " ", "_")
	case v != nil:
		return "v " + string(v)
	}
	return "ok"
}

type kvInput struct {
	op, key, val string
}

type kvOutput struct {
	val     string // "" absent
	unknown bool
}

var kvModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(kvInput).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in, out := input.(kvInput), output.(kvOutput)
		switch in.op {
		case "put":
			return true, in.val
		case "del":
			return true, ""
		}
		return out.unknown || out.val == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		return fmt.Sprintf("%s(%s, %.20s) -> %.20s unknown=%v", in.op, in.key, in.val, out.val, out.unknown)
	},
}

func TestSigkill(t *testing.T) {
	for _, v := range pathVariants {
		t.Run(v.name+"/direct", func(t *testing.T) { sigkillRounds(t, v, false, killRounds, 42) })
		t.Run(v.name+"/merge", func(t *testing.T) { sigkillRounds(t, v, true, killMergeRounds, 43) })
	}
}

func sigkillRounds(t *testing.T, v pathVariant, merge bool, rounds int, seed uint64) {
	dir := structtest.TempShm(t)
	o := killOptions(dir, v, merge)
	for _, d := range o.Devices {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	rnd := structtest.NewRand(seed)
	state := map[string]string{} // what the reads after the last restart saw
	var totalOps, totalUnknown int
	for round := range rounds {
		acks := 30 + rnd.Intn(300)
		ops, unknown := killRound(t, dir, v, merge, uint64(round+1), acks)
		// The state before the round, as a put before everything.
		var h []porcupine.Operation
		for k := range killKeys {
			key := fmt.Sprintf("k%d", k)
			h = append(h, porcupine.Operation{ClientId: killClients, Input: kvInput{op: "put", key: key, val: state[key]}, Call: 0, Output: kvOutput{}, Return: 1})
		}
		h = append(h, ops...)
		s, err := Open(o)
		require.NoError(t, err, "round %d: reopen after SIGKILL", round)
		rep := s.Recovery()
		require.NoError(t, s.Check(), "round %d", round)
		for k := range killKeys {
			key := fmt.Sprintf("k%d", k)
			call := time.Now().UnixNano()
			v, err := s.Get([]byte(key))
			ret := time.Now().UnixNano()
			if err == ErrNotFound {
				v, err = nil, nil
			}
			require.NoError(t, err, "round %d: get %s after the restart", round, key)
			state[key] = string(v)
			h = append(h, porcupine.Operation{ClientId: killClients + 1, Input: kvInput{op: "get", key: key}, Call: call, Output: kvOutput{val: string(v)}, Return: ret})
		}
		res, info := porcupine.CheckOperationsVerbose(kvModel, h, 0) // no time limit: the verdict, not the machine's speed
		if res != porcupine.Ok {
			t.Logf("recovery report: %+v", rep)
			f := filepath.Join(os.TempDir(), fmt.Sprintf("kv-history-%d.html", os.Getpid()))
			_ = porcupine.VisualizePath(kvModel, info, f)
			dumpHistory(t, h, f+".txt")
			t.Fatalf("round %d (seed %d): history of %d operations (%d unknown) is %v; visualization in %s", round, rnd.Seed(), len(ops), unknown, res, f)
		}
		totalOps += len(ops)
		totalUnknown += unknown
		t.Logf("round %d: %d ops, %d in flight at the kill; recovery: checkpoint %q, %d entries replayed, %d torn, %d corrupt, %d stale, %d keys, %v",
			round, len(ops), unknown, rep.Checkpoint, rep.Entries, rep.TornEntries, rep.CorruptValues, rep.Stale, rep.Keys, rep.Total)
		if round%2 == 0 {
			require.NoError(t, s.Close())
		} else {
			s.abandon()
		}
	}
	t.Logf("%d rounds, %d operations, %d with unknown outcome, all linearizable", rounds, totalOps, totalUnknown)
}

// killRound runs the child until it reported acks returns, kills it, and
// returns its history (operations without a return have an unknown
// outcome and an open end).
func killRound(t *testing.T, dir string, v pathVariant, merge bool, seed uint64, acks int) ([]porcupine.Operation, int) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSigkillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, fmt.Sprintf("BRAID_KV_CHILD_SEED=%d", seed))
	cmd.Env = append(cmd.Env, childPathEnv+"="+v.name)
	if merge {
		cmd.Env = append(cmd.Env, childMergeEnv+"=1")
	}
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	w.Close()
	type call struct {
		op  porcupine.Operation
		ret bool
	}
	calls := map[[2]int]*call{}
	var order [][2]int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	returns, killed := 0, false
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 7)
		if f[0] == "X" {
			t.Fatalf("child: %s", sc.Text())
		}
		if len(f) < 5 {
			continue // the last line, cut by the kill
		}
		g, _ := strconv.Atoi(f[1])
		seq, _ := strconv.Atoi(f[2])
		ts, _ := strconv.ParseInt(f[3], 10, 64)
		id := [2]int{g, seq}
		switch {
		case f[0] == "C" && len(f) == 7:
			val := f[6]
			if val == "-" {
				val = ""
			}
			calls[id] = &call{op: porcupine.Operation{ClientId: g, Input: kvInput{op: f[4], key: f[5], val: val}, Call: ts}}
			order = append(order, id)
		case f[0] == "R" && calls[id] != nil:
			c := calls[id]
			res := strings.SplitN(strings.Join(f[4:], " "), " ", 2)
			switch res[0] {
			case "ok", "-":
				c.op.Output = kvOutput{}
			case "v":
				c.op.Output = kvOutput{val: res[1]}
			default:
				t.Fatalf("child: operation %v failed: %s", c.op.Input, strings.Join(f[4:], " "))
			}
			c.op.Return, c.ret = ts, true
			if returns == acks/2 && seed%4 == 1 {
				// The child holds the store: another process is refused.
				if _, err := Open(killOptions(dir, v, merge)); !errors.Is(err, ErrBusy) {
					t.Errorf("open while the child runs: %v, want ErrBusy", err)
				}
			}
			if returns++; returns == acks && !killed {
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				killed = true
			}
		}
	}
	err = cmd.Wait()
	require.True(t, killed, "the child ended before %d returns: %v", acks, err)
	var ops []porcupine.Operation
	unknown := 0
	for _, id := range order {
		c := calls[id]
		if !c.ret {
			c.op.Output, c.op.Return = kvOutput{unknown: true}, math.MaxInt64
			unknown++
		}
		ops = append(ops, c.op)
	}
	r.Close()
	return ops, unknown
}

// dumpHistory writes a failing history as text, one operation a line, by
// key and call time.
func dumpHistory(t *testing.T, h []porcupine.Operation, path string) {
	slices.SortFunc(h, func(a, b porcupine.Operation) int {
		if c := strings.Compare(a.Input.(kvInput).key, b.Input.(kvInput).key); c != 0 {
			return c
		}
		return cmp.Compare(a.Call, b.Call)
	})
	var sb strings.Builder
	for _, op := range h {
		in, out := op.Input.(kvInput), op.Output.(kvOutput)
		fmt.Fprintf(&sb, "%s c%d %d..%d %s %.24q -> %.24q unknown=%v\n", in.key, op.ClientId, op.Call, op.Return, in.op, in.val, out.val, out.unknown)
	}
	_ = os.WriteFile(path, []byte(sb.String()), 0o644)
	t.Logf("history written to %s", path)
}
