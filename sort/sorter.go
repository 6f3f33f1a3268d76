package sort

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
	"github.com/braid-pm/braid/sort/internal/sortio"
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
	MaxPool = sortio.MaxPool
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
	Profile *device.Profile
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
	// Device is the emulated device the input, run and output files are
	// mapped on (persist.Options.Device): their writes and the sorter's
	// reads (key gather, run loads, value gather) are charged to it. Nil:
	// BRAID_DEVICE's, or none.
	Device *device.Device
	// Faults are failures injected into the input, run and output files
	// as they are mapped and synced (persist.Options.Faults), for tests;
	// nil injects none.
	Faults *persist.Faults
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
		return sortio.OptionError("mode %q, want auto, onepass, mergepass or ems", o.Mode)
	}
	if o.PointerSize != 0 && o.PointerSize != 5 && o.PointerSize != 8 {
		return sortio.OptionError("pointer size %d, want 5 or 8", o.PointerSize)
	}
	if o.MemBudget != 0 && o.MemBudget < MinMemBudget {
		return fmt.Errorf("%w: memory budget %d bytes, at least %d needed", ErrBudget, o.MemBudget, MinMemBudget)
	}
	if ram := sortio.PhysicalMemory(); ram > 0 && o.MemBudget > ram {
		return sortio.OptionError("memory budget of %d bytes is more than the %d bytes of physical memory", o.MemBudget, ram)
	}
	if o.WriteBuffer < 0 || (o.WriteBuffer > 0 && o.WriteBuffer < 4096) {
		return sortio.OptionError("write buffer of %d bytes, want at least 4096", o.WriteBuffer)
	}
	for _, p := range []struct {
		name string
		n    int
	}{{"reader", o.Pools.Readers}, {"writer", o.Pools.Writers}, {"sorter", o.Pools.Sorters}} {
		if p.n < 0 || p.n > MaxPool {
			return sortio.OptionError("%s pool of %d goroutines, want 0 (automatic) to %d", p.name, p.n, MaxPool)
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
			p, err := device.LoadProfile(path)
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
	if ram := sortio.PhysicalMemory(); ram > 0 {
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
	sortio.AdviseHuge(m)
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
	in      *sortio.Mapped
	src     []byte
	out     *sortio.Mapped
	l       layout
	rs      int   // record size; 0 for KLV
	n       int64 // records
	size    int64 // bytes
	ph      *phases
	rep     *Report
	tmpDir  string
	temps   []string
	runs    []*sortio.Mapped // the run files, for locating a fault
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
	if j.in, err = sortio.OpenMappedOn(in, s.device(), s.o.Faults); err != nil {
		return nil, err
	}
	defer j.in.Close()
	mode, err := j.planInput(in)
	if err != nil {
		return nil, err
	}

	// A temp dir given is checked whatever the mode (a bad one is an
	// error even when this input needs no run files).
	if mode != OnePass || s.o.TempDir != "" {
		if err := j.setupTempDir(filepath.Dir(out)); err != nil {
			return nil, err
		}
	}
	defer j.removeTemps()

	tmpOut := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".pmsort-"+sortio.RandSuffix()+".tmp")
	if j.out, err = sortio.CreateMappedOn(tmpOut, "output "+out, j.size, s.o.ForcePMem, s.device(), s.o.Faults); err != nil {
		return nil, err
	}
	if j.out.R != nil {
		info := j.out.R.Info()
		info.Path = out // the name it will have
		j.rep.Mapping = info.String()
	}
	committed := false
	defer func() {
		if !committed {
			j.out.Close()
			os.Remove(tmpOut)
		}
	}()
	j.ph.stop()

	if err := j.guard(func() error { return j.sortBy(mode) }); err != nil {
		return nil, err
	}
	if j.written != j.size {
		panic(fmt.Sprintf("sort: wrote %d bytes of %d", j.written, j.size))
	}
	j.ph.start(phOther)
	committed = true // renamed into place, or removed by publish
	if err := j.publish(tmpOut, out); err != nil {
		return nil, err
	}
	j.ph.stop()
	j.rep.fill(j.ph, time.Since(t0))
	return j.rep, nil
}

// planInput checks the mapped input and plans the sort: its mode, with
// the records and bytes in the report.
func (j *job) planInput(in string) (Mode, error) {
	j.src = j.in.Bytes()
	j.size = int64(len(j.src))
	if j.s.afterMap != nil {
		j.s.afterMap(in)
	}
	// The input may shrink under the mapping from here on (another
	// program truncates it): every read of it, of the run files and of
	// the output runs under persist.Guard, and a fault is the error
	// "IN changed size during the sort".
	if err := j.guard(j.checkInput); err != nil {
		return "", err
	}
	mode, err := j.plan()
	if err != nil {
		return "", err
	}
	j.rep.Mode = string(mode)
	j.rep.Records, j.rep.Bytes = j.n, j.size
	return mode, nil
}

// sortBy runs the sort in mode.
func (j *job) sortBy(mode Mode) error {
	switch mode {
	case OnePass:
		return j.onePass()
	case MergePass:
		return j.mergePass()
	default:
		return j.ems()
	}
}

// publish closes the complete output, written as tmp, and gives it its
// final name out (without Overwrite, never over a file that appeared
// meanwhile); on an error before the rename it removes tmp.
func (j *job) publish(tmp, out string) error {
	// Every byte of the output was made durable by the Copy that wrote it
	// (streaming stores and a fence, or msync of its pages): no Sync here.
	if err := j.out.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sort: close output: %w", err)
	}
	if j.s.beforePublish != nil {
		j.s.beforePublish(out)
	}
	if err := publish(tmp, out, j.s.o.Overwrite); err != nil {
		os.Remove(tmp)
		var de *sortio.DetailError
		if errors.As(err, &de) {
			return err
		}
		return fmt.Errorf("sort: rename output: %w", err)
	}
	if err := sortio.SyncDir(filepath.Dir(out)); err != nil {
		// The output is complete under its name, but the rename may not
		// survive a crash.
		return fmt.Errorf("sort: %s is complete, but syncing its directory failed (the rename may not be durable): %w", out, err)
	}
	return nil
}

