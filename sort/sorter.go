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

// Defaults.
const (
	DefaultWriteBuffer = 64 << 20
	// MinMemBudget is the smallest memory budget accepted.
	MinMemBudget = 1 << 20
	// minShare is the smallest merge-buffer share of one run.
	minShare = 16 << 10
)

// Options configure a Sorter. The zero value sorts gensort records with
// Auto mode, a budget of half the physical memory, 5-byte pointers, pools
// from BRAID_PROFILE (or defaults) and interference-aware scheduling.
type Options struct {
	Format Format // zero value: Gensort
	Mode   Mode   // "": Auto
	// MemBudget bounds the DRAM buffers the sorter allocates (IndexMap, run
	// and merge buffers, write buffers, radix histograms). 0: half of the
	// physical memory. The process needs a few MiB more for itself.
	MemBudget int64
	// TempDir holds the run files; "": the output's directory.
	TempDir string
	// PointerSize is 5 (default, 2^40 records or bytes) or 8.
	PointerSize int
	// Pools overrides the thread-pool controller for each non-zero count.
	Pools Pools
	// Profile is the device profile the controller reads; nil: the file
	// named by BRAID_PROFILE, if set.
	Profile *persist.Profile
	// Overlap lets reads and writes run at the same time (double-buffered
	// writes), for comparison with the default interference-aware schedule.
	Overlap bool
	// WriteBuffer is the size of the write buffer (default 64 MiB, at most
	// an eighth of the budget; two with Overlap). A larger buffer gives the
	// value gather more locality.
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
		return fmt.Errorf("%w: mode %q, want auto, onepass, mergepass or ems", ErrOptions, o.Mode)
	}
	if o.PointerSize != 0 && o.PointerSize != 5 && o.PointerSize != 8 {
		return fmt.Errorf("%w: pointer size %d, want 5 or 8", ErrOptions, o.PointerSize)
	}
	if o.MemBudget != 0 && o.MemBudget < MinMemBudget {
		return fmt.Errorf("%w: memory budget %d bytes, at least %d needed", ErrBudget, o.MemBudget, MinMemBudget)
	}
	if o.WriteBuffer < 0 || (o.WriteBuffer > 0 && o.WriteBuffer < 4096) {
		return fmt.Errorf("%w: write buffer %d bytes, want at least 4096", ErrOptions, o.WriteBuffer)
	}
	if o.Pools.Readers < 0 || o.Pools.Writers < 0 || o.Pools.Sorters < 0 {
		return fmt.Errorf("%w: negative pool size", ErrOptions)
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
	wbufs   [2][]byte
	indexer indexer
	// hooks for fault-injection tests
	failAfterRuns int   // >0: fail when this many run files exist
	runCap        int64 // >0: at most this many entries per run (tests)
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
	} else {
		s.from = "profile " + prof.Device
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
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		return int64(si.Totalram) * int64(si.Unit) / 2
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
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE)
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
	freeBuffer(&s.wbufs[0])
	freeBuffer(&s.wbufs[1])
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
	written int64
	klvMax  int64 // largest KLV record
	plan0   budget
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
		return nil, fmt.Errorf("sort: input: %w", err)
	}
	defer j.in.close()
	j.src = j.in.bytes()
	j.size = int64(len(j.src))
	if err := j.checkInput(); err != nil {
		return nil, err
	}
	mode, err := j.plan()
	if err != nil {
		return nil, err
	}
	j.rep.Mode = string(mode)
	j.rep.Records, j.rep.Bytes = j.n, j.size

	if mode != OnePass {
		if err := j.setupTempDir(filepath.Dir(out)); err != nil {
			return nil, err
		}
	}
	defer j.removeTemps()

	tmpOut := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".pmsort-"+randSuffix()+".tmp")
	if j.out, err = createMapped(tmpOut, j.size, s.o.ForcePMem); err != nil {
		return nil, fmt.Errorf("sort: output: %w", err)
	}
	j.rep.Mapping = j.out.info()
	committed := false
	defer func() {
		if !committed {
			j.out.close()
			os.Remove(tmpOut)
		}
	}()
	j.ph.stop()

	switch mode {
	case OnePass:
		err = j.onePass()
	case MergePass:
		err = j.mergePass()
	case EMS:
		err = j.ems()
	}
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
	if err := os.Rename(tmpOut, out); err != nil {
		os.Remove(tmpOut)
		return nil, fmt.Errorf("sort: rename output: %w", err)
	}
	committed = true
	syncDir(filepath.Dir(out))
	j.ph.stop()
	j.rep.fill(j.ph, time.Since(t0))
	return j.rep, nil
}

func randSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// checkPaths refuses an output that is the input, and an existing output
// without overwrite.
func checkPaths(in, out string, overwrite bool) error {
	if in == "" || out == "" {
		return fmt.Errorf("%w: input and output paths are required", ErrOptions)
	}
	ai, err1 := filepath.Abs(in)
	ao, err2 := filepath.Abs(out)
	if err1 == nil && err2 == nil && ai == ao {
		return fmt.Errorf("%w: %s", ErrSamePath, out)
	}
	si, err := os.Stat(in)
	if err != nil {
		return fmt.Errorf("sort: input: %w", err)
	}
	so, err := os.Stat(out)
	switch {
	case err == nil:
		if os.SameFile(si, so) {
			return fmt.Errorf("%w: %s and %s are the same file", ErrSamePath, in, out)
		}
		if !overwrite {
			return fmt.Errorf("%w: %s (use -f to replace it)", ErrExists, out)
		}
		if !so.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrOptions, out)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sort: output: %w", err)
	}
	if st, err := os.Stat(filepath.Dir(ao)); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: output directory %s does not exist", ErrOptions, filepath.Dir(ao))
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
	j.s.indexer = indexer{l: j.l, readers: j.s.pools.Readers, sorters: j.s.pools.Sorters, ph: j.ph, hist: j.s.indexer.hist}
	if !f.KLV {
		j.rs = f.RecordSize()
		if j.size%int64(j.rs) != 0 {
			return fmt.Errorf("%w: %s is %d bytes, not a multiple of the %d-byte record (%d whole records and %d bytes left)",
				ErrBadFormat, j.in.path, j.size, j.rs, j.size/int64(j.rs), j.size%int64(j.rs))
		}
		j.n = j.size / int64(j.rs)
		if uint64(j.n-1) > j.l.maxPtr() {
			return fmt.Errorf("%w: %d records need pointers of more than %d bytes", ErrOptions, j.n, j.l.p)
		}
		return nil
	}
	if uint64(j.size-1) > j.l.maxPtr() {
		return fmt.Errorf("%w: a %d-byte KLV file needs pointers of more than %d bytes", ErrOptions, j.size, j.l.p)
	}
	err := ScanKLV(j.src, f.KeySize, func(r KLVRecord) error {
		j.n++
		j.klvMax = max(j.klvMax, r.Size(f.KeySize))
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", j.in.path, err)
	}
	return nil
}

// budget is the memory plan of one sort.
type budget struct {
	avail   int64 // for the main buffer
	wb      int64 // one write buffer
	runN    int64 // entries (WiscSort) or records (EMS) per run
	runB    int64 // EMS: run buffer bytes
	runs    int
	pendCap int64 // MergePass: entries gathered per merge round
}

// plan decides the mode and sizes the buffers.
func (j *job) plan() (Mode, error) {
	o := &j.s.o
	wb := o.WriteBuffer
	if o.WriteBuffer == DefaultWriteBuffer {
		wb = max(64<<10, min(wb, o.MemBudget/8))
	}
	if j.klvMax > wb && j.s.o.Mode == EMS {
		// An EMS merge copies whole records through the write buffer.
		wb = j.klvMax
	}
	nw := int64(1)
	if o.Overlap {
		nw = 2
	}
	// Radix histograms: one 2^16-entry array per reader partition (KLV
	// partitions are cut by count and by bytes, so up to twice as many).
	maxRun := min(j.n, o.MemBudget/int64(j.l.e))
	hist := int64(max(j.s.pools.Readers, 1)) * (1 << digitBits(maxRun, j.l.k)) * 4
	if j.rs == 0 {
		hist *= 2
	}
	avail := o.MemBudget - nw*wb - hist
	if avail < minShare {
		return "", fmt.Errorf("%w: %d bytes leave nothing beside the write buffers (%d) and histograms (%d)",
			ErrBudget, o.MemBudget, nw*wb, hist)
	}
	e := int64(j.l.e)
	idxBytes := j.n * e
	j.rep.IndexMapBytes = idxBytes
	mode := o.Mode
	if mode == Auto {
		mode = MergePass
		if idxBytes <= avail {
			mode = OnePass
		}
	}
	b := budget{avail: avail, wb: wb}
	switch mode {
	case OnePass:
		if idxBytes > avail {
			return "", fmt.Errorf("%w: OnePass needs %d bytes of IndexMap, the budget leaves %d (use mergepass or a larger -mem)",
				ErrBudget, idxBytes, avail)
		}
		b.runN, b.runs = j.n, 1
	case MergePass:
		b.runN = min(avail/e, j.n, 1<<32-1)
		if j.s.runCap > 0 {
			b.runN = min(b.runN, j.s.runCap)
		}
		b.runs = int((j.n + b.runN - 1) / b.runN)
		minRec := int64(j.rs)
		if j.rs == 0 {
			minRec = int64(j.l.k + klvHeader)
		}
		b.pendCap = max(1, wb/minRec)
		shares := avail - b.pendCap*e
		if shares/int64(b.runs) < max(minShare, e) {
			return "", fmt.Errorf("%w: %d runs of %d entries need a %d-byte merge buffer each; the budget leaves %d in all (raise -mem)",
				ErrBudget, b.runs, b.runN, minShare, shares)
		}
	case EMS:
		if j.rs > 0 {
			b.runN = min(avail/(int64(j.rs)+e), j.n, 1<<32-1)
			if j.s.runCap > 0 {
				b.runN = min(b.runN, j.s.runCap)
			}
			if b.runN < 1 {
				return "", fmt.Errorf("%w: no record fits the EMS run buffer", ErrBudget)
			}
			b.runB = b.runN * int64(j.rs)
			b.runs = int((j.n + b.runN - 1) / b.runN)
		} else {
			avg := max(1, j.size/j.n)
			b.runB = avail * avg / (avg + e)
			b.runN = min((avail-b.runB)/e, 1<<32-1)
			if j.s.runCap > 0 {
				b.runN = min(b.runN, j.s.runCap)
				b.runB = min(b.runB, max(j.klvMax, b.runN*avg*2))
			}
			if b.runB < j.klvMax || b.runN < 1 {
				return "", fmt.Errorf("%w: the EMS run buffer (%d bytes) cannot hold the largest record (%d bytes)",
					ErrBudget, b.runB, j.klvMax)
			}
			// Runs end on record boundaries, by bytes or by count.
			b.runs = int(max(j.size/max(1, b.runB-j.klvMax), j.n/b.runN)) + 1
		}
		need := max(int64(minShare), 2*j.klvMax, int64(j.rs))
		if avail/int64(b.runs) < need {
			return "", fmt.Errorf("%w: %d EMS runs need %d bytes of merge buffer each; the budget leaves %d in all (raise -mem)",
				ErrBudget, b.runs, need, avail)
		}
	}
	j.plan0 = b
	return mode, nil
}
