package persist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// trafficOps is a fixed sequence of operations with the traffic each must
// count on a flush region with streaming stores from 64 bytes.
var trafficOps = []struct {
	name string
	do   func(r *persist.Region, mem []byte) error
	want persist.Traffic // on a flush region
}{
	{"persist a word", func(r *persist.Region, m []byte) error { return r.Persist(m[8:16]) }, persist.Traffic{Fences: 1, Lines: 1}},
	{"persist 100 B across 3 lines", func(r *persist.Region, m []byte) error { return r.Persist(m[60:160]) }, persist.Traffic{Fences: 1, Lines: 3}},
	{"flush 2 lines, drain", func(r *persist.Region, m []byte) error {
		if err := r.Flush(m[128:256]); err != nil {
			return err
		}
		return r.Drain()
	}, persist.Traffic{Fences: 1, Lines: 2}},
	{"small copy", func(r *persist.Region, m []byte) error { return r.Copy(m[256:288], make([]byte, 32), 0) }, persist.Traffic{Fences: 1, Lines: 1}},
	{"streaming copy, aligned", func(r *persist.Region, m []byte) error {
		return r.Copy(m[4096:8192], make([]byte, 4096), 0)
	}, persist.Traffic{Fences: 1, Streamed: 4096}},
	{"streaming copy, ragged edges, no drain", func(r *persist.Region, m []byte) error {
		return r.Copy(m[3:103], make([]byte, 100), persist.NoDrain)
	}, persist.Traffic{Lines: 2, Streamed: 88}},
	{"set, streaming", func(r *persist.Region, m []byte) error { return r.Set(m[1024:1536], 7, 0) }, persist.Traffic{Fences: 1, Streamed: 512}},
	{"no-flush copy", func(r *persist.Region, m []byte) error { return r.Copy(m[0:8], []byte("abcdefgh"), persist.NoFlush) }, persist.Traffic{}},
}

// TestTrafficCounts runs trafficOps on a counting anonymous region (the
// real instructions) and on a counting simulated one, and checks each
// operation's count and that the bytes were written.
func TestTrafficCounts(t *testing.T) {
	if !asm.CanFlush() {
		t.Skip("no flush instructions in this build: anonymous regions are eADR")
	}
	anon, err := persist.Anonymous(1<<16, &persist.Options{Counters: true, MovntThreshold: 64})
	require.NoError(t, err)
	defer anon.Close()
	require.True(t, anon.Info().Counters)
	require.Contains(t, anon.String(), "traffic counted")
	require.Nil(t, anon.Domain(), "a counting mapping is still a real one")
	sim, err := persist.NewSimulated(make([]byte, 1<<16), persist.ModeFlush, &recorder{}, &persist.Options{Counters: true, MovntThreshold: 64})
	require.NoError(t, err)
	for _, r := range []*persist.Region{anon, sim} {
		mem := r.Bytes()
		for _, op := range trafficOps {
			before, ok := r.Traffic()
			require.True(t, ok)
			require.NoError(t, op.do(r, mem))
			after, _ := r.Traffic()
			require.Equal(t, op.want, after.Sub(before), "%s: %s", r.Info().Mapping, op.name)
		}
		require.Equal(t, byte(7), mem[1535])
		require.Equal(t, "abcdefgh", string(mem[0:8]))
		before, _ := r.Traffic()
		require.NoError(t, r.Sync())
		after, _ := r.Traffic()
		require.Equal(t, persist.Traffic{Fences: 1, Lines: 1 << 10}, after.Sub(before), "Sync")
	}
	require.Equal(t, "1 fences, 1024 lines flushed, 0 bytes streamed", persist.Traffic{Fences: 1, Lines: 1024}.String())
}

