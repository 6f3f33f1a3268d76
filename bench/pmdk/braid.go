//go:build pmdk

package pmdk

import (
	"fmt"

	"github.com/braid-pm/braid/persist"
)

// seed starts the xorshift64 of the random benchmarks, on both sides.
const seed = 88172645463325252

// Region is the braid side: a persist.Region on a file and the same loops
// as the C side, iteration for iteration.
type Region struct {
	r       *persist.Region
	mem     []byte
	copyOff int    // next CopyPersist destination
	line    uint64 // next PersistSeq / Flush line counter
	x       uint64 // PersistRand xorshift state
}

// MapBraid creates path (which must not exist) with size bytes through
// persist.Map on the forced PMem path, sparse and not pre-faulted, like
// MapPMem: Prefault allocates and writes both regions together.
func MapBraid(path string, size int) (*Region, error) {
	r, err := persist.Map(path, &persist.Options{Size: int64(size), Create: true, Exclusive: true, ForcePMem: true,
		Sparse: true, NoPrefault: true})
	if err != nil {
		return nil, fmt.Errorf("pmdk: %w", err)
	}
	return &Region{r: r, mem: r.Bytes(), x: seed}, nil
}

// prefaultChunk is the unit in which Prefault alternates between the
// regions: a huge page's worth.
const prefaultChunk = 2 << 20

// Prefault allocates, writes (zeros) and persists every byte of both
// regions, which must be the same size, before anything is timed: memory
// touched for the first time is several times slower on the VMs braid is
// measured on. It alternates between the two every prefaultChunk bytes,
// and which of them goes first in each pair, so that both get their
// memory from the same stretch of the allocator: mapped and pre-faulted
// one after the other, the second region streamed faster whichever side it
// was (BenchmarkCopyPersist/{braid,libpmem}/65536 shows it when the two
// regions are pre-faulted one after the other instead).
func Prefault(g *Region, p *PMem) error {
	if len(g.mem) != p.size {
		return fmt.Errorf("pmdk: regions of %d and %d bytes", len(g.mem), p.size)
	}
	pm := p.Bytes()
	for off, i := 0, 0; off < len(g.mem); off, i = off+prefaultChunk, i+1 {
		end := min(off+prefaultChunk, len(g.mem))
		braid := func() error { clear(g.mem[off:end]); return g.r.Persist(g.mem[off:end]) }
		pmem := func() { clear(pm[off:end]); p.persist(off, end-off) }
		if i%2 == 0 {
			pmem()
			if err := braid(); err != nil {
				return fmt.Errorf("pmdk: %w", err)
			}
		} else {
			if err := braid(); err != nil {
				return fmt.Errorf("pmdk: %w", err)
			}
			pmem()
		}
	}
	return nil
}

// Persist returns the persist region, for its Info.
func (g *Region) Persist() *persist.Region { return g.r }

// Bytes returns the mapping.
func (g *Region) Bytes() []byte { return g.mem }

// Close unmaps the region.
func (g *Region) Close() error { return g.r.Close() }

// CopyPersist runs n Copy of src (default flags: durable on return) to
// sequential destinations — pb_copy_persist.
func (g *Region) CopyPersist(src []byte, n int) error {
	mem, size, o := g.mem, len(src), g.copyOff
	for range n {
		if o+size > len(mem) {
			o = 0
		}
		if err := g.r.Copy(mem[o:o+size], src, 0); err != nil {
			return err
		}
		o += size
	}
	g.copyOff = o
	return nil
}

// PersistSeq runs n times an 8-byte store and Persist of those 8 bytes on
// consecutive lines — pb_persist_seq. The store is persist.Store64, what a
// braid structure writes a commit word with: on amd64 one plain MOV, as in
// C, after an inlined alignment test.
func (g *Region) PersistSeq(n int) error {
	mem := g.mem
	lines, k := uint64(len(mem)/64), g.line
	for range n {
		off := (k % lines) * 64
		persist.Store64(mem[off:], k)
		if err := g.r.Persist(mem[off : off+8]); err != nil {
			return err
		}
		k++
	}
	g.line = k
	return nil
}

// PersistRand is PersistSeq on lines picked by xorshift64 —
// pb_persist_rand.
func (g *Region) PersistRand(n int) error {
	mem := g.mem
	lines, v := uint64(len(mem)/64), g.x
	for range n {
		v ^= v << 13
		v ^= v >> 7
		v ^= v << 17
		off := (v % lines) * 64
		persist.Store64(mem[off:], v)
		if err := g.r.Persist(mem[off : off+8]); err != nil {
			return err
		}
	}
	g.x = v
	return nil
}

// Flush runs n times a 1-byte increment and Flush of 8 bytes on
// consecutive lines, then one Drain — pb_flush.
func (g *Region) Flush(n int) error {
	mem := g.mem
	lines, k := uint64(len(mem)/64), g.line
	for range n {
		off := (k % lines) * 64
		mem[off]++
		if err := g.r.Flush(mem[off : off+8]); err != nil {
			return err
		}
		k++
	}
	g.line = k
	return g.r.Drain()
}
