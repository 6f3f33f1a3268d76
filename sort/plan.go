package sort

import (
	"fmt"

	"github.com/braid-pm/braid/sort/internal/sortio"
)

// budget is the memory plan of one sort.
type budget struct {
	main    int64 // the main buffer: IndexMap, runs, merge shares, write buffer
	fixed   int64 // radix counters and sorter scratch (Go heap)
	wb      int64 // one write buffer
	ord     int64 // words of gather scratch (one per record of a chunk)
	wbArea  int64 // EMS: its write buffers and gather scratch, beside main
	runN    int64 // entries (WiscSort) or records (EMS) per run
	runB    int64 // EMS: run buffer bytes
	runs    int
	pendCap int64 // MergePass: entries gathered per merge round (two lists of them)
	shareN  int64 // MergePass: entries of one run's merge share
}

// sorterTmp is the scratch of one sorter goroutine, in entries, when the
// IndexMap has none of its own (MergePass and EMS runs).
const sorterTmp = 1 << 13

// slack covers the 64-byte alignment of the pieces carved from a buffer.
const slack = 1 << 10

// gatherPer is the bytes of write buffer per record of a chunk that the
// gather scratch is sized for: the record size, or for KLV (chunks are cut
// by bytes) half the average record, room for twice the average count.
func (j *job) gatherPer() int64 {
	if j.rs > 0 {
		return int64(j.rs)
	}
	return max(1, max(1, j.size/j.n)/2)
}

// gatherSplit divides space bytes between nw write buffers and the gather
// scratch (ow words per record of a chunk), with wb at most wbCap. The
// pieces take at most space bytes: nw*wb + ord*8 + slack <= space.
func (j *job) gatherSplit(space, wbCap, nw, ow int64) (wb, ord int64) {
	per := j.gatherPer()
	space -= slack + 8*2*ow
	wb = space * per / (nw*per + 8*ow)
	wb = max(0, min(wb, wbCap))
	ord = (wb/per + 2) * ow
	return wb, ord
}

// gatherNeed is the smallest space for which gatherSplit makes write
// buffers of at least wb bytes.
func (j *job) gatherNeed(wb, nw, ow int64) int64 {
	per := j.gatherPer()
	return slack + 8*2*ow + (wb*(nw*per+8*ow)+per-1)/per
}

// plan decides the mode and sizes the buffers. A budget too small is an
// ErrBudget error that says the smallest budget that would do.
func (j *job) plan() (Mode, error) {
	j.rep.IndexMapBytes = j.n * j.l.ew()
	mode, b, err := j.planFor(j.s.o.MemBudget)
	if err != nil {
		if be, ok := err.(*budgetError); ok {
			be.need, be.shown = j.minBudget()
			be.ram = sortio.PhysicalMemory()
		}
		return "", err
	}
	j.mode, j.plan0, j.s.planned = mode, b, b
	return mode, nil
}

// minBudget is the smallest memory budget for which the planner finds a
// plan (0 if none up to 2^50 bytes), and the budget to print: rounded up
// to a whole MiB when that plans too.
func (j *job) minBudget() (need, shown int64) {
	ok := func(m int64) bool {
		_, _, err := j.planFor(m)
		return err == nil
	}
	lo := int64(MinMemBudget) - 1 // lo fails (or is below the minimum), hi plans
	hi := max(j.s.o.MemBudget, MinMemBudget)
	for !ok(hi) {
		lo = hi
		if hi *= 2; hi > 1<<50 {
			return 0, 0
		}
	}
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	need, shown = hi, hi
	if up := (hi + 1<<20 - 1) &^ (1<<20 - 1); ok(up) {
		shown = up
	}
	return need, shown
}

// budgetError is an ErrBudget error: what does not fit, and the smallest
// budget that would do.
type budgetError struct {
	msg   string // what does not fit
	alt   string // another way out, before the budget: "use mergepass, or "
	need  int64  // the smallest budget that plans; 0: unknown
	shown int64  // need, rounded up to a MiB when that plans too
	ram   int64  // physical memory (0: unknown)
}

func budgetf(format string, a ...any) *budgetError {
	return &budgetError{msg: fmt.Sprintf(format, a...)}
}

func (e *budgetError) Error() string {
	s := ErrBudget.Error() + ": " + e.msg + " (" + e.alt
	switch {
	case e.need == 0:
		return s + "raise -mem)"
	case e.shown%(1<<20) == 0:
		s += fmt.Sprintf("raise -mem to at least %dMiB", e.shown>>20)
	default:
		s += fmt.Sprintf("raise -mem to at least %d bytes", e.shown)
	}
	if e.ram > 0 && e.shown > e.ram {
		s += fmt.Sprintf(", more than the %d bytes of physical memory", e.ram)
	}
	return s + ")"
}

