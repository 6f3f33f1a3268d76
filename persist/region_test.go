package persist_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
	"github.com/stretchr/testify/require"
)

// flushMode is the mode of a forced or DAX file region: the flush path,
// or msync when this build has no flush instruction (purego).
func flushMode() persist.Mode {
	if asm.CanFlush() {
		return persist.ModeFlush
	}
	return persist.ModeMsync
}

func mustMap(t testing.TB, path string, o *persist.Options) *persist.Region {
	t.Helper()
	r, err := persist.Map(path, o)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

func TestMapCreateReopen(t *testing.T) {
	dir := structtest.TempShm(t)
	path := filepath.Join(dir, "a.pm")
	r, err := persist.Map(path, &persist.Options{Size: 1 << 20, Create: true, ForcePMem: true})
	require.NoError(t, err)
	require.Equal(t, 1<<20, r.Size())
	require.Len(t, r.Bytes(), 1<<20)
	info := r.Info()
	require.False(t, info.PMem, "tmpfs is not DAX")
	require.True(t, info.Forced)
	require.Equal(t, flushMode(), info.Mode)
	require.True(t, info.Prealloc)
	t.Log(r)

	copy(r.Bytes()[4096:], "hello, persistent world")
	require.NoError(t, r.Persist(r.Bytes()[4096:4096+23]))
	require.NoError(t, r.Close())
	require.ErrorIs(t, r.Close(), persist.ErrClosed)

	// Reopen: size from the file, contents kept.
	r2 := mustMap(t, path, nil)
	require.Equal(t, 1<<20, r2.Size())
	require.Equal(t, "hello, persistent world", string(r2.Bytes()[4096:4096+23]))
	require.Equal(t, persist.ModeMsync, r2.Info().Mode, "an unforced tmpfs file uses msync")
	require.True(t, r2.Info().Volatile)

	// Create without Exclusive opens the existing file.
	r3 := mustMap(t, path, &persist.Options{Size: 4096, Create: true})
	require.Equal(t, 4096, r3.Size())
	require.Equal(t, persist.ModeMsync, r3.Info().Mode)
}

func TestMapErrors(t *testing.T) {
	dir := structtest.TempShm(t)
	existing := filepath.Join(dir, "exists.pm")
	require.NoError(t, os.WriteFile(existing, make([]byte, 8192), 0o644))
	empty := filepath.Join(dir, "empty.pm")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))

	cases := []struct {
		name string
		path string
		opts *persist.Options
		want error
	}{
		{"empty path", "", nil, persist.ErrInvalid},
		{"create without size", filepath.Join(dir, "n1"), &persist.Options{Create: true}, persist.ErrInvalid},
		{"negative size", filepath.Join(dir, "n2"), &persist.Options{Size: -1, Create: true}, persist.ErrInvalid},
		{"exclusive without create", existing, &persist.Options{Exclusive: true}, persist.ErrInvalid},
		{"exclusive on existing", existing, &persist.Options{Size: 4096, Create: true, Exclusive: true}, os.ErrExist},
		{"missing file", filepath.Join(dir, "missing"), nil, os.ErrNotExist},
		{"file smaller than asked", existing, &persist.Options{Size: 1 << 20}, persist.ErrTooSmall},
		{"empty file", empty, nil, persist.ErrInvalid},
		{"read-only and create", filepath.Join(dir, "n3"), &persist.Options{Size: 4096, Create: true, ReadOnly: true}, persist.ErrInvalid},
		{"negative threshold", existing, &persist.Options{MovntThreshold: -1}, persist.ErrInvalid},
		{"unknown flush instruction", existing, &persist.Options{Flush: 9}, persist.ErrInvalid},
		{"bad perm", filepath.Join(dir, "n4"), &persist.Options{Size: 4096, Create: true, Perm: os.ModeDir | 0o644}, persist.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := persist.Map(c.path, c.opts)
			require.Nil(t, r)
			require.ErrorIs(t, err, c.want)
			t.Log(err)
		})
	}
	_, err := persist.Map(dir, nil)
	require.ErrorContains(t, err, "is a directory")

	// Failed creates leave no file behind.
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		_, err := os.Stat(filepath.Join(dir, n))
		require.ErrorIs(t, err, os.ErrNotExist, n)
	}
}

