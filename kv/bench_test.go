package kv

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	pmdevice "github.com/braid-pm/braid/persist/device"
)

// Benchmarks run on /dev/shm with the PMem path forced (BRAID_FORCE_PMEM=1
// or Options.PMem): see the README for the commands and the figures.

func benchOptions(b *testing.B, devs int, devSize int64) *Options {
	dir := structtest.TempShm(b)
	o := &Options{CheckpointDir: filepath.Join(dir, "ckpt"), SegmentSize: 16 << 20, DeviceSize: devSize, PMem: true}
	for i := range devs {
		d := filepath.Join(dir, fmt.Sprintf("dev%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
		o.Devices = append(o.Devices, d)
	}
	if os.Getenv("BRAID_KV_NUMA") == "off" { // the one-node cost of NUMAAuto: compare with and without
		o.NUMA = NUMAOff
	}
	return o
}

var benchSizes = []int{100, 1024, 4096}

const benchClients = 16 // goroutines issuing puts (RunParallel with GOMAXPROCS 2: parallelism 8)

func key8(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// BenchmarkPut: durable puts of 8-byte keys, from 16 goroutines at once
// (sync), as PutAsync with up to 256 in flight (async), and as Apply of
// 64 puts (batch); "nobatch" is sync with batching off (one fence per
// put), "merge" sync with MergeLogs; "-dedicated" with DedicatedWorkers
// (SKYE's worker goroutines) instead of combining clients; "sync-park"
// combining with followers that park at once instead of polling first.
func BenchmarkPut(b *testing.B) {
	for _, mode := range []string{"sync", "sync-park", "sync-dedicated", "nobatch", "merge", "async", "async-dedicated", "batch", "batch-dedicated"} {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dB", mode, size), func(b *testing.B) { benchPut(b, mode, size) })
		}
	}
}

func benchPut(b *testing.B, mode string, size int) {
	o := benchOptions(b, 1, 1<<30)
	o.NoBatching = mode == "nobatch"
	o.MergeLogs = mode == "merge"
	o.DedicatedWorkers = strings.HasSuffix(mode, "-dedicated")
	o.parkOnly = strings.HasSuffix(mode, "-park")
	mode = strings.TrimSuffix(strings.TrimSuffix(mode, "-dedicated"), "-park")
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
	switch mode {
	case "async":
		var wg sync.WaitGroup
		sem := make(chan struct{}, 256)
		for range b.N {
			sem <- struct{}{}
			wg.Add(1)
			if err := s.PutAsync(key8(next.Add(1)), val, func(_ Token, err error) {
				if err != nil {
					panic(err)
				}
				<-sem
				wg.Done()
			}); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
	case "batch":
		var bt Batch
		for i := 0; i < b.N; i += 64 {
			bt.Reset()
			for j := i; j < min(i+64, b.N); j++ {
				bt.Put(key8(next.Add(1)), val)
			}
			if err := s.Apply(&bt); err != nil {
				b.Fatal(err)
			}
		}
	default:
		b.SetParallelism(benchClients / 2)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := s.Put(key8(next.Add(1)), val); err != nil {
					panic(err)
				}
			}
		})
	}
	b.StopTimer()
	reportCPU(b, cpu0)
	st := s.Stats()
	b.ReportMetric(float64(st.Puts)/float64(max(st.Batches, 1)), "puts/batch")
	b.ReportMetric(float64(st.AppendedBytes)/float64(max(st.Puts, 1)), "logB/put")
	b.ReportMetric(float64(st.ExtendWaits+st.GrowWaits), "growwaits") // (grow.go: a writer did the grower's work)
}

