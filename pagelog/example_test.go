package pagelog_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
)

// bufferPool is a minimal DRAM buffer manager over a pagelog.Store: a few
// frames, clock eviction, and a dirty-line mask per frame. A dirty frame is
// written back with WriteLines before it is reused — through the micro log
// when few lines changed, copy-on-write otherwise — so a crash at any
// moment leaves every page on PMem at the version of its last eviction.
type bufferPool struct {
	st     *pagelog.Store
	frames []frame
	where  map[uint64]int // page id -> frame
	hand   int
	// Counters, to show which path evictions took.
	evictions, dirtyLines int
}

type frame struct {
	pid   uint64
	valid bool
	ref   bool
	data  []byte
	dirty pagelog.Lines
}

func newBufferPool(st *pagelog.Store, frames int) *bufferPool {
	bp := &bufferPool{st: st, frames: make([]frame, frames), where: map[uint64]int{}}
	for i := range bp.frames {
		bp.frames[i].data = make([]byte, st.PageSize())
		bp.frames[i].dirty = pagelog.NewLines(st.PageSize())
	}
	return bp
}

// fix returns the frame holding page pid, reading it in (and evicting a
// victim) when needed.
func (bp *bufferPool) fix(pid uint64) (*frame, error) {
	if i, ok := bp.where[pid]; ok {
		bp.frames[i].ref = true
		return &bp.frames[i], nil
	}
	for {
		f := &bp.frames[bp.hand]
		bp.hand = (bp.hand + 1) % len(bp.frames)
		if f.valid && f.ref {
			f.ref = false
			continue
		}
		if f.valid {
			if err := bp.writeBack(f); err != nil {
				return nil, err
			}
			delete(bp.where, f.pid)
		}
		if err := bp.st.Read(pid, f.data); err != nil {
			return nil, err
		}
		*f = frame{pid: pid, valid: true, ref: true, data: f.data, dirty: f.dirty}
		bp.where[pid] = int(bp.hand+len(bp.frames)-1) % len(bp.frames)
		return f, nil
	}
}

func (bp *bufferPool) writeBack(f *frame) error {
	if f.dirty.Count() == 0 {
		return nil
	}
	bp.evictions++
	bp.dirtyLines += f.dirty.Count()
	if err := bp.st.WriteLines(f.pid, f.data, f.dirty); err != nil {
		return err
	}
	f.dirty.Reset()
	return nil
}

// add adds d to the 8-byte counter at byte offset off of page pid.
func (bp *bufferPool) add(pid uint64, off int, d uint64) error {
	f, err := bp.fix(pid)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(f.data[off:], binary.LittleEndian.Uint64(f.data[off:])+d)
	f.dirty.Mark(off, 8)
	return nil
}

// flush writes every dirty frame back.
func (bp *bufferPool) flush() error {
	for i := range bp.frames {
		if bp.frames[i].valid {
			if err := bp.writeBack(&bp.frames[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Example_bufferPool: a buffer pool of 4 frames over 32 pages of 4 KiB
// evicts dirty pages through pagelog; after a restart the counters it
// added are all there.
func Example_bufferPool() {
	o := &pagelog.Options{Pages: 32}
	size, _ := pagelog.Footprint(o)
	r, _ := persist.Anonymous(size, nil) // persist.Map on a PMem file in real use
	defer r.Close()
	st, _ := pagelog.Create(r, o)

	bp := newBufferPool(st, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		pid := uint64(rng.IntN(32))
		off := 8 * rng.IntN(4096/8)
		if err := bp.add(pid, off, 1); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := bp.flush(); err != nil {
		fmt.Println(err)
		return
	}
	st.Close()

	st, _ = pagelog.Open(r, nil) // a restart: recovery, then read back
	total := uint64(0)
	buf := make([]byte, st.PageSize())
	for pid := range uint64(st.Pages()) {
		st.Read(pid, buf)
		for off := 0; off < len(buf); off += 8 {
			total += binary.LittleEndian.Uint64(buf[off:])
		}
	}
	fmt.Println("sum of counters:", total)
	fmt.Printf("evictions: %d, %.1f dirty lines each\n", bp.evictions, float64(bp.dirtyLines)/float64(bp.evictions))
	// Output:
	// sum of counters: 1000
	// evictions: 864, 1.2 dirty lines each
}

// TestBufferPool drives the buffer pool against a model of the counters,
// on every layout, with restarts.
func TestBufferPool(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.String(), func(t *testing.T) {
			o := pagelog.Options{Layout: l, Pages: 16, PageSize: 1024}
			st, r := mustCreate(t, o)
			bp := newBufferPool(st, 3)
			model := map[[2]int]uint64{}
			rng := rand.New(rand.NewPCG(uint64(l), 9))
			for i := range 3000 {
				pid, off := rng.IntN(16), 8*rng.IntN(1024/8)
				if i%7 == 0 { // a scan: many lines of one page
					for o := 0; o < 1024; o += 8 {
						require.NoError(t, bp.add(uint64(pid), o, 2))
						model[[2]int{pid, o}] += 2
					}
				}
				require.NoError(t, bp.add(uint64(pid), off, 1))
				model[[2]int{pid, off}]++
				if i%1000 == 999 {
					require.NoError(t, bp.flush())
					st = reopen(t, st, r, nil)
					bp = newBufferPool(st, 3)
				}
			}
			require.NoError(t, bp.flush())
			st = reopen(t, st, r, nil)
			buf := make([]byte, 1024)
			for pid := range 16 {
				require.NoError(t, st.Read(uint64(pid), buf))
				for off := 0; off < 1024; off += 8 {
					require.Equal(t, model[[2]int{pid, off}], binary.LittleEndian.Uint64(buf[off:]), "page %d offset %d", pid, off)
				}
			}
		})
	}
}
