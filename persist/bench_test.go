package persist_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

const benchRegionSize = 1 << 30

// benchMap maps the 1 GiB forced-PMem region on /dev/shm that the
// benchmarks write into (the setting libpmem is compared in, with
// PMEM_IS_PMEM_FORCE=1). It is shared by all benchmarks of the run.
func benchMap(b *testing.B) *persist.Region {
	return structtest.Shared(b, "persist-bench", benchRegionSize)
}

// BenchmarkCopyPersist copies size bytes to sequential destinations with
// default flags (streaming stores from the threshold up), each copy durable
// on return — libpmem's pmem_memcpy_persist.
func BenchmarkCopyPersist(b *testing.B) {
	for _, size := range []int{64, 256, 1024, 4096, 65536, 1048576} {
		b.Run(fmt.Sprint(size), func(b *testing.B) { benchCopy(b, size, 0) })
	}
}

// BenchmarkCopyFlags compares streaming and temporal copies size by size:
// the measurement behind DefaultMovntThreshold.
func BenchmarkCopyFlags(b *testing.B) {
	for _, fl := range []struct {
		name  string
		flags persist.Flags
	}{{"nt", persist.NonTemporal}, {"temporal", persist.Temporal}} {
		for _, size := range []int{8, 16, 32, 64, 128, 256, 1024, 4096} {
			b.Run(fmt.Sprintf("%s/%d", fl.name, size), func(b *testing.B) { benchCopy(b, size, fl.flags) })
		}
	}
}

func benchCopy(b *testing.B, size int, flags persist.Flags) {
	r := benchMap(b)
	b.Logf("%v", r)
	mem := r.Bytes()
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	b.SetBytes(int64(size))
	off := 0
	for b.Loop() {
		if off+size > len(mem) {
			off = 0
		}
		if err := r.Copy(mem[off:off+size], src, flags); err != nil {
			b.Fatal(err)
		}
		off += size
	}
}

// BenchmarkPersistLine is an 8-byte store and Persist of its line — the
// cost of one commit word (libpmem: store + pmem_persist).
func BenchmarkPersistLine(b *testing.B) {
	r := benchMap(b)
	mem := r.Bytes()
	lines := uint64(len(mem) / 64)
	b.Run("seq", func(b *testing.B) {
		var i uint64
		for b.Loop() {
			off := (i % lines) * 64
			binary.LittleEndian.PutUint64(mem[off:], i)
			if err := r.Persist(mem[off : off+8]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("rand", func(b *testing.B) {
		x := uint64(88172645463325252)
		for b.Loop() {
			x ^= x << 13 // xorshift: cheap and allocation-free
			x ^= x >> 7
			x ^= x << 17
			off := (x % lines) * 64
			binary.LittleEndian.PutUint64(mem[off:], x)
			if err := r.Persist(mem[off : off+8]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFlush is Flush of one line without a fence (libpmem:
// pmem_flush), to show the fence is what costs.
func BenchmarkFlush(b *testing.B) {
	r := benchMap(b)
	mem := r.Bytes()
	lines := len(mem) / 64
	i := 0
	for b.Loop() {
		off := (i % lines) * 64
		mem[off]++
		if err := r.Flush(mem[off : off+8]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	r.Drain()
}

var guardSink byte

// BenchmarkGuard is the fixed cost of Guard: one load bare, and the same
// load inside Guard (what a structure that guards each operation pays).
func BenchmarkGuard(b *testing.B) {
	r, err := persist.Anonymous(4096, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	mem := r.Bytes()
	b.Run("bare", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			guardSink += mem[i&4095]
		}
	})
	b.Run("guarded", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_ = r.Guard(func() error { guardSink += mem[i&4095]; return nil })
		}
	})
}