func TestMapReadOnlyFileForWriting(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may open any file for writing")
	}
	path := filepath.Join(t.TempDir(), "ro.pm")
	require.NoError(t, os.WriteFile(path, make([]byte, 4096), 0o444))
	_, err := persist.Map(path, nil)
	require.ErrorIs(t, err, os.ErrPermission)
	r := mustMap(t, path, &persist.Options{ReadOnly: true})
	require.True(t, r.Info().ReadOnly)
}

func TestReadOnlyRegion(t *testing.T) {
	path := filepath.Join(structtest.TempShm(t), "ro.pm")
	require.NoError(t, os.WriteFile(path, []byte("0123456789abcdef"), 0o644))
	r := mustMap(t, path, &persist.Options{ReadOnly: true})
	require.Equal(t, "0123456789abcdef", string(r.Bytes()))
	require.ErrorIs(t, r.Copy(r.Bytes()[:4], []byte("abcd"), 0), persist.ErrReadOnly)
	require.ErrorIs(t, r.Set(r.Bytes()[:4], 0, 0), persist.ErrReadOnly)
	require.ErrorIs(t, r.Grow(8192), persist.ErrReadOnly)
	require.ErrorIs(t, r.Writable(), persist.ErrReadOnly)
	require.NoError(t, r.Readable())
	require.NoError(t, r.Persist(r.Bytes()[:4]), "flushing read-only memory is harmless")
}

func TestAnonymous(t *testing.T) {
	r, err := persist.Anonymous(64<<10, nil)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "anonymous", r.Info().Mapping)
	require.True(t, r.Info().Volatile)
	if asm.CanFlush() {
		require.Equal(t, persist.ModeFlush, r.Info().Mode)
	} else {
		require.Equal(t, persist.ModeEADR, r.Info().Mode, "no flush instruction: fences only")
	}
	_, err = persist.Anonymous(0, nil)
	require.ErrorIs(t, err, persist.ErrInvalid)
	_, err = persist.Anonymous(-5, nil)
	require.ErrorIs(t, err, persist.ErrInvalid)
}

// modes lists every way a region can run on this machine.
func modes(t *testing.T) map[string]func() *persist.Region {
	dir := structtest.TempShm(t)
	m := map[string]func() *persist.Region{
		"eadr": func() *persist.Region {
			return mustMap(t, filepath.Join(dir, "eadr.pm"), &persist.Options{Size: 64 << 10, Create: true, ForcePMem: true, FenceOnly: true})
		},
		"msync": func() *persist.Region {
			return mustMap(t, filepath.Join(t.TempDir(), "msync.pm"), &persist.Options{Size: 64 << 10, Create: true})
		},
		"anonymous-nt-always": func() *persist.Region {
			r, err := persist.Anonymous(64<<10, &persist.Options{MovntThreshold: 1})
			require.NoError(t, err)
			t.Cleanup(func() { r.Close() })
			return r
		},
		"forced-nt-off": func() *persist.Region {
			return mustMap(t, filepath.Join(dir, "ntoff.pm"), &persist.Options{Size: 64 << 10, Create: true, ForcePMem: true, NoMovnt: true})
		},
	}
	for _, f := range []persist.FlushInstr{persist.FlushCLWB, persist.FlushCLFLUSHOPT, persist.FlushCLFLUSH} {
		f := f
		if _, err := persist.Anonymous(4096, &persist.Options{Flush: f}); err != nil {
			continue // not on this CPU
		}
		m[f.String()] = func() *persist.Region {
			return mustMap(t, filepath.Join(dir, f.String()+".pm"), &persist.Options{Size: 64 << 10, Create: true, ForcePMem: true, Flush: f})
		}
	}
	return m
}

var cutoffs = []int{0, 1, 7, 8, 63, 64, 65, 255, 256, 257, 4095, 4096, 4097}

func TestCopyAndSetEveryMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 8192)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for name, mk := range modes(t) {
		t.Run(name, func(t *testing.T) {
			r := mk()
			mem := r.Bytes()
			want := make([]byte, len(mem))
			for _, n := range cutoffs {
				for _, off := range []int{0, 1, 8, 13, 64, 100, 4095} {
					for _, fl := range []persist.Flags{0, persist.NoDrain, persist.NonTemporal, persist.Temporal, persist.NoFlush} {
						if fl == persist.NonTemporal && r.Info().NT == "off" && name == "msync" {
							continue
						}
						s := src[off%97 : off%97+n]
						require.NoError(t, r.Copy(mem[off:], s, fl))
						copy(want[off:], s)
						require.NoError(t, r.Drain())
						if !bytes.Equal(want, mem) {
							t.Fatalf("Copy n=%d off=%d flags=%v: memory differs", n, off, fl)
						}
						c := byte(n + off)
						require.NoError(t, r.Set(mem[off+3:off+3+n], c, fl))
						for i := off + 3; i < off+3+n; i++ {
							want[i] = c
						}
						if !bytes.Equal(want, mem) {
							t.Fatalf("Set n=%d off=%d flags=%v: memory differs", n, off, fl)
						}
					}
				}
			}
			require.NoError(t, r.Persist(mem[10:20]))
			require.NoError(t, r.Flush(mem[:4096]))
			require.NoError(t, r.Drain())
			require.NoError(t, r.Sync())
			// Overlapping source and destination behave like copy().
			require.NoError(t, r.Copy(mem[100:], mem[50:350], 0))
			copy(want[100:], want[50:350])
			require.Equal(t, want, mem)
		})
	}
}

func TestRangeAndArgumentErrors(t *testing.T) {
	r, err := persist.Anonymous(8192, nil)
	require.NoError(t, err)
	mem := r.Bytes()
	other := make([]byte, 128)

	require.ErrorIs(t, r.Flush(other), persist.ErrRange)
	require.ErrorIs(t, r.Persist(other), persist.ErrRange)
	require.ErrorIs(t, r.Copy(other, []byte("x"), 0), persist.ErrRange)
	require.ErrorIs(t, r.Set(other, 1, 0), persist.ErrRange)
	require.ErrorIs(t, r.Copy(mem[:4], []byte("too long"), 0), persist.ErrInvalid)
	require.ErrorIs(t, r.Copy(mem, []byte("x"), persist.NonTemporal|persist.Temporal), persist.ErrInvalid)
	require.ErrorIs(t, r.Copy(mem, []byte("x"), persist.NonTemporal|persist.NoFlush), persist.ErrInvalid)
	require.ErrorIs(t, r.Copy(mem, []byte("x"), 1<<9), persist.ErrInvalid)

	_, err = r.Slice(8000, 200)
	require.ErrorIs(t, err, persist.ErrRange)
	_, err = r.Slice(-1, 2)
	require.ErrorIs(t, err, persist.ErrRange)
	_, err = r.Slice(2, -1)
	require.ErrorIs(t, err, persist.ErrRange)
	s, err := r.Slice(8000, 192)
	require.NoError(t, err)
	require.Len(t, s, 192)
	off, err := r.Offset(s)
	require.NoError(t, err)
	require.Equal(t, 8000, off)
	_, err = r.Offset(other)
	require.ErrorIs(t, err, persist.ErrRange)

	require.NoError(t, r.Persist(nil), "an empty range is a fence")
	require.NoError(t, r.Writable())
	require.NoError(t, r.Close())
	require.ErrorIs(t, r.Writable(), persist.ErrClosed)
	require.ErrorIs(t, r.Readable(), persist.ErrClosed)
	require.ErrorIs(t, r.Persist(nil), persist.ErrClosed)
	require.ErrorIs(t, r.Flush(nil), persist.ErrClosed)
	require.ErrorIs(t, r.Drain(), persist.ErrClosed)
	require.ErrorIs(t, r.Copy(nil, nil, 0), persist.ErrClosed)
	require.ErrorIs(t, r.Sync(), persist.ErrClosed)
	require.ErrorIs(t, r.Grow(1<<20), persist.ErrClosed)
	_, err = r.Slice(0, 1)
	require.ErrorIs(t, err, persist.ErrClosed)
}

