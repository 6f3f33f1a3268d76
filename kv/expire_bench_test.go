package kv

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkPutTTL: BenchmarkPut's sync mode (16 goroutines, 8-byte keys)
// with a deadline on every put (PutAt): the cost of the deadline's 8 bytes
// and of filing it for the expirer.
func BenchmarkPutTTL(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("sync/%dB", size), func(b *testing.B) {
			c := newFakeClock(t0)
			o := benchOptions(b, 1, 1<<30)
			o.Clock = c.now
			s, err := Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			val := make([]byte, size)
			var next atomic.Uint64
			b.SetBytes(int64(size + 8))
			b.ResetTimer()
			cpu0 := cpuTime()
			b.SetParallelism(benchClients / 2)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					if err := s.PutAt(key8(i), val, t0+3_600_000+int64(i)); err != nil {
						panic(err)
					}
				}
			})
			b.StopTimer()
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkExpire: the expirer's cost per expired key — b.N keys of 100 B
// put with a deadline, the clock moved past it, then one expireAll (the
// expirer's rounds: the heap, the index check, each version turned into a
// tombstone by its segment's worker, batched, one fence per batch).
func BenchmarkExpire(b *testing.B) {
	c := newFakeClock(t0)
	o := benchOptions(b, 1, 1<<30)
	o.Clock = c.now
	o.ExpireInterval = -1
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 100)
	var bt Batch
	for i := 0; i < b.N; i += 64 {
		bt.Reset()
		for j := i; j < min(i+64, b.N); j++ {
			bt.PutAt(key8(uint64(j)), val, t0+1)
		}
		if err := s.Apply(&bt); err != nil {
			b.Fatal(err)
		}
	}
	c.advance(2)
	b.ResetTimer()
	cpu0 := cpuTime()
	n, err := s.expireAll()
	b.StopTimer()
	reportCPU(b, cpu0)
	if err != nil || n != b.N {
		b.Fatalf("expired %d of %d: %v", n, b.N, err)
	}
}
