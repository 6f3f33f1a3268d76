package raftstore

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// TestKill: a child process appends entries, compacts and sets the term
// on a store in a file, printing what each call acknowledged; the parent
// SIGKILLs it after a seeded number of acknowledgements and reopens the
// store: every acknowledged entry and term is there, deleted entries stay
// deleted, and the log is one run of indexes. Three rounds on the same
// file, each child going on from what the last left.
const killEnv = "RAFTSTORE_KILL_CHILD"

var killOptions = Options{Segments: 4, SegmentSize: 64 << 10, StableSize: 16 << 10}

func TestKill(t *testing.T) {
	if os.Getenv(killEnv) != "" {
		t.Skip("the child's test binary")
	}
	path := filepath.Join(t.TempDir(), "raft.pm")
	rng := rand.New(rand.NewPCG(29, 9))
	var ackedLast, ackedTerm, ackedDel uint64
	for round := range 3 {
		kills := 100 + rng.IntN(300)
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killEnv+"="+path)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		acks := 0
		for acks < kills && sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 {
				continue // go test's own lines
			}
			v, err := strconv.ParseUint(f[1], 10, 64)
			require.NoError(t, err, "child said %q", sc.Text())
			switch f[0] {
			case "log":
				ackedLast = v
			case "term":
				ackedTerm = v
			case "del":
				ackedDel = v
			}
			acks++
		}
		require.Equal(t, kills, acks, "round %d: the child stopped early", round)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		s, err := Open(path, nil)
		require.NoError(t, err, "round %d", round)
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		require.GreaterOrEqual(t, last, ackedLast, "round %d: an acknowledged entry is lost", round)
		require.Greater(t, first, ackedDel, "round %d: a deleted entry is back", round)
		for i := first; i <= last; i++ {
			var l raft.Log
			require.NoError(t, s.GetLog(i, &l), "round %d: log %d..%d", round, first, last)
			equalLog(t, entry(i, 1), &l)
		}
		term, err := s.GetUint64([]byte("CurrentTerm"))
		require.NoError(t, err)
		require.GreaterOrEqual(t, term, ackedTerm, "round %d", round)
		require.NoError(t, s.Close())
		t.Logf("round %d: killed after %d acknowledgements: log %d..%d, term %d", round, kills, first, last, term)
	}
}

// TestKillChild is the child of TestKill: it runs only under killEnv.
func TestKillChild(t *testing.T) {
	path := os.Getenv(killEnv)
	if path == "" {
		t.Skip("run by TestKill")
	}
	s, err := Open(path, &killOptions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	last, _ := s.LastIndex()
	term, _ := s.GetUint64([]byte("CurrentTerm"))
	w := bufio.NewWriter(os.Stdout)
	say := func(what string, v uint64) {
		fmt.Fprintf(w, "%s %d\n", what, v)
		w.Flush()
	}
	for i := 0; ; i++ {
		n := uint64(1 + i%8)
		if err := s.StoreLogs(entries(last+1, last+n, 1)); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		last += n
		say("log", last)
		if i%10 == 9 {
			term++
			if err := s.SetUint64([]byte("CurrentTerm"), term); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(2)
			}
			say("term", term)
		}
		if i%25 == 24 && last > 100 {
			if err := s.DeleteRange(0, last-100); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(2)
			}
			say("del", last-100)
		}
	}
}