// checkPaths refuses an output that is the input (also through a link),
// a directory, and an existing output without overwrite.
func checkPaths(in, out string, overwrite bool) error {
	if in == "" || out == "" {
		return sortio.OptionError("input and output paths are required")
	}
	ai, err1 := filepath.Abs(in)
	ao, err2 := filepath.Abs(out)
	if err1 == nil && err2 == nil && ai == ao {
		return &sortio.DetailError{Sentinel: ErrSamePath, Msg: fmt.Sprintf("sort: output %s is the input", out)}
	}
	si, err := os.Stat(in)
	if err != nil {
		return &sortio.FileError{Path: in, Err: sortio.PathCause(err)}
	}
	if si.IsDir() {
		return sortio.OptionError("input %s is a directory", in)
	}
	so, err := os.Stat(out)
	switch {
	case err == nil:
		if os.SameFile(si, so) {
			return &sortio.DetailError{Sentinel: ErrSamePath, Msg: fmt.Sprintf("sort: output %s is the input %s (the same file)", out, in)}
		}
		if so.IsDir() {
			return sortio.OptionError("output %s is a directory; give a file name", out)
		}
		if !so.Mode().IsRegular() {
			return sortio.OptionError("output %s exists and is not a regular file", out)
		}
		if !overwrite {
			return &sortio.DetailError{Sentinel: ErrExists, Msg: fmt.Sprintf("sort: output %s exists (use -f to replace it)", out)}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sort: output: %w", err)
	}
	if st, err := os.Stat(filepath.Dir(ao)); err != nil || !st.IsDir() {
		return sortio.OptionError("output directory %s does not exist", filepath.Dir(ao))
	}
	return nil
}

// checkInput validates the input's size or KLV framing and counts records.
func (j *job) checkInput() error {
	f := j.s.o.Format
	if j.size == 0 {
		return fmt.Errorf("%w: %s has no records", ErrEmpty, j.in.Path)
	}
	j.l = newLayout(f.KeySize, j.s.o.PointerSize, f.KLV)
	j.s.indexer = indexer{l: j.l, readers: j.s.pools.Readers, sorters: j.s.pools.Sorters, ph: j.ph,
		hist: j.s.indexer.hist, generic: j.s.indexer.generic}
	if !f.KLV {
		j.rs = f.RecordSize()
		if j.size%int64(j.rs) != 0 {
			return fmt.Errorf("%w: %s is %d bytes, not a multiple of the %d-byte record (%d whole records and %d bytes left)",
				ErrBadFormat, j.in.Path, j.size, j.rs, j.size/int64(j.rs), j.size%int64(j.rs))
		}
		j.n = j.size / int64(j.rs)
		if uint64(j.n-1) > j.l.maxPtr() {
			return sortio.OptionError("%d records need pointers of more than %d bytes (use 8-byte pointers, -ptr 8)", j.n, j.l.p)
		}
		return nil
	}
	if uint64(j.size-1) > j.l.maxPtr() {
		return sortio.OptionError("a %d-byte KLV file needs pointers of more than %d bytes (use 8-byte pointers, -ptr 8)", j.size, j.l.p)
	}
	err := ScanKLV(j.src, f.KeySize, func(r KLVRecord) error {
		j.n++
		j.klvMax = max(j.klvMax, r.Size(f.KeySize))
		return nil
	})
	return sortio.InFile(j.in.Path, err)
}
