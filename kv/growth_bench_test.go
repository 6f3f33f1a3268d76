package kv

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// BenchmarkPutGrowth: the latency of sync puts of new 8-byte keys (100 B
// values, 16 goroutines) into a store without ExpectedKeys, so that the
// index's shards grow all along; run it with -benchtime 1000000x for a
// 1 M-key index. It reports the latency percentiles (HdrHistogram, ns):
// a put that pays for a shard's growth shows in p99.9 and max.
func BenchmarkPutGrowth(b *testing.B) {
	o := benchOptions(b, 1, 1<<30)
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 100)
	var (
		next atomic.Uint64
		mu   sync.Mutex
		all  = hdrhistogram.New(1, int64(10*time.Second), 3)
	)
	b.SetBytes(int64(len(val) + 8))
	b.SetParallelism(benchClients / 2)
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		h := hdrhistogram.New(1, int64(10*time.Second), 3)
		for pb.Next() {
			t0 := time.Now()
			if err := s.Put(key8(next.Add(1)), val); err != nil {
				panic(err)
			}
			_ = h.RecordValue(int64(time.Since(t0)))
		}
		mu.Lock()
		all.Merge(h)
		mu.Unlock()
	})
	b.StopTimer()
	reportCPU(b, cpu0)
	for _, q := range []struct {
		name string
		at   float64
	}{{"p50-ns", 50}, {"p99-ns", 99}, {"p99.9-ns", 99.9}, {"p99.99-ns", 99.99}} {
		b.ReportMetric(float64(all.ValueAtQuantile(q.at)), q.name)
	}
	b.ReportMetric(float64(all.Max()), "max-ns")
}
