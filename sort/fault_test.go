package sort

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/sort/sortbench"
	"github.com/stretchr/testify/require"
)

// requireClean checks that a failed sort left neither the output nor any
// temporary file.
func requireClean(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		left, _ := filepath.Glob(filepath.Join(d, "*pmsort*"))
		require.Empty(t, left, "temporary files left in %s", d)
	}
}

func TestSortBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	good, _, err := sortbench.GenerateBytes(sortbench.GenOptions{Count: 100})
	require.NoError(t, err)
	klv, _, err := sortbench.GenerateBytes(sortbench.GenOptions{Count: 100, Format: Format{KeySize: 10, KLV: true}, MaxValue: 50})
	require.NoError(t, err)
	many, _, err := sortbench.GenerateBytes(sortbench.GenOptions{Count: 100_000})
	require.NoError(t, err)

	cases := []struct {
		name string
		in   string
		o    Options
		want error
	}{
		{"not a multiple", write("odd", good[:250]), Options{}, ErrBadFormat},
		{"empty", write("empty", nil), Options{}, ErrEmpty},
		{"truncated KLV value", write("klvtrunc", klv[:len(klv)-1]), Options{Format: Format{KeySize: 10, KLV: true}}, ErrBadFormat},
		{"truncated KLV header", write("klvhdr", append(append([]byte{}, klv...), 1, 2, 3)), Options{Format: Format{KeySize: 10, KLV: true}}, ErrBadFormat},
		{"budget too small for onepass", write("many", many), Options{Mode: OnePass, MemBudget: MinMemBudget}, ErrBudget},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []Mode{OnePass, MergePass, EMS} {
				o := c.o
				if o.Mode == "" {
					o.Mode = mode
				}
				_, err := Sort(context.Background(), c.in, out, &o)
				require.ErrorIs(t, err, c.want, "mode %s", mode)
				require.NoFileExists(t, out)
				requireClean(t, dir)
			}
		})
	}
}

func TestSortPathErrors(t *testing.T) {
	dir := t.TempDir()
	in, inBytes := writeInput(t, dir, sortbench.GenOptions{Count: 1000})
	_, err := Sort(context.Background(), in, in, nil)
	require.ErrorIs(t, err, ErrSamePath)
	_, err = Sort(context.Background(), in, filepath.Join(dir, ".", "in"), nil)
	require.ErrorIs(t, err, ErrSamePath)
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Link(in, link))
	_, err = Sort(context.Background(), in, link, &Options{Overwrite: true})
	require.ErrorIs(t, err, ErrSamePath)

	out := filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(out, []byte("precious"), 0o644))
	_, err = Sort(context.Background(), in, out, nil)
	require.ErrorIs(t, err, ErrExists)
	b, _ := os.ReadFile(out)
	require.Equal(t, "precious", string(b))
	_, err = Sort(context.Background(), in, out, &Options{Overwrite: true})
	require.NoError(t, err)
	requireSorted(t, Gensort, inBytes, out)

	_, err = Sort(context.Background(), filepath.Join(dir, "missing"), filepath.Join(dir, "o2"), nil)
	require.Error(t, err)
	_, err = Sort(context.Background(), in, filepath.Join(dir, "nodir", "o"), nil)
	require.ErrorIs(t, err, ErrInvalid)
	requireClean(t, dir)
}

func TestSortUnwritableTempDir(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 5000})
	out := filepath.Join(dir, "out")
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	for _, tmp := range []string{filepath.Join(dir, "missing"), notDir} {
		for _, mode := range []Mode{MergePass, EMS, OnePass, Auto} {
			_, err := Sort(context.Background(), in, out, &Options{Mode: mode, TempDir: tmp, MemBudget: 1 << 20})
			require.ErrorIs(t, err, ErrInvalid)
			require.NoFileExists(t, out)
		}
	}
	requireClean(t, dir)
}