func TestEnvironmentOverrides(t *testing.T) {
	t.Setenv("BRAID_FORCE_PMEM", "1")
	path := filepath.Join(structtest.TempShm(t), "env.pm")
	r := mustMap(t, path, &persist.Options{Size: 4096, Create: true})
	require.True(t, r.Info().Forced)
	require.Equal(t, flushMode(), r.Info().Mode)

	if asm.HasCLWB && asm.HasCLFLUSHOPT {
		t.Setenv("BRAID_NO_CLWB", "1")
		require.Equal(t, persist.FlushCLFLUSHOPT, mustMap(t, path, nil).Info().Flush)
		t.Setenv("BRAID_NO_CLFLUSHOPT", "1")
		require.Equal(t, persist.FlushCLFLUSH, mustMap(t, path, nil).Info().Flush)
		// An explicit option wins over the environment.
		require.Equal(t, persist.FlushCLWB, mustMap(t, path, &persist.Options{Flush: persist.FlushCLWB}).Info().Flush)
	}
	t.Setenv("BRAID_MOVNT_THRESHOLD", "1024")
	if asm.NTPath() != "none" { // the portable build has no streaming stores
		require.Equal(t, 1024, mustMap(t, path, nil).Info().Threshold)
		require.Equal(t, 512, mustMap(t, path, &persist.Options{MovntThreshold: 512}).Info().Threshold)
	}
	t.Setenv("BRAID_NO_MOVNT", "1")
	require.Equal(t, "off", mustMap(t, path, nil).Info().NT)
	t.Setenv("BRAID_NO_FLUSH", "1")
	require.Equal(t, persist.ModeEADR, mustMap(t, path, nil).Info().Mode)

	for name, bad := range map[string]string{"BRAID_FORCE_PMEM": "yes", "BRAID_MOVNT_THRESHOLD": "-3"} {
		t.Setenv(name, bad)
		_, err := persist.Map(path, nil)
		require.ErrorIs(t, err, persist.ErrInvalid)
		require.Contains(t, err.Error(), name)
		t.Setenv(name, "")
	}
}

func TestProfileThreshold(t *testing.T) {
	dir := structtest.TempShm(t)
	p := &device.Profile{Format: device.ProfileFormat, MovntThreshold: 2048, SeqWrite: device.Peak{GBs: 10, Threads: 4, Knee: 3}}
	ppath := filepath.Join(dir, "profile.json")
	require.NoError(t, p.Save(ppath))
	got, err := device.LoadProfile(ppath)
	require.NoError(t, err)
	require.Equal(t, p, got)
	require.Equal(t, 3, got.WriteThreads())
	require.ErrorIs(t, p.Save(dir), persist.ErrInvalid, "a directory is not a profile file")
	require.GreaterOrEqual(t, got.ReadThreads(), 1)

	want := 2048
	if asm.NTPath() == "none" {
		want = 0 // the portable build has no streaming stores
	}
	r, err := persist.Anonymous(4096, &persist.Options{Profile: got})
	require.NoError(t, err)
	require.Equal(t, want, r.Info().Threshold)
	r.Close()
	t.Setenv("BRAID_PROFILE", ppath)
	r, err = persist.Anonymous(4096, nil)
	require.NoError(t, err)
	require.Equal(t, want, r.Info().Threshold)
	r.Close()

	require.NoError(t, os.WriteFile(ppath, []byte("{not json"), 0o644))
	_, err = device.LoadProfile(ppath)
	require.ErrorIs(t, err, persist.ErrInvalid)
	require.NoError(t, os.WriteFile(ppath, []byte(`{"format": 99}`), 0o644))
	_, err = device.LoadProfile(ppath)
	require.ErrorIs(t, err, persist.ErrInvalid)
	_, err = persist.Anonymous(4096, nil)
	require.Error(t, err, "a broken BRAID_PROFILE is reported")
}

