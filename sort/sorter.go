package sort

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/braid-pm/braid/persist"
	"golang.org/x/sys/unix"
)

// Mode selects the algorithm.
type Mode string

const (
	// Auto runs OnePass when the IndexMap fits the memory budget, else
	// MergePass.
	Auto Mode = "auto"
	// OnePass gathers keys, sorts the IndexMap in DRAM and gathers the
	// records in key order into the output: no intermediate files.
	OnePass Mode = "onepass"
	// MergePass persists sorted IndexMap runs, merges them and gathers the
	// values of the merged entries into the output.
	MergePass Mode = "mergepass"
	// EMS is the external merge sort baseline: sorted runs of whole records,
	// then a k-way merge of the records — with the same thread-pool control
	// and interference-aware scheduling as WiscSort.
	EMS Mode = "ems"
)

// Defaults and limits.
const (
	// DefaultWriteBuffer caps the write buffer: by default it is as large
	// as the memory budget leaves beside the mode's other buffers, up to
	// this size (a larger buffer gives the value gather more locality).
	DefaultWriteBuffer = 256 << 20
	// MinMemBudget is the smallest memory budget accepted.
	MinMemBudget = 1 << 20
	// MaxPool bounds every pool size.
	MaxPool = 1024
	// minShare is the smallest merge-buffer share of one run.
	minShare = 16 << 10
	// minWriteBuffer is the smallest write buffer the planner makes.
	minWriteBuffer = 64 << 10
)

// Options configure a Sorter. The zero value sorts gensort records with
// Auto mode, a budget of half the physical memory, 5-byte pointers, pools
// from BRAID_PROFILE (or defaults) and interference-aware scheduling.
type Options struct {
	Format Format // zero value: Gensort
	Mode   Mode   // "": Auto
	// MemBudget bounds the DRAM buffers the sorter allocates (IndexMap, run
	// and merge buffers, write buffers, radix counters and scratch). 0:
	// half of the physical memory; more than the physical memory is an
	// error. The process needs a few MiB more for itself.
	MemBudget int64
	// TempDir holds the run files; "": the output's directory. A TempDir
	// given is checked (exists, a directory, writable) in every mode.
	TempDir string
	// PointerSize is 5 (default, 2^40 records or bytes) or 8.
	PointerSize int
	// Pools overrides the thread-pool controller for each non-zero count.
	Pools Pools
	// Profile is the device profile the controller reads; nil: the file
	// named by BRAID_PROFILE, if set.
	Profile *persist.Profile
	// ProfileName says where Profile came from (its file), for the report;
	// "": the device it measured.
	ProfileName string
	// Overlap lets reads and writes run at the same time (double-buffered
	// writes), for comparison with the default interference-aware schedule.
	Overlap bool
	// WriteBuffer caps the size of the write buffer (two with Overlap).
	// 0: DefaultWriteBuffer. The buffer is as large as the budget leaves
	// beside the mode's other buffers, up to this cap (for EMS, whose run
	// buffer takes the budget, an eighth of the budget at most).
	WriteBuffer int64
	// Overwrite replaces an existing output file.
	Overwrite bool
	// ForcePMem maps files on the PMem path even when they are not on DAX
	// (as BRAID_FORCE_PMEM=1 does).
	ForcePMem bool
	// Progress, if set, is called from the sorting goroutine with the
	// number of output bytes written so far and the total.
	Progress func(done, total int64)
}