// A failure in the middle of the RUN phase (the disk fills up, say)
// removes the run files and the partial output.
func TestSortFailureCleansUp(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	in, _ := writeInput(t, dir, sortbench.GenOptions{Count: 20000})
	out := filepath.Join(dir, "out")
	for _, mode := range []Mode{MergePass, EMS} {
		s, err := NewSorter(&Options{Mode: mode, TempDir: tmp, MemBudget: 1 << 20, WriteBuffer: 16 << 10})
		require.NoError(t, err)
		s.runCap = 2000
		s.failAfterRuns = 3
		_, err = s.Sort(context.Background(), in, out)
		require.ErrorContains(t, err, "injected failure")
		require.NoFileExists(t, out)
		requireClean(t, dir, tmp)
		s.Close()
	}
	// Cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Sort(ctx, in, out, &Options{Mode: MergePass, TempDir: tmp, MemBudget: 1 << 20})
	require.ErrorIs(t, err, context.Canceled)
	require.NoFileExists(t, out)
	requireClean(t, dir, tmp)

	// Cancellation in the middle of the merge, once some records are
	// written: the merge goroutine (pipeMerge) stops too.
	for _, mode := range []Mode{MergePass, EMS, OnePass} {
		ctx, cancel = context.WithCancel(context.Background())
		var written int64
		s, err := NewSorter(&Options{Mode: mode, TempDir: tmp, MemBudget: 1 << 20, WriteBuffer: 16 << 10,
			Progress: func(done, total int64) {
				written = done
				if done > 0 && done < total {
					cancel()
				}
			}})
		require.NoError(t, err)
		s.runCap = 5000
		_, err = s.Sort(ctx, in, out)
		require.ErrorIs(t, err, context.Canceled, "%s", mode)
		require.Positive(t, written, "%s: cancelled after the first output write", mode)
		require.NoFileExists(t, out)
		requireClean(t, dir, tmp)
		s.Close()
		cancel()
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Mode: "fast"}, {PointerSize: 4}, {MemBudget: 1000}, {WriteBuffer: 100},
		{Pools: Pools{Readers: -1}}, {Format: Format{KeySize: 0, ValueSize: 5}},
	} {
		_, err := NewSorter(&o)
		require.Error(t, err, "%+v", o)
	}
}

func TestRunHeaderRoundTrip(t *testing.T) {
	for _, l := range []layout{newLayout(10, 5, false), newLayout(10, 8, true), newLayout(1, 5, false)} {
		h := runHeader{l: l, count: 3, inputSize: 12345}
		img := append(h.encode(), make([]byte, 3*l.e)...)
		got, err := decodeRunHeader(img)
		require.NoError(t, err)
		require.Equal(t, h, got)
		// Any flipped bit of the header is caught.
		for i := 0; i < runHeaderSize*8; i += 7 {
			bad := append([]byte(nil), img...)
			bad[i/8] ^= 1 << (i % 8)
			_, err := decodeRunHeader(bad)
			require.ErrorIs(t, err, ErrCorrupt, "bit %d", i)
		}
		_, err = decodeRunHeader(img[:len(img)-1])
		require.ErrorIs(t, err, ErrCorrupt)
	}
}

func FuzzDecodeKLV(f *testing.F) {
	klv, _, _ := sortbench.GenerateBytes(sortbench.GenOptions{Count: 5, Format: Format{KeySize: 4, KLV: true}, MaxValue: 20})
	f.Add(klv, 4)
	f.Add([]byte{1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff}, 4)
	f.Add([]byte{}, 1)
	f.Fuzz(func(t *testing.T, b []byte, k int) {
		if k < 1 || k > MaxKeySize {
			return
		}
		var n int
		var total int64
		err := ScanKLV(b, k, func(r KLVRecord) error {
			require.Equal(t, total, r.Off)
			total += r.Size(k)
			n++
			return nil
		})
		if err == nil {
			require.Equal(t, int64(len(b)), total)
			// A valid image validates and sorts like any other.
			if n > 0 {
				_, err := sortbench.ValidateBytes(context.Background(), b, sortbench.ValidateOptions{Format: Format{KeySize: k, KLV: true}})
				require.NoError(t, err)
			}
		} else {
			require.ErrorIs(t, err, ErrBadFormat)
		}
	})
}

func FuzzDecodeRunHeader(f *testing.F) {
	f.Add(append(runHeader{l: newLayout(10, 5, false), count: 1, inputSize: 100}.encode(), make([]byte, 15)...))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeRunHeader(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		require.Equal(t, int64(len(b)-runHeaderSize), h.count*int64(h.l.e))
	})
}
