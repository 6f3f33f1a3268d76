package sort

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/sort/sortbench"
	"github.com/stretchr/testify/require"
)

func writeInput(t testing.TB, dir string, o sortbench.GenOptions) (string, []byte) {
	t.Helper()
	b, _, err := sortbench.GenerateBytes(o)
	require.NoError(t, err)
	p := filepath.Join(dir, "in")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p, b
}

// requireSorted checks out with the validator: in order, same record
// count and checksum as the input.
func requireSorted(t testing.TB, f Format, in []byte, outPath string) {
	t.Helper()
	out, err := os.ReadFile(outPath)
	require.NoError(t, err)
	vo := sortbench.ValidateOptions{Format: f}
	si, err := sortbench.ValidateBytes(context.Background(), in, vo)
	require.NoError(t, err)
	so, err := sortbench.ValidateBytes(context.Background(), out, vo)
	require.NoError(t, err)
	require.True(t, so.OK(), "output unordered: %d records, first %s", so.Unordered, so.FirstUnordered)
	require.Equal(t, si.Records, so.Records)
	require.Equal(t, si.Checksum, so.Checksum)
}

func TestSortModesAndFormats(t *testing.T) {
	formats := []struct {
		name string
		g    sortbench.GenOptions
	}{
		{"gensort", sortbench.GenOptions{Count: 20000}},
		{"gensort-skew", sortbench.GenOptions{Count: 20000, Skew: true, Start: sortbench.U128(1 << 20)}},
		{"ascii", sortbench.GenOptions{Count: 5000, ASCII: true, Skew: true}},
		{"fixed8+24", sortbench.GenOptions{Count: 30000, Format: Format{KeySize: 8, ValueSize: 24}}},
		{"fixed1+3", sortbench.GenOptions{Count: 5000, Format: Format{KeySize: 1, ValueSize: 3}}},
		{"fixed20+0", sortbench.GenOptions{Count: 5000, Format: Format{KeySize: 20}}},
		{"klv10", sortbench.GenOptions{Count: 20000, Format: Format{KeySize: 10, KLV: true}, MinValue: 0, MaxValue: 200}},
		{"klv3-skew", sortbench.GenOptions{Count: 8000, Skew: true, Format: Format{KeySize: 3, KLV: true}, MaxValue: 40}},
	}
	modes := []struct {
		name string
		o    Options
	}{
		{"auto", Options{}},
		{"onepass", Options{Mode: OnePass, WriteBuffer: 8 << 10}},
		{"onepass-overlap-ptr8", Options{Mode: OnePass, Overlap: true, PointerSize: 8, WriteBuffer: 4096}},
		{"mergepass", Options{Mode: MergePass, MemBudget: 1 << 20, WriteBuffer: 16 << 10}},
		{"mergepass-overlap", Options{Mode: MergePass, MemBudget: 1 << 20, WriteBuffer: 16 << 10, Overlap: true}},
		{"ems", Options{Mode: EMS, MemBudget: 1 << 20, WriteBuffer: 16 << 10}},
		{"ems-overlap-1thread", Options{Mode: EMS, MemBudget: 2 << 20, WriteBuffer: 16 << 10, Overlap: true,
			Pools: Pools{Readers: 1, Writers: 1, Sorters: 1}}},
	}
	for _, f := range formats {
		dir := t.TempDir()
		in, inBytes := writeInput(t, dir, f.g)
		format := f.g.Format
		if format == (Format{}) {
			format = Gensort
		}
		for _, m := range modes {
			t.Run(f.name+"/"+m.name, func(t *testing.T) {
				o := m.o
				o.Format = format
				out := filepath.Join(dir, "out-"+m.name)
				s, err := NewSorter(&o)
				require.NoError(t, err)
				defer s.Close()
				s.runCap = 3000
				rep, err := s.Sort(context.Background(), in, out)
				require.NoError(t, err)
				requireSorted(t, format, inBytes, out)
				if m.o.Mode != "" {
					require.Equal(t, string(m.o.Mode), rep.Mode)
				}
				if m.o.Mode == MergePass || m.o.Mode == EMS {
					require.Greater(t, rep.Runs, 1, "budget should force several runs")
				}
				require.NoError(t, os.Remove(out))
				left, _ := filepath.Glob(filepath.Join(dir, "*pmsort*"))
				require.Empty(t, left, "temporary files left behind")
			})
		}
	}
}

