package kv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

// The expiry SIGKILL test: a child process (this test binary,
// TestExpireSigkillChild) writes keys with deadlines an hour away, keys
// already expired, and keys it then expires with Expire, and reports each
// acknowledgment on a pipe; the parent kills it with SIGKILL after a
// seeded number of them, reopens the store and requires every
// acknowledged deadline to be there exactly and every expired key to be
// gone. The deadlines are an hour from the child's clock either way, so
// no outcome depends on the machine's speed.
const (
	expireKillRounds = 6
	expireChildEnv   = "BRAID_KV_EXPIRE_CHILD_DIR"
)

func TestExpireSigkillChild(t *testing.T) {
	dir := os.Getenv(expireChildEnv)
	if dir == "" {
		t.Skip("the child of TestExpireSigkill")
	}
	out := os.NewFile(3, "acks")
	s, err := Open(killOptions(dir, pathVariants[0], false))
	if err != nil {
		fmt.Fprintf(out, "X open: %v\n", err)
		os.Exit(1)
	}
	round := os.Getenv("BRAID_KV_EXPIRE_ROUND")
	hour := int64(time.Hour / time.Millisecond)
	for i := 0; ; i++ {
		key := []byte(fmt.Sprintf("r%s-%d", round, i))
		val := []byte(fmt.Sprintf("v%d-%s", i, strings.Repeat("x", i%300)))
		now := s.Now()
		switch i % 4 {
		case 0, 1: // a deadline an hour away
			dl := now + hour + int64(i)
			if err := s.PutAt(key, val, dl); err != nil {
				fmt.Fprintf(out, "X put: %v\n", err)
				os.Exit(1)
			}
			fmt.Fprintf(out, "A %s %d\n", key, dl)
		case 2: // expired when written
			if err := s.PutAt(key, val, now-hour); err != nil {
				fmt.Fprintf(out, "X put: %v\n", err)
				os.Exit(1)
			}
			fmt.Fprintf(out, "E %s\n", key)
		case 3: // written, then expired by Expire
			if err := s.PutAt(key, val, now+hour); err != nil {
				fmt.Fprintf(out, "X put: %v\n", err)
				os.Exit(1)
			}
			if ok, err := s.Expire(key, now-hour); err != nil || !ok {
				fmt.Fprintf(out, "X expire: %v %v\n", ok, err)
				os.Exit(1)
			}
			fmt.Fprintf(out, "E %s\n", key)
		}
	}
}

func TestExpireSigkill(t *testing.T) {
	dir := structtest.TempShm(t)
	o := killOptions(dir, pathVariants[0], false)
	for _, d := range o.Devices {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	rnd := structtest.NewRand(7)
	acked := map[string]int64{} // key -> deadline; -1: expired
	for round := range expireKillRounds {
		expireKillRound(t, dir, round, 50+rnd.Intn(400), acked)
		s, err := Open(o)
		require.NoError(t, err, "round %d: reopen after SIGKILL", round)
		require.NoError(t, s.Check(), "round %d", round)
		live := 0
		for k, want := range acked {
			_, dl, err := s.GetAt([]byte(k))
			if want < 0 {
				require.ErrorIs(t, err, ErrNotFound, "round %d: expired key %s is back", round, k)
				continue
			}
			require.NoError(t, err, "round %d: key %s with a deadline", round, k)
			require.Equal(t, want, dl, "round %d: key %s", round, k)
			live++
		}
		require.GreaterOrEqual(t, s.Stats().Expires, int64(live), "round %d", round)
		t.Logf("round %d: %d acknowledged keys, %d with a deadline; recovery: %d entries, %d torn", round, len(acked), live, s.Recovery().Entries, s.Recovery().TornEntries)
		if round%2 == 0 {
			require.NoError(t, s.Close())
		} else {
			s.abandon()
		}
	}
}

// expireKillRound runs the child until it acknowledged acks operations,
// kills it, and adds what it acknowledged to acked.
func expireKillRound(t *testing.T, dir string, round, acks int, acked map[string]int64) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestExpireSigkillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), expireChildEnv+"="+dir, fmt.Sprintf("BRAID_KV_EXPIRE_ROUND=%d", round))
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	w.Close()
	sc := bufio.NewScanner(r)
	n, killed := 0, false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 0 && f[0] == "X":
			t.Fatalf("child: %s", sc.Text())
		case len(f) == 3 && f[0] == "A":
			dl, err := strconv.ParseInt(f[2], 10, 64)
			require.NoError(t, err)
			acked[f[1]] = dl
		case len(f) == 2 && f[0] == "E":
			acked[f[1]] = -1
		default:
			continue // the last line, cut by the kill
		}
		if n++; n == acks && !killed {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killed = true
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, killed && errors.As(err, &ee), "the child ended before %d acknowledgments: %v", acks, err)
	r.Close()
}