// TestTrafficForwards: a counting simulated region reports to its domain
// exactly what an uncounted one does, so crash tests may count.
func TestTrafficForwards(t *testing.T) {
	run := func(counters bool) []string {
		d := &recorder{}
		r, err := persist.NewSimulated(make([]byte, 1<<16), persist.ModeFlush, d, &persist.Options{Counters: counters, MovntThreshold: 64})
		require.NoError(t, err)
		if counters {
			require.Equal(t, persist.Domain(d), r.Domain(), "Domain is the simulated domain, not the counter")
		}
		for _, op := range trafficOps {
			require.NoError(t, op.do(r, r.Bytes()))
		}
		require.NoError(t, r.Sync())
		require.NoError(t, r.Close())
		return d.ops
	}
	require.Equal(t, run(false), run(true))

	// eADR: fences only, and msync: a flush syncs its pages and fences.
	for _, c := range []struct {
		mode persist.Mode
		want persist.Traffic
	}{{persist.ModeEADR, persist.Traffic{Fences: 1}}, {persist.ModeMsync, persist.Traffic{Fences: 1, Lines: 64}}} {
		r, err := persist.NewSimulated(make([]byte, 8192), c.mode, &recorder{}, &persist.Options{Counters: true})
		require.NoError(t, err)
		require.NoError(t, r.Persist(r.Bytes()[5000:5010]))
		got, _ := r.Traffic()
		require.Equal(t, c.want, got, "%v", c.mode)
	}
}

// TestTrafficOff: a region mapped without Counters says it does not count.
func TestTrafficOff(t *testing.T) {
	r, err := persist.Anonymous(1<<16, nil)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Persist(r.Bytes()[:8]))
	got, ok := r.Traffic()
	require.False(t, ok)
	require.Zero(t, got)
	require.False(t, r.Info().Counters)
}

// TestTrafficMapped: a forced-PMem file counts and grows; an msync file
// cannot count (its msync errors could not be returned) and says so; an
// eADR region counts fences only.
func TestTrafficMapped(t *testing.T) {
	t.Setenv("BRAID_FORCE_PMEM", "0")
	dir := structtest.TempShm(t)
	if asm.CanFlush() {
		r := mustMap(t, filepath.Join(dir, "f.pm"), &persist.Options{Size: 1 << 20, Create: true, ForcePMem: true, Counters: true})
		require.NoError(t, r.Persist(r.Bytes()[100:108]))
		require.NoError(t, r.Grow(2<<20))
		require.NoError(t, r.Persist(r.Bytes()[(2<<20)-8:]))
		got, ok := r.Traffic()
		require.True(t, ok)
		require.Equal(t, persist.Traffic{Fences: 2, Lines: 2}, got)
	}
	_, err := persist.Map(filepath.Join(dir, "m.pm"), &persist.Options{Size: 1 << 20, Create: true, Counters: true})
	require.ErrorIs(t, err, persist.ErrUnsupported)
	require.True(t, strings.Contains(err.Error(), "msync"), err.Error())

	e, err := persist.Anonymous(1<<16, &persist.Options{FenceOnly: true, Counters: true})
	require.NoError(t, err)
	defer e.Close()
	require.NoError(t, e.Persist(e.Bytes()[:100]))
	require.NoError(t, e.Copy(e.Bytes()[4096:8192], make([]byte, 4096), 0))
	got, _ := e.Traffic()
	require.Equal(t, uint64(2), got.Fences)
	require.Zero(t, got.Lines)
}

// BenchmarkCounters: the cost of counting, on two forced-PMem regions of
// 64 MiB on /dev/shm, one mapped with Counters: a line stored and
// persisted, and a 256-byte durable copy. Without Counters a region runs
// the code it ran before the option existed (compare BenchmarkPersistLine
// and BenchmarkCopyPersist of a build without it).
func BenchmarkCounters(b *testing.B) {
	for _, on := range []bool{false, true} {
		path := filepath.Join(structtest.ShmDir(), fmt.Sprintf("braid-counters-%d-%v.pm", os.Getpid(), on))
		r, err := persist.Map(path, &persist.Options{Size: 64 << 20, Create: true, ForcePMem: true, Counters: on})
		os.Remove(path)
		if err != nil {
			b.Fatal(err)
		}
		mem := r.Bytes()
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run("persist-line/"+name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				off := i % (len(mem) / 64) * 64
				mem[off]++
				if err := r.Persist(mem[off : off+8]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		src := make([]byte, 256)
		b.Run("copy-256/"+name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				off := i % (len(mem) / 256) * 256
				if err := r.Copy(mem[off:off+256], src, 0); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		r.Close()
	}
}
