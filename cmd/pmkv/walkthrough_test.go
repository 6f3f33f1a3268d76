package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's walk-throughs, run as written: the ```sh blocks under these
// headings of README.md.
var walkthroughs = []string{"A store for a web cache", "A store for a bulk load"}

// TestWalkthrough runs every "$ " line of each walk-through in order with
// sh, in a temporary $DIR, with a pmkv on PATH that is this package (the
// test binary run as pmkv), and checks that each exits 0 and prints the
// lines the README shows under it (standard output and error together, as
// a terminal shows them: what a carriage return overwrites is dropped;
// runs of spaces compare equal).
// In the expected lines a line "..." stands for any lines and "..." inside
// a line for any text. Substitutions, so the README stays what a user
// types: "DIR=VALUE" sets $DIR to a temporary directory instead (and VALUE
// in the output becomes it), the port 6380 becomes a free one, redis-cli
// gets --no-raw (its terminal format), a line ending in "&" runs in the
// background until "kill %1" (SIGTERM; it must then exit 0).
func TestWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nBRAID_PMKV_MAIN=1 exec " + strconv.Quote(exe) + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "pmkv"), []byte(wrapper), 0o755))
	for _, title := range walkthroughs {
		steps := walkSteps(string(readme), title)
		require.NotEmpty(t, steps, "README.md: no ```sh block under %q", title)
		t.Run(strings.ReplaceAll(title, " ", "_"), func(t *testing.T) {
			w := &walker{t: t, bin: bin, root: walkRoot(t)}
			t.Cleanup(func() {
				if w.bg != nil {
					w.bg.Process.Kill()
				}
			})
			for _, s := range steps {
				w.step(s)
			}
			require.Nil(t, w.bg, "a background command was never killed")
		})
	}
}

// A walkStep is one "$ " line of a walk-through and the lines after it.
type walkStep struct {
	cmd  string
	want []string
}

// walkSteps returns the commands of the ```sh blocks in the README section
// headed "## title".
func walkSteps(readme, title string) []walkStep {
	var steps []walkStep
	in, block := false, false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in, block = line == "## "+title, false
		case !in:
		case line == "```sh" || (block && line == "```"):
			block = !block
		case !block:
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, walkStep{cmd: line[2:]})
		case len(steps) > 0:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
	return steps
}

// walkRoot is a temporary directory, on tmpfs where there is one.
func walkRoot(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "pmkv-walk-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

type walker struct {
	t         *testing.T
	bin, root string
	dir, was  string // $DIR, and the README's value for it
	port      string
	bg        *exec.Cmd
	bgOut     *bufio.Reader
}

func (w *walker) step(s walkStep) {
	t := w.t
	if v, ok := strings.CutPrefix(s.cmd, "DIR="); ok {
		w.was, w.dir = v, filepath.Join(w.root, filepath.Base(v))
		return
	}
	line := w.subst(s.cmd)
	want := make([]string, len(s.want))
	for i, l := range s.want {
		want[i] = w.substOut(l)
	}
	switch {
	case strings.HasSuffix(line, "&"):
		require.Nil(t, w.bg, "one background command at a time")
		c := w.command("exec " + strings.TrimSuffix(line, "&"))
		r, wr := io.Pipe()
		c.Stdout, c.Stderr = wr, wr
		require.NoError(t, c.Start(), "%s", s.cmd)
		go func() { c.Wait(); wr.Close() }()
		w.bg, w.bgOut = c, bufio.NewReader(r)
		var got []string
		for range want { // the lines it prints when ready
			l, err := w.bgOut.ReadString('\n')
			require.NoError(t, err, "%s: after %q", s.cmd, got)
			got = append(got, strings.TrimSuffix(l, "\n"))
		}
		require.True(t, walkMatch(want, got), "%s:\nwant %q\ngot  %q", s.cmd, want, got)
	case line == "kill %1":
		require.NotNil(t, w.bg, "kill %%1 with nothing in the background")
		require.NoError(t, w.bg.Process.Signal(syscall.SIGTERM))
		rest, _ := io.ReadAll(w.bgOut)
		got := terminalLines(string(rest))
		require.Equal(t, 0, w.bg.ProcessState.ExitCode(), "the background command's exit status; output %q", got)
		require.True(t, walkMatch(want, got), "%s:\nwant %q\ngot  %q", s.cmd, want, got)
		w.bg = nil
	default:
		if strings.Contains(line, "redis-cli") {
			if _, err := exec.LookPath("redis-cli"); err != nil {
				t.Skip("redis-cli not installed (apt-get install redis-tools)")
			}
		}
		out, err := w.command(line).CombinedOutput()
		got := terminalLines(string(out))
		require.NoError(t, err, "%s: output %q", s.cmd, got)
		require.True(t, walkMatch(want, got), "%s:\nwant %q\ngot  %q", s.cmd, want, got)
	}
}

func (w *walker) command(line string) *exec.Cmd {
	c := exec.Command("sh", "-c", line)
	c.Env = append(os.Environ(), "PATH="+w.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DIR="+w.dir)
	return c
}

// subst makes a command line of the README the test's.
func (w *walker) subst(line string) string {
	line = strings.ReplaceAll(line, "6380", w.freePort())
	return strings.ReplaceAll(line, "redis-cli ", "redis-cli --no-raw ")
}

func (w *walker) substOut(line string) string {
	if w.was != "" {
		line = strings.ReplaceAll(line, w.was, w.dir)
	}
	return strings.ReplaceAll(line, "6380", w.freePort())
}

// freePort is a loopback port free when first asked for, the same after.
func (w *walker) freePort() string {
	if w.port == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(w.t, err)
		w.port = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	return w.port
}

// terminalLines is the text as a terminal leaves it: of each line what
// follows its last carriage return (a progress bar redraws and clears
// itself) but one ending it, blank lines dropped.
func terminalLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// walkMatch reports whether got is want, where a want line "..." matches
// any number of lines and "..." within a line any text, and a run of
// spaces any run (a table's columns are as wide as its longest path).
func walkMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if walkMatch(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && lineMatch(want[0], got[0]) && walkMatch(want[1:], got[1:])
}

func lineMatch(want, got string) bool {
	want, got = strings.Join(strings.Fields(want), " "), strings.Join(strings.Fields(got), " ")
	parts := strings.Split(want, "...")
	if len(parts) == 1 {
		return got == want
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	got = got[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(got, p)
		if i < 0 {
			return false
		}
		got = got[i+len(p):]
	}
	last := parts[len(parts)-1]
	return strings.HasSuffix(got, last)
}
