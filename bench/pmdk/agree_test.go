//go:build pmdk

package pmdk

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSidesAgree runs every loop on both sides over small regions and
// checks that they wrote the same bytes: the two sides of each benchmark
// do the same work.
func TestSidesAgree(t *testing.T) {
	const size = 1 << 20
	path := benchFile("agree-braid")
	g, err := MapBraid(path, size)
	os.Remove(path)
	require.NoError(t, err)
	defer g.Close()
	path = benchFile("agree-libpmem")
	p, err := MapPMem(path, size)
	os.Remove(path)
	require.NoError(t, err)
	defer p.Close()
	require.True(t, p.IsPMem(), "PMEM_IS_PMEM_FORCE=1 is set by TestMain")
	require.NoError(t, Prefault(g, p))
	require.Equal(t, make([]byte, size), g.Bytes(), "pre-faulted with zeros")
	require.Equal(t, make([]byte, size), p.Bytes())

	same := func(what string) {
		t.Helper()
		require.True(t, bytes.Equal(g.Bytes(), p.Bytes()), "%s: the two regions differ", what)
	}
	// Odd sizes and counts that wrap around the region's end.
	for _, n := range []int{1, 7, 300} {
		for _, sz := range []int{64, 100, 4096, 65536, 1048576} {
			src := pattern(sz)
			require.NoError(t, g.CopyPersist(src, n))
			p.CopyPersist(src, n)
			same("CopyPersist")
		}
	}
	require.NoError(t, g.PersistSeq(size/64+10))
	p.PersistSeq(size/64 + 10)
	same("PersistSeq")
	require.NoError(t, g.PersistRand(5000))
	p.PersistRand(5000)
	same("PersistRand")
	require.NoError(t, g.Flush(size/64+3))
	p.Flush(size/64 + 3)
	same("Flush")
}

func TestPools(t *testing.T) {
	path := benchFile("test-log")
	l, err := CreateLog(path, 4<<20)
	os.Remove(path)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.Append(pattern(4096), 3000), "appends past the end rewind")

	path = benchFile("test-blk")
	b, err := CreateBlk(path, 4096, 32<<20)
	os.Remove(path)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.Write(pattern(4096), 20000), "writes past the last block wrap")

	path = benchFile("test-obj")
	o, err := CreateObj(path, 16<<20, 1<<20)
	os.Remove(path)
	require.NoError(t, err)
	defer o.Close()
	require.NoError(t, o.Tx(pattern(16), 100000), "offsets past the root's end wrap")

	_, err = MapPMem("/nonexistent-dir/x.pm", 1<<20)
	require.ErrorContains(t, err, "pmem_map_file")
	_, err = CreateLog("/nonexistent-dir/x.pm", 4<<20)
	require.ErrorContains(t, err, "pmemlog_create")
}
