package coro

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/internal/structtest"
)

// switchStages is how many stages each operation of BenchmarkSwitch has.
const switchStages = 16

// tick is an operation of BenchmarkSwitch: a stage does almost nothing, so
// what is measured is the switch.
type tick struct {
	stage, left int
	acc         uint64
}

// step runs one stage: three kinds of stage in turn, as a lookup's inner
// node, leaf line and key line would be, each a few instructions.
func (s *tick) step() bool {
	switch s.stage {
	case 0:
		s.acc++
		s.stage = 1
	case 1:
		s.acc ^= s.acc >> 7
		s.stage = 2
	default:
		s.acc += s.acc << 3
		s.stage = 0
	}
	s.left--
	return s.left == 0
}

var sinkAcc uint64

// BenchmarkSwitch prints the cost of one switch between operations (ns per
// stage, G = 8 interleaved): a Ring step (with nothing, one Prefetch call,
// or one Queue per stage), an iter.Pull coroutine switch (Pull, whose wait
// prefetches too) and a goroutine woken and waited for over channels.
func BenchmarkSwitch(b *testing.B) {
	const g, n = 8, 1024
	var line [64]byte
	p := unsafe.Pointer(&line[0])
	perStage := func(b *testing.B, c structtest.CPU) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n*switchStages), "ns/switch")
		c.Report(b, n*switchStages, "switch")
	}
	for _, mode := range []string{"ring", "ring+prefetch", "ring+queue"} {
		b.Run(mode, func(b *testing.B) {
			var r Ring[tick]
			c := structtest.StartCPU()
			for b.Loop() {
				tickRing(&r, g, n, p, mode)
			}
			perStage(b, c)
		})
	}
	pullOp := func(i int, wait func(unsafe.Pointer)) {
		s := tick{acc: uint64(i), left: switchStages}
		for !s.step() {
			wait(p)
		}
		sinkAcc += s.acc
	}
	b.Run("pull", func(b *testing.B) {
		c := structtest.StartCPU()
		for b.Loop() {
			Pull(g, n, pullOp)
		}
		perStage(b, c)
	})
	b.Run("chan", func(b *testing.B) {
		c := structtest.StartCPU()
		for b.Loop() {
			chanRun(g, n, pullOp)
		}
		perStage(b, c)
	})
}

// tickRing runs n ticks through r, g at a time, each stage ending with
// nothing, a Prefetch or a Queue of p (mode).
func tickRing(r *Ring[tick], g, n int, p unsafe.Pointer, mode string) {
	prefetch, queue := mode == "ring+prefetch", mode == "ring+queue"
	r.Reset(g, n)
	for r.Round() {
		for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
			if op >= 0 {
				*s = tick{acc: uint64(op), left: switchStages}
			}
			switch {
			case s.step():
				sinkAcc += s.acc
				r.Done()
			case prefetch:
				r.Prefetch(p)
			case queue:
				r.Queue(p)
			}
		}
	}
}

// chanRun is Pull with goroutines: each operation of the group runs on a
// goroutine of its own, which the scheduler wakes over a channel and waits
// for over another, one at a time.
func chanRun(g, n int, op func(i int, wait func(unsafe.Pointer))) {
	g = min(g, n)
	type worker struct{ resume, yielded chan bool }
	ws := make([]worker, g)
	next := 0
	var mu sync.Mutex // the workers run one at a time; the mutex is for the race detector
	for j := range ws {
		w := worker{make(chan bool), make(chan bool)}
		ws[j] = w
		go func() {
			<-w.resume
			wait := func(p unsafe.Pointer) {
				asm.Prefetch(p)
				w.yielded <- true
				<-w.resume
			}
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					w.yielded <- false
					return
				}
				op(i, wait)
			}
		}()
	}
	for live := g; live > 0; {
		for j := 0; j < live; {
			ws[j].resume <- true
			if <-ws[j].yielded {
				j++
				continue
			}
			live--
			ws[j], ws[live] = ws[live], ws[j]
		}
	}
}

// node is one cache line of the pointer-chasing array.
type node struct {
	next uint64
	_    [7]uint64
}

// chaseHops is the length of every chain of BenchmarkGroup.
const chaseHops = 32