func (e *budgetError) Unwrap() error { return ErrBudget }

// planFor decides the mode and sizes the buffers for a budget of mem
// bytes (planOnePass, planMergePass, planEMS). It changes nothing in j.
func (j *job) planFor(mem int64) (Mode, budget, error) {
	o := &j.s.o
	l := &j.l
	ew := l.ew()
	nw := int64(1)
	if o.Overlap {
		nw = 2
	}
	minWB := max(int64(minWriteBuffer), int64(j.rs))
	// A write buffer larger than the output would only be mapped.
	wbCap := min(o.WriteBuffer, max(minWB, j.size))
	// Go-heap overheads: first-digit counters per reader partition (KLV
	// partitions are cut by count and by bytes, so up to twice as many),
	// and each sorter's scratch and digit counters.
	parts := int64(max(j.s.pools.Readers, 1))
	if j.rs == 0 {
		parts *= 2
	}
	fixed := parts*(1<<12)*4 + int64(max(j.s.pools.Sorters, 1))*(sorterTmp*ew+(8<<12)*4)
	avail := mem - fixed
	if avail < minShare {
		return "", budget{}, budgetf("%d bytes leave nothing beside the radix counters and scratch (%d)", mem, fixed)
	}
	idxBytes := j.n * ew
	mode := o.Mode
	// OnePass: the IndexMap, then the write buffer(s) of at least minWB
	// and their gather scratch.
	onePassNeed := idxBytes + slack + j.gatherNeed(minWB, nw, j.orderWordsIn(OnePass))
	if mode == Auto {
		mode = MergePass
		if onePassNeed <= avail {
			mode = OnePass
		}
	}
	p := &planIn{mem: mem, ew: ew, nw: nw, minWB: minWB, wbCap: wbCap, avail: avail, idxBytes: idxBytes, onePassNeed: onePassNeed}
	b := budget{fixed: fixed}
	var err error
	switch mode {
	case OnePass:
		b, err = j.planOnePass(p, b)
	case MergePass:
		b, err = j.planMergePass(p, b)
	case EMS:
		b, err = j.planEMS(p, b)
	}
	if err != nil {
		return "", b, err
	}
	return mode, b, nil
}

// planIn is what every mode's plan starts from.
type planIn struct {
	mem         int64 // the budget
	ew          int64 // bytes of an IndexMap entry in DRAM
	nw          int64 // write buffers: 1, or 2 with Overlap
	minWB       int64 // the smallest write buffer
	wbCap       int64 // the largest write buffer
	avail       int64 // the budget less the Go-heap overheads
	idxBytes    int64 // the whole IndexMap
	onePassNeed int64 // what OnePass needs
}

// planOnePass: the IndexMap, then the write buffer(s) and their gather
// scratch; the rest, up to the IndexMap's size, is the key pass's scratch.
func (j *job) planOnePass(p *planIn, b budget) (budget, error) {
	avail, idxBytes, onePassNeed, wbCap, nw := p.avail, p.idxBytes, p.onePassNeed, p.wbCap, p.nw
	if onePassNeed > avail {
		e := budgetf("OnePass needs %d bytes of IndexMap and %d of write buffer and gather scratch; the budget leaves %d",
			idxBytes, onePassNeed-idxBytes, avail)
		e.alt = "use mergepass, or "
		return b, e
	}
	rest := avail - idxBytes - slack
	b.wb, b.ord = j.gatherSplit(rest, wbCap, nw, j.orderWordsIn(OnePass))
	gather := nw*b.wb + b.ord*8 + slack
	scratch := int64(0)
	if rest >= idxBytes+slack {
		scratch = idxBytes + slack
	}
	b.main = idxBytes + slack + max(gather, scratch)
	b.runN, b.runs = j.n, 1
	return b, nil
}