func TestStore64(t *testing.T) {
	b := make([]byte, 24)
	persist.Store64(b[8:], 0x0102030405060708)
	require.Equal(t, uint64(0x0102030405060708), persist.Load64(b[8:]))
	require.Equal(t, byte(8), b[8])
	require.Panics(t, func() { persist.Store64(b[1:], 1) })
	require.Panics(t, func() { persist.Store64(b[20:], 1) })
	// A slice shorter than 8 bytes with room behind it: still refused, and
	// nothing behind it written.
	require.PanicsWithValue(t, "persist: 8-byte store or load on a slice of 4 bytes", func() { persist.Store64(b[0:4], 1) })
	require.Panics(t, func() { persist.Load64(b[8:10]) })
	require.Equal(t, make([]byte, 8), b[0:8])
}

func TestClaim(t *testing.T) {
	r, err := persist.Anonymous(1<<16, nil)
	require.NoError(t, err)
	rel1, err := r.Claim(0, 4096, "log A")
	require.NoError(t, err)
	rel2, err := r.Claim(4096, 4096, "log B")
	require.NoError(t, err, "adjacent areas do not overlap")
	_, err = r.Claim(4095, 2, "log C")
	require.ErrorIs(t, err, persist.ErrBusy)
	require.ErrorContains(t, err, "log C at bytes 4095..4097 overlaps log A at 0..4096")
	_, err = r.Claim(100, 10, "inner")
	require.ErrorIs(t, err, persist.ErrBusy)
	rel1()
	rel1() // idempotent: does not release another claim
	rel3, err := r.Claim(100, 10, "inner")
	require.NoError(t, err)
	_, err = r.Claim(4100, 1, "x")
	require.ErrorIs(t, err, persist.ErrBusy, "log B still holds its area")
	rel2()
	rel3()
	_, err = r.Claim(0, 0, "empty")
	require.ErrorIs(t, err, persist.ErrInvalid)
	_, err = r.Claim(1<<16-8, 16, "past the end")
	require.ErrorIs(t, err, persist.ErrRange)
	_, err = r.Claim(-1, 16, "negative")
	require.ErrorIs(t, err, persist.ErrRange)
	_, err = r.Claim(0, 1<<16, "all")
	require.NoError(t, err)
	require.NotContains(t, r.String(), "closed")
	require.NoError(t, r.Close())
	_, err = r.Claim(0, 8, "after close")
	require.ErrorIs(t, err, persist.ErrClosed)
	require.True(t, r.Info().Closed)
	require.Contains(t, r.String(), ", closed")
}

func TestGrow(t *testing.T) {
	path := filepath.Join(structtest.TempShm(t), "grow.pm")
	r := mustMap(t, path, &persist.Options{Size: 4096, Create: true, ForcePMem: true})
	copy(r.Bytes()[100:], "kept")
	require.NoError(t, r.Grow(1<<20))
	require.Equal(t, 1<<20, r.Size())
	require.Equal(t, "kept", string(r.Bytes()[100:104]))
	require.NoError(t, r.Persist(r.Bytes()[1<<19:1<<19+8]))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), st.Size())
	require.ErrorIs(t, r.Grow(4096), persist.ErrInvalid)

	a, err := persist.Anonymous(4096, nil)
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Grow(8192))
	require.Equal(t, 8192, a.Size())
}

// recorder is a Domain that logs what a simulated region reports.
type recorder struct{ ops []string }

func (d *recorder) Flush(off, n int)  { d.ops = append(d.ops, "flush", itoa(off), itoa(n)) }
func (d *recorder) Stream(off, n int) { d.ops = append(d.ops, "stream", itoa(off), itoa(n)) }
func (d *recorder) Fence()            { d.ops = append(d.ops, "fence") }
func (d *recorder) Close() error      { d.ops = append(d.ops, "close"); return nil }