// Validate checks the options.
func (o *Options) Validate() error {
	f := o.Format
	if f == (Format{}) {
		f = Gensort
	}
	if err := f.Validate(); err != nil {
		return err
	}
	switch o.Mode {
	case "", Auto, OnePass, MergePass, EMS:
	default:
		return optionError("mode %q, want auto, onepass, mergepass or ems", o.Mode)
	}
	if o.PointerSize != 0 && o.PointerSize != 5 && o.PointerSize != 8 {
		return optionError("pointer size %d, want 5 or 8", o.PointerSize)
	}
	if o.MemBudget != 0 && o.MemBudget < MinMemBudget {
		return fmt.Errorf("%w: memory budget %d bytes, at least %d needed", ErrBudget, o.MemBudget, MinMemBudget)
	}
	if ram := physicalMemory(); ram > 0 && o.MemBudget > ram {
		return optionError("memory budget of %d bytes is more than the %d bytes of physical memory", o.MemBudget, ram)
	}
	if o.WriteBuffer < 0 || (o.WriteBuffer > 0 && o.WriteBuffer < 4096) {
		return optionError("write buffer of %d bytes, want at least 4096", o.WriteBuffer)
	}
	for _, p := range []struct {
		name string
		n    int
	}{{"reader", o.Pools.Readers}, {"writer", o.Pools.Writers}, {"sorter", o.Pools.Sorters}} {
		if p.n < 0 || p.n > MaxPool {
			return optionError("%s pool of %d goroutines, want 0 (automatic) to %d", p.name, p.n, MaxPool)
		}
	}
	return nil
}

// Sorter sorts files. It keeps its DRAM buffers between calls to Sort, so
// that repeated sorts (benchmarks) do not pay for first-touch page faults
// again. A Sorter is not safe for concurrent use.
type Sorter struct {
	o       Options
	pools   Pools
	from    string
	main    []byte // IndexMap / run buffer / merge buffer, carved per phase
	wbufs   []byte // EMS: write buffers and gather scratch
	indexer indexer
	// hooks for fault-injection tests
	afterMap      func(in string)  // called once the input is mapped
	beforePublish func(out string) // called before the output is renamed
	failAfterRuns int              // >0: fail when this many run files exist
	runCap        int64            // >0: at most this many entries per run (tests)
	wbSet         bool             // the write buffer size was given
	planned       budget           // the last sort's plan (tests)
}

// NewSorter validates the options and sets up the pools.
func NewSorter(o *Options) (*Sorter, error) {
	s := &Sorter{}
	if o != nil {
		s.o = *o
	}
	if err := s.o.Validate(); err != nil {
		return nil, err
	}
	if s.o.Format == (Format{}) {
		s.o.Format = Gensort
	}
	if s.o.Mode == "" {
		s.o.Mode = Auto
	}
	if s.o.PointerSize == 0 {
		s.o.PointerSize = 5
	}
	s.wbSet = s.o.WriteBuffer != 0
	if s.o.WriteBuffer == 0 {
		s.o.WriteBuffer = DefaultWriteBuffer
	}
	if s.o.MemBudget == 0 {
		s.o.MemBudget = defaultBudget()
	}
	prof := s.o.Profile
	s.from = "defaults"
	if prof == nil {
		if path := os.Getenv("BRAID_PROFILE"); path != "" {
			p, err := persist.LoadProfile(path)
			if err != nil {
				return nil, fmt.Errorf("sort: BRAID_PROFILE: %w", err)
			}
			prof = p
			s.from = "profile " + path
		}
	} else if s.o.ProfileName != "" {
		s.from = "profile " + s.o.ProfileName
	} else {
		s.from = "profile of " + prof.Device
	}
	s.pools = PoolsFor(prof)
	if p := s.o.Pools; p.Readers > 0 || p.Writers > 0 || p.Sorters > 0 {
		s.from += " + flags"
	}
	if s.o.Pools.Readers > 0 {
		s.pools.Readers = s.o.Pools.Readers
	}
	if s.o.Pools.Writers > 0 {
		s.pools.Writers = s.o.Pools.Writers
	}
	if s.o.Pools.Sorters > 0 {
		s.pools.Sorters = s.o.Pools.Sorters
	}
	return s, nil
}

// Pools returns the pool sizes the sorter uses.
func (s *Sorter) Pools() Pools { return s.pools }