// planMergePass: runs as large as the budget holds, then the merge: one
// share of the buffer per run, two lists of merged entries and the write
// buffer of their records.
func (j *job) planMergePass(p *planIn, b budget) (budget, error) {
	avail, ew, wbCap, nw := p.avail, p.ew, p.wbCap, p.nw
	b.runN = min(avail/ew, j.n, 1<<32-1)
	if j.s.runCap > 0 {
		b.runN = min(b.runN, j.s.runCap)
	}
	b.runs = int((j.n + b.runN - 1) / b.runN)
	k := int64(b.runs)
	minShareB := max(int64(minShare), ew)
	if k*(minShareB+slack) > avail/2 {
		return b, budgetf("%d runs of %d entries need a %d-byte merge buffer each; the budget leaves %d in all",
			b.runs, b.runN, minShareB, avail/2)
	}
	// Shares of a 32nd of the buffer in all (at most 4 MiB each): a
	// refill is one parallel sequential read, and a few hundred
	// thousand entries per refill are plenty; the rest of the buffer
	// is the merged entries and the write buffer of their records,
	// whose size sets the locality of the value gather.
	shareB := max(minShareB, min(avail/32/k, 4<<20))
	b.shareN = shareB / ew
	rest := avail - k*(b.shareN*ew+slack) - 5*slack
	per := int64(j.rs)
	if per == 0 {
		per = max(1, j.size/j.n)
	}
	// The gather scratch: ow words per merged entry (a KLV chunk's
	// output offsets are one word per record, and a chunk is at most
	// one list of merged entries).
	ow := j.orderWordsIn(MergePass)
	// Two lists of merged entries: the merge fills one while the
	// other's records are gathered and written (mergePipe).
	b.pendCap = (rest - 2*8*ow) / (2*ew + nw*per + 8*ow)
	if wbCap/per < b.pendCap {
		b.pendCap = max(1, wbCap/per)
	}
	if b.pendCap < 1 {
		return b, budgetf("no room for merged entries beside %d run shares", b.runs)
	}
	b.wb = b.pendCap * per
	b.ord = (b.pendCap + 2) * ow
	merge := 2*b.pendCap*ew + k*(b.shareN*ew+slack) + nw*b.wb + b.ord*8 + 4*slack
	b.main = max(b.runN*ew, merge)
	return b, nil
}

// planEMS: the run buffer of whole records (and their IndexMap) takes the
// budget beside the write buffers; the merge shares it among the runs.
func (j *job) planEMS(p *planIn, b budget) (budget, error) {
	mem, avail, ew, wbCap, nw, minWB := p.mem, p.avail, p.ew, p.wbCap, p.nw, p.minWB
	// EMS's run buffer takes the budget; its write buffer (used for
	// the runs and for the output) is an eighth of it at most.
	if !j.s.wbSet {
		wbCap = min(wbCap, mem/8)
	}
	wb := max(minWB, j.klvMax)
	wb = max(wb, min(wbCap, avail/4))
	per := j.gatherPer()
	b.wb, b.ord = wb, wb/per+2
	b.wbArea = nw*b.wb + b.ord*8 + 2*slack
	b.main = avail - b.wbArea
	room := b.main - slack // the IndexMap starts 64-byte aligned after the records
	if b.main < minShare {
		return b, budgetf("%d bytes leave no EMS run buffer beside the write buffers (%d)", mem, b.wbArea)
	}
	if j.rs > 0 {
		b.runN = min(room/(int64(j.rs)+ew), j.n, 1<<32-1)
		if j.s.runCap > 0 {
			b.runN = min(b.runN, j.s.runCap)
		}
		if b.runN < 1 {
			return b, budgetf("no record fits the EMS run buffer")
		}
		b.runB = b.runN * int64(j.rs)
		b.runs = int((j.n + b.runN - 1) / b.runN)
		// No more than one run's records and IndexMap (the merge
		// shares this buffer; a small input needs no more).
		b.main = min(b.main, max(b.runB+b.runN*ew+2*slack, int64(b.runs)*int64(minShare)*2))
	} else {
		avg := max(1, j.size/j.n)
		b.runB = room * avg / (avg + ew)
		b.runN = min((room-b.runB)/ew, 1<<32-1)
		if j.s.runCap > 0 {
			b.runN = min(b.runN, j.s.runCap)
			b.runB = min(b.runB, max(j.klvMax, b.runN*avg*2))
		}
		if b.runB < j.klvMax || b.runN < 1 {
			return b, budgetf("the EMS run buffer (%d bytes) cannot hold the largest record (%d bytes)",
				b.runB, j.klvMax)
		}
		// Runs end on record boundaries, by bytes or by count.
		b.runs = int(max(j.size/max(1, b.runB-j.klvMax), j.n/b.runN)) + 1
	}
	// The merge's shares, as ems cuts them: whole records.
	need := max(int64(minShare), 2*j.klvMax, int64(j.rs))
	share := b.main / int64(b.runs)
	if j.rs > 0 {
		share = share / int64(j.rs) * int64(j.rs)
	}
	if share < need {
		return b, budgetf("%d EMS runs need %d bytes of merge buffer each; the budget leaves %d in all",
			b.runs, need, b.main)
	}
	return b, nil
}