func itoa(n int) string {
	return string(rune('0'+n/1000%10)) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

func TestSimulatedReports(t *testing.T) {
	mem := make([]byte, 8192)
	d := &recorder{}
	r, err := persist.NewSimulated(mem, persist.ModeFlush, d, &persist.Options{MovntThreshold: 64})
	require.NoError(t, err)

	require.NoError(t, r.Persist(mem[8:16]))
	require.Equal(t, []string{"flush", "0008", "0008", "fence"}, d.ops)
	d.ops = nil
	// A streaming copy: whole words streamed, the partial words at both
	// ends stored and their lines flushed, then one fence.
	require.NoError(t, r.Copy(mem[3:3+100], make([]byte, 100), 0))
	require.Equal(t, []string{"stream", "0008", "0088", "flush", "0003", "0001", "flush", "0102", "0001", "fence"}, d.ops)
	d.ops = nil
	// Whole words, aligned: what the hardware path copies inline, and
	// still every stream and fence reported.
	require.NoError(t, r.Copy(mem[256:256+128], make([]byte, 128), 0))
	require.NoError(t, r.Copy(mem[512:512+64], make([]byte, 64), persist.NoDrain))
	require.Equal(t, []string{"stream", "0256", "0128", "fence", "stream", "0512", "0064"}, d.ops)
	d.ops = nil
	require.NoError(t, r.Copy(mem[64:64+8], []byte("12345678"), persist.NoDrain))
	require.Equal(t, []string{"flush", "0064", "0008"}, d.ops)
	d.ops = nil
	// NonTemporal streams below the threshold, and in every build (the
	// portable one has no streaming stores of its own): a simulation
	// replays the same everywhere.
	require.NoError(t, r.Copy(mem[64:64+8], []byte("12345678"), persist.NonTemporal|persist.NoDrain))
	require.Equal(t, []string{"stream", "0064", "0008"}, d.ops)
	d.ops = nil
	require.NoError(t, r.Set(mem[128:128+64], 7, persist.NoDrain))
	require.Equal(t, []string{"stream", "0128", "0064"}, d.ops)
	d.ops = nil
	require.NoError(t, r.Close())
	require.Equal(t, []string{"close"}, d.ops)

	// msync mode: a Flush syncs whole pages and fences at once.
	d2 := &recorder{}
	r2, err := persist.NewSimulated(mem, persist.ModeMsync, d2, nil)
	require.NoError(t, err)
	require.NoError(t, r2.Flush(mem[5000:5010]))
	require.NoError(t, r2.Drain())
	require.Equal(t, []string{"flush", "4096", "4096", "fence"}, d2.ops)

	// eADR mode: fences, no flushes; streaming stores are told (which
	// words were stored whole), as the hardware path issues them.
	d3 := &recorder{}
	r3, err := persist.NewSimulated(mem, persist.ModeEADR, d3, nil)
	require.NoError(t, err)
	require.NoError(t, r3.Persist(mem[0:64]))
	require.NoError(t, r3.Copy(mem[0:512], make([]byte, 512), 0))
	require.NoError(t, r3.Copy(mem[8:13], []byte("12345"), 0))
	require.Equal(t, []string{"fence", "stream", "0000", "0512", "fence", "fence"}, d3.ops)

	_, err = persist.NewSimulated(mem, persist.ModeFlush, nil, nil)
	require.ErrorIs(t, err, persist.ErrInvalid)
	_, err = persist.NewSimulated(nil, persist.ModeFlush, d, nil)
	require.ErrorIs(t, err, persist.ErrInvalid)
	_, err = persist.NewSimulated(mem, 0, d, nil)
	require.ErrorIs(t, err, persist.ErrInvalid)
	require.True(t, errors.Is(r.Flush(mem), persist.ErrClosed))
}

// Large mappings start on a 2 MiB boundary, so DAX and THP can use huge
// pages.
func TestLargeMappingsAreHugeAligned(t *testing.T) {
	r := mustMap(t, filepath.Join(structtest.TempShm(t), "big.pm"), &persist.Options{Size: 6 << 20, Create: true})
	require.Zero(t, uintptr(unsafe.Pointer(&r.Bytes()[0]))%(2<<20))
	a, err := persist.Anonymous(4<<20+100, nil)
	require.NoError(t, err)
	defer a.Close()
	require.Zero(t, uintptr(unsafe.Pointer(&a.Bytes()[0]))%(2<<20))
	a.Bytes()[4<<20+99] = 1 // the whole length is mapped
	require.NoError(t, a.Grow(8<<20))
	require.Equal(t, byte(1), a.Bytes()[4<<20+99])
}