// BenchmarkRawAppend is the bound: the same records (key, value and a
// 24-byte entry) appended by as many goroutines as the store has workers,
// each to its own mapped segment, through the same persist path (Copy
// with streaming stores, no drain), batched to BatchBytes with one fence
// per batch — no queues, no index.
func BenchmarkRawAppend(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			workers := (*pmdevice.Profile)(nil).WriteThreads()
			rec := recSize(8, size) + entrySize
			per := b.N/workers + 1
			segSize := (int64(per*rec)/DefaultBatchBytes + 2) * 2 * DefaultBatchBytes
			regions := make([]*persist.Region, workers)
			for i := range regions {
				regions[i] = structtest.MapShm(b, int(segSize))
			}
			b.SetBytes(int64(size + 8))
			b.ResetTimer()
			cpu0 := cpuTime()
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := regions[w]
					mem := r.Bytes()
					buf := make([]byte, 0, DefaultBatchBytes+rec)
					val := make([]byte, size)
					tail := 0
					for i := range per {
						buf = binary.BigEndian.AppendUint64(buf, uint64(i))
						buf = append(buf, val...)
						buf = append(buf, make([]byte, rec-8-size)...)
						if len(buf) >= DefaultBatchBytes || i == per-1 {
							n := (len(buf) + 7) &^ 7
							buf = buf[:n]
							if err := r.Copy(mem[tail:tail+n], buf, persist.NoDrain|persist.NonTemporal); err != nil {
								panic(err)
							}
							if err := r.Drain(); err != nil {
								panic(err)
							}
							tail += n
							buf = buf[:0]
						}
					}
				}()
			}
			wg.Wait()
			reportCPU(b, cpu0)
		})
	}
}