func TestSortDuplicatesAndTinyInputs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{1, 2, 3, 17, 300} {
		// All keys equal, then keys from a tiny alphabet.
		for _, alpha := range []int{1, 3} {
			b := make([]byte, 0, n*100)
			for i := 0; i < n; i++ {
				rec := make([]byte, 100)
				for k := 0; k < 10; k++ {
					rec[k] = byte('a' + (i*7+k*3)%alpha)
				}
				copy(rec[10:], fmt.Sprintf("record %d", i))
				b = append(b, rec...)
			}
			in := filepath.Join(dir, fmt.Sprintf("in-%d-%d", n, alpha))
			require.NoError(t, os.WriteFile(in, b, 0o644))
			for _, mode := range []Mode{OnePass, MergePass, EMS} {
				out := in + "-" + string(mode)
				_, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 1 << 20, WriteBuffer: 4096})
				require.NoError(t, err, "n=%d alpha=%d mode=%s", n, alpha, mode)
				requireSorted(t, Gensort, b, out)
			}
		}
	}
}

func TestSorterReuse(t *testing.T) {
	dir := t.TempDir()
	in, inBytes := writeInput(t, dir, sortbench.GenOptions{Count: 30000})
	s, err := NewSorter(&Options{MemBudget: 1 << 20, WriteBuffer: 16 << 10})
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 3; i++ {
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		_, err := s.Sort(context.Background(), in, out)
		require.NoError(t, err)
		requireSorted(t, Gensort, inBytes, out)
	}
}

// TestMemoryBudget checks, for every mode and for gensort, KLV and other
// fixed-size records, that the planned buffers stay within a budget that
// binds (the input is larger than the budget), that what the sorter maps
// is what it planned, and that its anonymous memory stays within the
// budget (plus Go runtime slack).
func TestMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	inputs := []struct {
		name    string
		g       sortbench.GenOptions
		budgets map[Mode]int64
	}{
		{"gensort", sortbench.GenOptions{Count: 400_000}, map[Mode]int64{OnePass: 16 << 20, MergePass: 4 << 20, EMS: 8 << 20}},
		{"klv12", sortbench.GenOptions{Count: 150_000, Format: Format{KeySize: 12, KLV: true}, MaxValue: 300},
			map[Mode]int64{OnePass: 8 << 20, MergePass: 3 << 20, EMS: 6 << 20}},
		{"fixed16+48", sortbench.GenOptions{Count: 250_000, Format: Format{KeySize: 16, ValueSize: 48}},
			map[Mode]int64{OnePass: 10 << 20, MergePass: 3 << 20, EMS: 6 << 20}},
	}
	for _, in := range inputs {
		f := in.g.Format
		if f == (Format{}) {
			f = Gensort
		}
		path := filepath.Join(dir, in.name)
		_, err := sortbench.Generate(context.Background(), path, in.g, false)
		require.NoError(t, err)
		for i, mode := range []Mode{OnePass, MergePass, EMS} {
			budget := in.budgets[mode]
			overlap := i == 1 // MergePass with two write buffers
			name := fmt.Sprintf("%s/%s overlap=%v", in.name, mode, overlap)
			runtimeGC()
			base := rssAnon()
			out := filepath.Join(dir, "out")
			s, err := NewSorter(&Options{Format: f, Mode: mode, MemBudget: budget, Overlap: overlap})
			require.NoError(t, err)
			rep, err := s.Sort(context.Background(), path, out)
			require.NoError(t, err, name)
			require.LessOrEqual(t, rep.BufferBytes, budget, name)
			// The budget binds: the plan takes most of it.
			require.Greater(t, rep.BufferBytes, budget*3/4, name)
			// What is mapped is what was planned and reported.
			p := s.planned
			require.Equal(t, p.main, int64(cap(s.main)), name)
			require.Equal(t, p.wbArea, int64(cap(s.wbufs)), name)
			require.Equal(t, p.main+p.wbArea+p.fixed, rep.BufferBytes, name)
			if base > 0 && rep.PeakRSSAnon > 0 {
				require.LessOrEqual(t, rep.PeakRSSAnon-base, budget+8<<20,
					"%s: peak RssAnon %d, %d before", name, rep.PeakRSSAnon, base)
			}
			require.NoError(t, s.Close())
			require.NoError(t, os.Remove(out))
		}
		require.NoError(t, os.Remove(path))
	}
}

// TestBuffersFitTheInput: a small input under a large budget maps buffers
// of about its own size, not the budget.
func TestBuffersFitTheInput(t *testing.T) {
	dir := t.TempDir()
	in, inBytes := writeInput(t, dir, sortbench.GenOptions{Count: 3000}) // 300 KB
	for _, mode := range []Mode{OnePass, MergePass, EMS} {
		out := filepath.Join(dir, "out-"+string(mode))
		rep, err := Sort(context.Background(), in, out, &Options{Mode: mode, MemBudget: 8 << 30})
		require.NoError(t, err)
		requireSorted(t, Gensort, inBytes, out)
		require.Less(t, rep.BufferBytes, int64(8<<20), "%s: %d bytes of buffers for a 300 KB input", mode, rep.BufferBytes)
	}
}