var (
	chaseMu     sync.Mutex
	chaseArrays = map[int][]node{}
)

// chaseArray returns n nodes linked in one random cycle (Sattolo), made
// once per size for the benchmark binary.
func chaseArray(n int) []node {
	chaseMu.Lock()
	defer chaseMu.Unlock()
	if a, ok := chaseArrays[n]; ok {
		return a
	}
	a := make([]node, n)
	perm := make([]uint32, n)
	for i := range perm {
		perm[i] = uint32(i)
	}
	rnd := structtest.NewRand(1)
	for i := n - 1; i > 0; i-- {
		j := rnd.Intn(i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for i := range n {
		a[perm[i]].next = uint64(perm[(i+1)%n])
	}
	chaseArrays[n] = a
	return a
}

// chase is one pointer-chasing operation: hops left to go from at.
type chase struct {
	at   uint64
	hops int
}

// BenchmarkGroup sweeps the group size G on pointer chasing: operations
// that each follow a chain of 32 dependent loads from a random node of an
// array of 64-byte nodes, in ns per load. "big" is 512 MiB (16x this
// machine's 32 MiB L3, so nearly every load misses the caches and the
// TLB), "small" 256 KiB (inside L2: nothing to hide). "plain" follows
// each chain to its end before the next (no interleaving); ring/G
// interleaves G chains with a Ring and a Prefetch per hop, queue/G with
// Queue, pull/G with Pull.
func BenchmarkGroup(b *testing.B) {
	const ops = 1 << 12
	for _, size := range []struct {
		name  string
		nodes int
	}{{"small", 256 << 10 / 64}, {"big", 512 << 20 / 64}} {
		a := chaseArray(size.nodes)
		starts := make([]uint64, ops)
		rnd := structtest.NewRand(2)
		for i := range starts {
			starts[i] = uint64(rnd.Intn(size.nodes))
		}
		perHop := func(b *testing.B, c structtest.CPU) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(ops*chaseHops), "ns/hop")
			c.Report(b, ops*chaseHops, "hop")
		}
		b.Run(size.name+"/plain", func(b *testing.B) {
			c := structtest.StartCPU()
			for b.Loop() {
				for _, at := range starts {
					for range chaseHops {
						at = a[at].next
					}
					sinkAcc += at
				}
			}
			perHop(b, c)
		})
		for _, g := range []int{1, 2, 4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64} {
			b.Run(fmt.Sprintf("%s/ring/%d", size.name, g), func(b *testing.B) {
				var r Ring[chase]
				c := structtest.StartCPU()
				for b.Loop() {
					chaseRing(&r, a, starts, g, false)
				}
				perHop(b, c)
			})
			b.Run(fmt.Sprintf("%s/queue/%d", size.name, g), func(b *testing.B) {
				var r Ring[chase]
				c := structtest.StartCPU()
				for b.Loop() {
					chaseRing(&r, a, starts, g, true)
				}
				perHop(b, c)
			})
		}
		for _, g := range []int{1, 8, 16, 32} {
			b.Run(fmt.Sprintf("%s/pull/%d", size.name, g), func(b *testing.B) {
				c := structtest.StartCPU()
				for b.Loop() {
					Pull(g, ops, func(i int, wait func(unsafe.Pointer)) {
						at := starts[i]
						for range chaseHops {
							wait(unsafe.Pointer(&a[at]))
							at = a[at].next
						}
						sinkAcc += at
					})
				}
				perHop(b, c)
			})
		}
	}
}

// chaseRing follows the chains from starts, g at a time: a stage loads
// the node prefetched by the stage before and prefetches the next.
func chaseRing(r *Ring[chase], a []node, starts []uint64, g int, queue bool) {
	r.Reset(g, len(starts))
	for r.Round() {
		for s, op, ok := r.Next(); ok; s, op, ok = r.Next() {
			if op >= 0 {
				*s = chase{at: starts[op], hops: chaseHops}
			} else {
				s.at = a[s.at].next
				s.hops--
				if s.hops == 0 {
					sinkAcc += s.at
					r.Done()
					continue
				}
			}
			if queue {
				r.Queue(unsafe.Pointer(&a[s.at]))
			} else {
				r.Prefetch(unsafe.Pointer(&a[s.at]))
			}
		}
	}
}
