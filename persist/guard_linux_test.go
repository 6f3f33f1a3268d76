//go:build linux

package persist_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// shrunk maps a 4-page file, writes a byte in each page, and truncates the
// file to one page under the mapping, as another program may.
func shrunk(t *testing.T) (*persist.Region, string) {
	path := filepath.Join(structtest.TempShm(t), "shrunk.pm")
	r := mustMap(t, path, &persist.Options{Size: 4 * 4096, Create: true, ForcePMem: true})
	for p := 0; p < 4; p++ {
		r.Bytes()[p*4096+7] = byte(p + 1)
	}
	require.NoError(t, os.Truncate(path, 4096))
	return r, path
}

// A real SIGBUS (a load past the end of a truncated file) under Guard is a
// *MediaError naming the file and the page; the part still in the file
// reads as before, and nothing else is caught.
func TestGuardTruncatedRead(t *testing.T) {
	r, path := shrunk(t)
	var v byte
	err := r.Guard(func() error {
		v = r.Bytes()[7]
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, byte(1), v)

	err = r.Guard(func() error {
		v = r.Bytes()[2*4096+100]
		return nil
	})
	require.ErrorIs(t, err, persist.ErrMedia)
	require.ErrorIs(t, err, persist.ErrCorrupt, "a media error is corruption: the bytes cannot be read back")
	var me *persist.MediaError
	require.ErrorAs(t, err, &me)
	require.Equal(t, path, me.Path)
	require.Equal(t, int64(2*4096+100), me.Off)
	require.Equal(t, 4*4096, me.Size)
	lo, hi := me.Range()
	require.Equal(t, [2]int64{2 * 4096, 3 * 4096}, [2]int64{lo, hi})
	var re runtime.Error
	require.ErrorAs(t, err, &re, "the runtime's error is kept")
	require.Equal(t, fmt.Sprintf("persist: media error: fault at offset %d of %s (bytes %d to %d of its %d are unreadable)",
		2*4096+100, path, 2*4096, 3*4096, 4*4096), err.Error())

	// fn's own error comes back as it is.
	mine := errors.New("mine")
	require.Equal(t, mine, r.Guard(func() error { return mine }))
}

// A store that faults is caught too, in assembly (streaming stores of
// Copy) as in Go; a fault in a region not named is still an error, located
// later with Locate.
func TestGuardTruncatedWrite(t *testing.T) {
	r, path := shrunk(t)
	src := make([]byte, 8192)
	err := r.Guard(func() error {
		return r.Copy(r.Bytes()[4096:3*4096], src, persist.NonTemporal)
	})
	var me *persist.MediaError
	require.ErrorAs(t, err, &me)
	require.Equal(t, path, me.Path)
	require.GreaterOrEqual(t, me.Off, int64(4096))
	require.Less(t, me.Off, int64(2*4096), "the first page past the end faults")

	other, err := persist.Anonymous(4096, nil)
	require.NoError(t, err)
	defer other.Close()
	err = persist.Guard(func() error {
		r.Bytes()[3*4096] = 1
		return nil
	}, other)
	require.ErrorAs(t, err, &me)
	require.Equal(t, int64(-1), me.Off)
	require.Contains(t, err.Error(), "in no region guarded")
	require.True(t, me.Locate(other, r))
	require.Equal(t, int64(3*4096), me.Off)
	require.Equal(t, path, me.Path)
}

// Guard catches faults only: other panics, nil dereferences among them,
// go on.
func TestGuardOtherPanics(t *testing.T) {
	require.PanicsWithValue(t, "boom", func() {
		_ = persist.Guard(func() error { panic("boom") })
	})
	require.Panics(t, func() {
		_ = persist.Guard(func() error {
			var p *int
			_ = *p
			return nil
		})
	})
	require.Panics(t, func() {
		_ = persist.Guard(func() error {
			var s []byte
			_ = s[3]
			return nil
		})
	})
}

// TestGuardProcess runs the truncated read in a fresh process, guarded and
// not: unguarded, the SIGBUS is a fatal runtime fault (exit status 2, the
// file left as it was); guarded, the process reports the error and exits
// 0. This is what the commands rely on.
func TestGuardProcess(t *testing.T) {
	if mode := os.Getenv("BRAID_GUARD_CHILD"); mode != "" {
		guardChild(mode, os.Getenv("BRAID_GUARD_FILE"))
		return
	}
	for _, mode := range []string{"guarded", "unguarded"} {
		file := filepath.Join(structtest.TempShm(t), mode+".pm")
		cmd := exec.Command(os.Args[0], "-test.run=^TestGuardProcess$")
		cmd.Env = append(os.Environ(), "BRAID_GUARD_CHILD="+mode, "BRAID_GUARD_FILE="+file)
		out, err := cmd.CombinedOutput()
		if mode == "guarded" {
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "caught: persist: media error: fault at offset 12288 of "+file)
			continue
		}
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		require.Equal(t, 2, ee.ExitCode(), "%s", out)
		require.Contains(t, string(out), "SIGBUS")
	}
}

var sink byte

func guardChild(mode, file string) {
	r, err := persist.Map(file, &persist.Options{Size: 4 * 4096, Create: true})
	if err == nil {
		err = os.Truncate(file, 4096)
	}
	if err != nil {
		fmt.Println("setup:", err)
		os.Exit(3)
	}
	read := func() error {
		sink = r.Bytes()[3*4096] // a load the compiler keeps
		return nil
	}
	if mode == "unguarded" {
		_ = read()
		fmt.Println("unguarded read survived")
		os.Exit(4)
	}
	err = r.Guard(read)
	fmt.Println("caught:", err)
	if !errors.Is(err, persist.ErrMedia) {
		os.Exit(5)
	}
	os.Exit(0)
}