func defaultBudget() int64 {
	if ram := physicalMemory(); ram > 0 {
		return ram / 2
	}
	return 1 << 30
}

// buffer returns *b resized to n bytes, mapping fresh anonymous memory
// only when the old buffer is too small (buffers live outside the Go heap,
// so the budget is what the process really holds).
func buffer(b *[]byte, n int64) ([]byte, error) {
	if int64(cap(*b)) >= n {
		*b = (*b)[:n]
		return *b, nil
	}
	freeBuffer(b)
	if n == 0 {
		return nil, nil
	}
	m, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("sort: allocate %d bytes: %w", n, err)
	}
	// Transparent huge pages where the system allows them on request: the
	// radix scatter and the bucketed gather write all over these buffers.
	adviseHuge(m)
	*b = m
	return m, nil
}

func freeBuffer(b *[]byte) {
	if cap(*b) > 0 {
		_ = unix.Munmap((*b)[:cap(*b)])
	}
	*b = nil
}

// Close releases the sorter's buffers.
func (s *Sorter) Close() error {
	freeBuffer(&s.main)
	freeBuffer(&s.wbufs)
	return nil
}

// Sort sorts the file in into out with a throw-away Sorter.
func Sort(ctx context.Context, in, out string, o *Options) (*Report, error) {
	s, err := NewSorter(o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Sort(ctx, in, out)
}

// job is the state of one Sort call.
type job struct {
	s       *Sorter
	ctx     context.Context
	in      *mapped
	src     []byte
	out     *mapped
	l       layout
	rs      int   // record size; 0 for KLV
	n       int64 // records
	size    int64 // bytes
	ph      *phases
	rep     *Report
	tmpDir  string
	temps   []string
	runs    []*mapped // the run files, for locating a fault
	written int64
	klvMax  int64 // largest KLV record
	plan0   budget
	// lastMerged is the last entry merged so far (invariant checks).
	lastMerged []uint64
	// bgMerge: the merge runs on its own goroutine (pipeMerge); gate
	// keeps its run reads apart from the output writes.
	bgMerge bool
	gate    sync.Mutex

	mode Mode // the mode chosen by plan
}

// Sort sorts in into out. out is written under a temporary name in its
// directory and renamed when complete and durable: a failed or cancelled
// sort leaves no file under the final name and removes its temporary files.
func (s *Sorter) Sort(ctx context.Context, in, out string) (rep *Report, err error) {
	t0 := time.Now()
	if err := checkPaths(in, out, s.o.Overwrite); err != nil {
		return nil, err
	}
	j := &job{s: s, ctx: ctx, ph: &phases{}}
	j.rep = &Report{
		Input: in, Output: out, Format: s.o.Format.String(), Overlap: s.o.Overlap,
		Readers: s.pools.Readers, Writers: s.pools.Writers, Sorters: s.pools.Sorters, PoolsFrom: s.from,
		PointerBytes: s.o.PointerSize, MemBudget: s.o.MemBudget,
	}
	rss := startRSS()
	defer func() {
		peak := rss.finish()
		if rep != nil {
			rep.PeakRSSAnon = peak
		}
	}()
	j.ph.start(phOther)
	if j.in, err = openMapped(in); err != nil {
		return nil, err
	}
	defer j.in.close()
	j.src = j.in.bytes()
	j.size = int64(len(j.src))
	if s.afterMap != nil {
		s.afterMap(in)
	}
	// The input may shrink under the mapping from here on (another
	// program truncates it): every read of it, of the run files and of
	// the output runs under persist.Guard, and a fault is the error
	// "IN changed size during the sort".
	if err := j.guard(j.checkInput); err != nil {
		return nil, err
	}
	mode, err := j.plan()
	if err != nil {
		return nil, err
	}
	j.rep.Mode = string(mode)
	j.rep.Records, j.rep.Bytes = j.n, j.size

	// A temp dir given is checked whatever the mode (a bad one is an
	// error even when this input needs no run files).
	if mode != OnePass || s.o.TempDir != "" {
		if err := j.setupTempDir(filepath.Dir(out)); err != nil {
			return nil, err
		}
	}
	defer j.removeTemps()

	tmpOut := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".pmsort-"+randSuffix()+".tmp")
	if j.out, err = createMappedAs(tmpOut, "output "+out, j.size, s.o.ForcePMem); err != nil {
		return nil, err
	}
	if j.out.r != nil {
		info := j.out.r.Info()
		info.Path = out // the name it will have
		j.rep.Mapping = info.String()
	}
	committed := false
	defer func() {
		if !committed {
			j.out.close()
			os.Remove(tmpOut)
		}
	}()
	j.ph.stop()

	err = j.guard(func() error {
		switch mode {
		case OnePass:
			return j.onePass()
		case MergePass:
			return j.mergePass()
		default:
			return j.ems()
		}
	})
	if err != nil {
		return nil, err
	}
	if j.written != j.size {
		panic(fmt.Sprintf("sort: wrote %d bytes of %d", j.written, j.size))
	}
	// Every byte of the output was made durable by the Copy that wrote it
	// (streaming stores and a fence, or msync of its pages): no Sync here.
	j.ph.start(phOther)
	if err := j.out.close(); err != nil {
		return nil, fmt.Errorf("sort: close output: %w", err)
	}
	if s.beforePublish != nil {
		s.beforePublish(out)
	}
	if err := publish(tmpOut, out, s.o.Overwrite); err != nil {
		os.Remove(tmpOut)
		var de *detailError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, fmt.Errorf("sort: rename output: %w", err)
	}
	committed = true
	if err := syncDir(filepath.Dir(out)); err != nil {
		// The output is complete under its name, but the rename may not
		// survive a crash.
		return nil, fmt.Errorf("sort: %s is complete, but syncing its directory failed (the rename may not be durable): %w", out, err)
	}
	j.ph.stop()
	j.rep.fill(j.ph, time.Since(t0))
	return j.rep, nil
}

func randSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e2 := d.Close(); err == nil {
		err = e2
	}
	return err
}

// checkPaths refuses an output that is the input (also through a link),
// a directory, and an existing output without overwrite.
func checkPaths(in, out string, overwrite bool) error {
	if in == "" || out == "" {
		return optionError("input and output paths are required")
	}
	ai, err1 := filepath.Abs(in)
	ao, err2 := filepath.Abs(out)
	if err1 == nil && err2 == nil && ai == ao {
		return &detailError{ErrSamePath, fmt.Sprintf("sort: output %s is the input", out)}
	}
	si, err := os.Stat(in)
	if err != nil {
		return &fileError{in, pathCause(err)}
	}
	if si.IsDir() {
		return optionError("input %s is a directory", in)
	}
	so, err := os.Stat(out)
	switch {
	case err == nil:
		if os.SameFile(si, so) {
			return &detailError{ErrSamePath, fmt.Sprintf("sort: output %s is the input %s (the same file)", out, in)}
		}
		if so.IsDir() {
			return optionError("output %s is a directory; give a file name", out)
		}
		if !so.Mode().IsRegular() {
			return optionError("output %s exists and is not a regular file", out)
		}
		if !overwrite {
			return &detailError{ErrExists, fmt.Sprintf("sort: output %s exists (use -f to replace it)", out)}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sort: output: %w", err)
	}
	if st, err := os.Stat(filepath.Dir(ao)); err != nil || !st.IsDir() {
		return optionError("output directory %s does not exist", filepath.Dir(ao))
	}
	return nil
}

// checkInput validates the input's size or KLV framing and counts records.
func (j *job) checkInput() error {
	f := j.s.o.Format
	if j.size == 0 {
		return fmt.Errorf("%w: %s has no records", ErrEmpty, j.in.path)
	}
	j.l = newLayout(f.KeySize, j.s.o.PointerSize, f.KLV)
	j.s.indexer = indexer{l: j.l, readers: j.s.pools.Readers, sorters: j.s.pools.Sorters, ph: j.ph,
		hist: j.s.indexer.hist, generic: j.s.indexer.generic}
	if !f.KLV {
		j.rs = f.RecordSize()
		if j.size%int64(j.rs) != 0 {
			return fmt.Errorf("%w: %s is %d bytes, not a multiple of the %d-byte record (%d whole records and %d bytes left)",
				ErrBadFormat, j.in.path, j.size, j.rs, j.size/int64(j.rs), j.size%int64(j.rs))
		}
		j.n = j.size / int64(j.rs)
		if uint64(j.n-1) > j.l.maxPtr() {
			return optionError("%d records need pointers of more than %d bytes (use 8-byte pointers, -ptr 8)", j.n, j.l.p)
		}
		return nil
	}
	if uint64(j.size-1) > j.l.maxPtr() {
		return optionError("a %d-byte KLV file needs pointers of more than %d bytes (use 8-byte pointers, -ptr 8)", j.size, j.l.p)
	}
	err := ScanKLV(j.src, f.KeySize, func(r KLVRecord) error {
		j.n++
		j.klvMax = max(j.klvMax, r.Size(f.KeySize))
		return nil
	})
	return inFile(j.in.path, err)
}

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
			be.ram = physicalMemory()
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
// bytes. It changes nothing in j.
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
	b := budget{fixed: fixed}
	switch mode {
	case OnePass:
		if onePassNeed > avail {
			e := budgetf("OnePass needs %d bytes of IndexMap and %d of write buffer and gather scratch; the budget leaves %d",
				idxBytes, onePassNeed-idxBytes, avail)
			e.alt = "use mergepass, or "
			return "", b, e
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
	case MergePass:
		b.runN = min(avail/ew, j.n, 1<<32-1)
		if j.s.runCap > 0 {
			b.runN = min(b.runN, j.s.runCap)
		}
		b.runs = int((j.n + b.runN - 1) / b.runN)
		k := int64(b.runs)
		minShareB := max(int64(minShare), ew)
		if k*(minShareB+slack) > avail/2 {
			return "", b, budgetf("%d runs of %d entries need a %d-byte merge buffer each; the budget leaves %d in all",
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
			return "", b, budgetf("no room for merged entries beside %d run shares", b.runs)
		}
		b.wb = b.pendCap * per
		b.ord = (b.pendCap + 2) * ow
		merge := 2*b.pendCap*ew + k*(b.shareN*ew+slack) + nw*b.wb + b.ord*8 + 4*slack
		b.main = max(b.runN*ew, merge)
	case EMS:
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
			return "", b, budgetf("%d bytes leave no EMS run buffer beside the write buffers (%d)", mem, b.wbArea)
		}
		if j.rs > 0 {
			b.runN = min(room/(int64(j.rs)+ew), j.n, 1<<32-1)
			if j.s.runCap > 0 {
				b.runN = min(b.runN, j.s.runCap)
			}
			if b.runN < 1 {
				return "", b, budgetf("no record fits the EMS run buffer")
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
				return "", b, budgetf("the EMS run buffer (%d bytes) cannot hold the largest record (%d bytes)",
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
			return "", b, budgetf("%d EMS runs need %d bytes of merge buffer each; the budget leaves %d in all",
				b.runs, need, b.main)
		}
	}
	return mode, b, nil
}

// detailError is an error with its own message that still matches a
// package sentinel with errors.Is.
type detailError struct {
	sentinel error
	msg      string
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.sentinel }

// optionError is an ErrInvalid error with a message of its own.
func optionError(format string, a ...any) error {
	return &detailError{ErrInvalid, "sort: " + fmt.Sprintf(format, a...)}
}