// reportCPU reports the process CPU time per operation since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func loadStore(b testing.TB, s *Store, n, size int) {
	val := make([]byte, size)
	var bt Batch
	for i := 0; i < n; i += 256 {
		bt.Reset()
		for j := i; j < min(i+256, n); j++ {
			bt.Put(key8(uint64(j)), val)
		}
		if err := s.Apply(&bt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet: gets of random keys among 100,000 from 16 goroutines,
// through the index (slow path: direct index, the default, and with
// MergeLogs) and with tokens (fast path); each read in the caller (the
// default) and, "-workers", by the worker (Options.WorkerReads).
func BenchmarkGet(b *testing.B) {
	for _, mode := range []string{"direct", "direct-workers", "merge", "token", "token-workers"} {
		b.Run(mode+"/100B", func(b *testing.B) {
			const n = 100_000
			o := benchOptions(b, 1, 1<<30)
			o.MergeLogs = mode == "merge"
			o.WorkerReads = strings.HasSuffix(mode, "-workers")
			s, err := Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var toks []Token
			if strings.HasPrefix(mode, "token") {
				for i := range n {
					t, err := s.PutToken(key8(uint64(i)), make([]byte, 100))
					if err != nil {
						b.Fatal(err)
					}
					toks = append(toks, t)
				}
			} else {
				loadStore(b, s, n, 100)
			}
			var seed atomic.Uint64
			b.SetBytes(108)
			b.ResetTimer()
			cpu0 := cpuTime()
			defer reportCPU(b, cpu0)
			b.SetParallelism(benchClients / 2)
			b.RunParallel(func(pb *testing.PB) {
				rnd := structtest.NewRand(seed.Add(1))
				for pb.Next() {
					i := rnd.Intn(n)
					var err error
					if toks != nil {
						_, err = s.GetWithToken(key8(uint64(i)), toks[i])
					} else {
						_, err = s.Get(key8(uint64(i)))
					}
					if err != nil {
						panic(err)
					}
				}
			})
		})
	}
}

// BenchmarkScan: scans of 100 keys (100 B values) from a random start
// among 100,000, with the ordered index; per key scanned (ns/key); each
// read in the caller (direct, the default) or by the workers.
func BenchmarkScan(b *testing.B) {
	for _, mode := range []string{"direct", "workers"} {
		b.Run(mode, func(b *testing.B) { benchScan(b, mode == "workers") })
	}
}

func benchScan(b *testing.B, workers bool) {
	const n, length = 100_000, 100
	o := benchOptions(b, 1, 1<<30)
	o.OrderedIndex = true
	o.WorkerReads = workers
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	loadStore(b, s, n, 100)
	rnd := structtest.NewRand(7)
	b.ResetTimer()
	cpu0 := cpuTime()
	defer reportCPU(b, cpu0)
	keys := 0
	for b.Loop() {
		seen := 0
		err := s.Scan(key8(uint64(rnd.Intn(n))), nil, func(k, v []byte) bool {
			seen++
			return seen < length
		})
		if err != nil {
			b.Fatal(err)
		}
		keys += seen
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(keys), "ns/key")
}

// BenchmarkRecovery: reopen after a kill (no checkpoint: every metadata
// entry is replayed and every value's checksum verified) of 200,000 keys
// of 100 B on two devices.
func BenchmarkRecovery(b *testing.B) { benchReopen(b, 200_000, 2, false) }

// BenchmarkReopen1M: the goal, 1 M keys of 100 B reopened after a
// kill (the default options: the start-up GC pass runs too).
func BenchmarkReopen1M(b *testing.B) { benchReopen(b, 1_000_000, 1, false) }

// BenchmarkReopen1MOrdered is BenchmarkReopen1M with Options.OrderedIndex
// (as pmkv bench and kvcompare open kv): the B-tree is rebuilt too.
func BenchmarkReopen1MOrdered(b *testing.B) { benchReopen(b, 1_000_000, 1, true) }

func benchReopen(b *testing.B, n, devs int, ordered bool) {
	o := benchOptions(b, devs, 1<<30)
	o.OrderedIndex = ordered
	o.NoStartupGC = n != 1_000_000
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	loadStore(b, s, n, 100)
	s.abandon()
	b.ResetTimer()
	var rep RecoveryReport
	var open, cpu time.Duration
	for b.Loop() {
		t0, c0 := time.Now(), cpuTime()
		s, err := Open(o)
		if err != nil {
			b.Fatal(err)
		}
		open += time.Since(t0)
		cpu += cpuTime() - c0
		rep = s.Recovery()
		s.abandon()
	}
	b.ReportMetric(float64(open.Microseconds())/1000/float64(b.N), "ms/open")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/open")
	b.ReportMetric(float64(rep.ReadTime.Microseconds())/1000, "ms-read")
	b.ReportMetric(rep.GBs, "GB/s")
	b.ReportMetric(rep.KeysPerSec, "keys/s")
	b.ReportMetric(float64(rep.Total.Microseconds())/1000, "ms/reopen")
	b.ReportMetric(float64(rep.ParseTime.Microseconds())/1000, "ms-parse")
	b.ReportMetric(float64(rep.IndexTime.Microseconds())/1000, "ms-index")
	if rep.Keys != int64(n) {
		b.Fatalf("recovered %d keys, loaded %d", rep.Keys, n)
	}
}

// BenchmarkGC: one pass over a store of 100,000 keys of 100 B whose
// first segments keep a quarter of their entries live (three quarters of
// the keys were written again three times).
func BenchmarkGC(b *testing.B) {
	const n = 100_000
	var moved, bytes int64
	for b.Loop() {
		b.StopTimer()
		o := benchOptions(b, 1, 256<<20)
		o.SegmentSize = 4 << 20
		o.GCThreshold = -1
		s, err := Open(o)
		if err != nil {
			b.Fatal(err)
		}
		loadStore(b, s, n, 100)
		val := make([]byte, 100)
		for range 3 {
			var bt Batch
			for i := range n {
				if i%4 != 0 {
					bt.Put(key8(uint64(i)), val)
				}
				if bt.Len() == 256 || i == n-1 {
					if err := s.Apply(&bt); err != nil {
						b.Fatal(err)
					}
					bt.Reset()
				}
			}
		}
		b.StartTimer()
		rep, err := s.GC()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		moved += rep.Moved
		bytes += rep.MovedBytes
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(moved)/float64(b.N), "moved/op")
	b.ReportMetric(float64(bytes)/b.Elapsed().Seconds()/1e6, "MB/s-moved")
}
