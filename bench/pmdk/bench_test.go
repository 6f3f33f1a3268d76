//go:build pmdk

package pmdk

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/braid-pm/braid/internal/structtest"
)

// regionSize is the size of both copy/persist regions (issue 2: a 1 GiB
// forced-PMem region on /dev/shm).
const regionSize = 1 << 30

// Pool sizes of the PMDK reference benchmarks.
const (
	logPoolSize = 256 << 20
	blkPoolSize = 256 << 20
	objPoolSize = 64 << 20
	objRootSize = 16 << 20
)

var copySizes = []int{64, 256, 1024, 4096, 65536, 1048576}

// benchFile names a file of this process; it is unlinked as soon as it is
// mapped, so nothing is left behind even when the run is killed.
func benchFile(what string) string {
	return filepath.Join(structtest.ShmDir(), fmt.Sprintf("braid-pmdk-%d-%s.pm", os.Getpid(), what))
}

// Shared state of the run: the two regions are mapped in TestMain (so that
// their descriptions head the output), the pools on first use.
var (
	braidRegion *Region
	pmemRegion  *PMem

	logOnce, blkOnce, objOnce sync.Once
	logPool                   *Log
	blkPool                   *Blk
	objPool                   *Obj
	logErr, blkErr, objErr    error
)

func TestMain(m *testing.M) {
	// libpmem reads PMEM_IS_PMEM_FORCE when it first decides whether a
	// mapping is PMem, after this point; the Makefile sets it as well.
	if os.Getenv("PMEM_IS_PMEM_FORCE") == "" {
		os.Setenv("PMEM_IS_PMEM_FORCE", "1")
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		if err := mapRegions(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	closeAll()
	os.Exit(code)
}

// mapRegions maps and pre-faults both 1 GiB regions (together: Prefault)
// and prints what runs, as benchstat configuration lines.
func mapRegions() error {
	var err error
	path := benchFile("braid")
	braidRegion, err = MapBraid(path, regionSize)
	os.Remove(path)
	if err != nil {
		return err
	}
	path = benchFile("libpmem")
	pmemRegion, err = MapPMem(path, regionSize)
	os.Remove(path)
	if err != nil {
		return err
	}
	if err := Prefault(braidRegion, pmemRegion); err != nil {
		return err
	}
	// The file name (with the pid) is left out, so that the lines of
	// several runs are equal and compare prints them once.
	info := braidRegion.Persist().Info()
	fmt.Printf("braid-region: %s\n", strings.TrimPrefix(info.String(), info.Path+": "))
	fmt.Printf("libpmem-region: %s, is_pmem=%v, PMEM_IS_PMEM_FORCE=%s\n", byteString(regionSize), pmemRegion.IsPMem(), os.Getenv("PMEM_IS_PMEM_FORCE"))
	if !pmemRegion.IsPMem() {
		return fmt.Errorf("pmdk: libpmem does not take %s for PMem: set PMEM_IS_PMEM_FORCE=1", structtest.ShmDir())
	}
	return nil
}

func closeAll() {
	if braidRegion != nil {
		braidRegion.Close()
	}
	if pmemRegion != nil {
		pmemRegion.Close()
	}
	if logPool != nil {
		logPool.Close()
	}
	if blkPool != nil {
		blkPool.Close()
	}
	if objPool != nil {
		objPool.Close()
	}
}

func regions(b *testing.B) (*Region, *PMem) {
	if braidRegion == nil || pmemRegion == nil {
		b.Fatal("regions not mapped (TestMain maps them when -test.bench is set)")
	}
	return braidRegion, pmemRegion
}

func byteString(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " B"
}

// pattern returns n bytes of a fixed pattern, 64-byte aligned like a
// buffer from malloc of that size would be on the C side.
func pattern(n int) []byte {
	b := make([]byte, n+64)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & 63)
	b = b[off : off+n : off+n]
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// BenchmarkCopyPersist: size bytes to sequential destinations, each copy
// durable on return (Copy with default flags / pmem_memcpy_persist).
func BenchmarkCopyPersist(b *testing.B) {
	for _, size := range copySizes {
		src := pattern(size)
		b.Run(fmt.Sprintf("braid/%d", size), func(b *testing.B) {
			g, _ := regions(b)
			b.SetBytes(int64(size))
			b.ResetTimer()
			if err := g.CopyPersist(src, b.N); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("libpmem/%d", size), func(b *testing.B) {
			_, p := regions(b)
			b.SetBytes(int64(size))
			b.ResetTimer()
			p.CopyPersist(src, b.N)
		})
	}
}

// BenchmarkPersistLine: an 8-byte store and a persist of its line
// (Persist / pmem_persist), on consecutive or random lines.
func BenchmarkPersistLine(b *testing.B) {
	for _, pat := range []string{"seq", "rand"} {
		b.Run("braid/"+pat, func(b *testing.B) {
			g, _ := regions(b)
			run := g.PersistSeq
			if pat == "rand" {
				run = g.PersistRand
			}
			b.ResetTimer()
			if err := run(b.N); err != nil {
				b.Fatal(err)
			}
		})
		b.Run("libpmem/"+pat, func(b *testing.B) {
			_, p := regions(b)
			run := p.PersistSeq
			if pat == "rand" {
				run = p.PersistRand
			}
			b.ResetTimer()
			run(b.N)
		})
	}
}

// BenchmarkFlush: a flush of one line without a fence (Flush /
// pmem_flush); one drain ends each batch.
func BenchmarkFlush(b *testing.B) {
	b.Run("braid", func(b *testing.B) {
		g, _ := regions(b)
		b.ResetTimer()
		if err := g.Flush(b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("libpmem", func(b *testing.B) {
		_, p := regions(b)
		b.ResetTimer()
		p.Flush(b.N)
	})
}

// BenchmarkPMDKLogAppend: pmemlog_append of size bytes (walog's reference).
func BenchmarkPMDKLogAppend(b *testing.B) {
	logOnce.Do(func() {
		path := benchFile("log")
		logPool, logErr = CreateLog(path, logPoolSize)
		os.Remove(path)
	})
	if logErr != nil {
		b.Fatal(logErr)
	}
	for _, size := range []int{64, 256, 1024, 4096} {
		buf := pattern(size)
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ResetTimer()
			if err := logPool.Append(buf, b.N); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkPMDKBlkWrite: pmemblk_write of 4 KiB blocks, sequential block
// numbers (pagelog's reference).
func BenchmarkPMDKBlkWrite(b *testing.B) {
	const bsize = 4096
	blkOnce.Do(func() {
		path := benchFile("blk")
		blkPool, blkErr = CreateBlk(path, bsize, blkPoolSize)
		os.Remove(path)
	})
	if blkErr != nil {
		b.Fatal(blkErr)
	}
	buf := pattern(bsize)
	b.Run(strconv.Itoa(bsize), func(b *testing.B) {
		b.SetBytes(bsize)
		b.ResetTimer()
		if err := blkPool.Write(buf, b.N); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkPMDKObjTx: a libpmemobj transaction adding a 16-byte range to
// the undo log and storing into it (cow and fam's reference).
func BenchmarkPMDKObjTx(b *testing.B) {
	objOnce.Do(func() {
		path := benchFile("obj")
		objPool, objErr = CreateObj(path, objPoolSize, objRootSize)
		os.Remove(path)
	})
	if objErr != nil {
		b.Fatal(objErr)
	}
	val := pattern(16)
	b.Run("16", func(b *testing.B) {
		b.SetBytes(16)
		b.ResetTimer()
		if err := objPool.Tx(val, b.N); err != nil {
			b.Fatal(err)
		}
	})
}
