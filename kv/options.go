package kv

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/braid-pm/braid/persist"
	pmdevice "github.com/braid-pm/braid/persist/device"
)

// Defaults and limits of Options.
const (
	DefaultSegmentSize = 64 << 20 // bytes of one log segment
	DefaultDeviceSize  = 1 << 30  // the most bytes of segments per device
	DefaultQueueDepth  = 1024     // requests queued per worker
	DefaultBatchBytes  = 32 << 10 // a worker's batch closes at this many log bytes
	DefaultMaxKey      = 1024
	DefaultMaxValue    = 1 << 20
	DefaultGCThreshold = 0.5 // background cleaning starts when a device's free segments fall below this fraction
	DefaultShards      = 64
	DefaultFullWait    = 10 * time.Second // a write that finds no free segment waits this long for the cleaner at most

	// MinSegmentSize is the smallest segment: a header line, a 256-byte
	// media unit and room for a few entries.
	MinSegmentSize = 4096
	// MaxSegmentSize bounds a segment: offsets in metadata entries are 32
	// bits.
	MaxSegmentSize = 1 << 31
	// MaxKeyLimit is the largest MaxKey (16-bit key lengths on media).
	MaxKeyLimit = 1<<16 - 1
	// maxExpectedKeys bounds Options.ExpectedKeys (the shards' DRAM).
	maxExpectedKeys = 1 << 31
	// MinBatchBytes is the smallest batch threshold: one media unit.
	MinBatchBytes = 256
)

// Options configure Open. A nil *Options is not enough: Devices and
// CheckpointDir are required. Zero fields take the defaults above.
type Options struct {
	// Devices lists one directory per PMem device (each its own DAX file
	// system on real PMem; on a machine without PMem, directories under
	// /dev/shm). Each holds that device's pre-allocated segment files and
	// its lock file. The order matters: a store is reopened with the same
	// list.
	Devices []string
	// CheckpointDir is "the disk": checkpoints of the index are written
	// there (temp file, fsync, rename). It must not be one of Devices.
	CheckpointDir string
	// WorkersPerDevice is the number of dedicated workers per device, each
	// the sole owner of one data log and one metadata log. 0 takes the
	// device profile's write knee (Profile.WriteThreads), else
	// min(4, GOMAXPROCS). A store may be reopened with another number:
	// the logs of workers it no longer runs are kept at their ends (read,
	// cleaned by GC, continued if it runs them again).
	WorkersPerDevice int
	// QueueDepth bounds each worker's request queue (admission control: a
	// full queue blocks the caller instead of growing latency without
	// bound). 0 means DefaultQueueDepth.
	QueueDepth int
	// BatchBytes is the batch threshold: a worker stops collecting queued
	// requests into one batch (one fence) once it holds this many log
	// bytes. 0 means DefaultBatchBytes; at least MinBatchBytes.
	BatchBytes int
	// BatchWait, when > 0, lets a worker whose batch is below BatchBytes
	// wait up to this long for more requests before it writes (the
	// paper's "wait for a few requests under low load"). 0: write what is
	// queued at once (batches still form under load).
	BatchWait time.Duration
	// NoBatching writes and fences every request on its own (one fence
	// per put), for the "batching off" comparison.
	NoBatching bool
	// SegmentSize is the bytes of one data or metadata log segment (a
	// multiple of 4096). 0 means DefaultSegmentSize.
	SegmentSize int64
	// DeviceSize is the most bytes of segments a device may have (a
	// limit: segment files are added, sparse, as data arrives; grow.go),
	// a multiple of SegmentSize holding at least MinSegments(workers)
	// segments: two per worker, the free segments kept back for deletes
	// and the cleaner, and one to fill past them. The background cleaner
	// keeps GCThreshold of it free. 0 means DefaultDeviceSize (or the
	// segments already there when reopening, if more).
	DeviceSize int64
	// OrderedIndex keeps an ordered index (a B-tree) beside the hash
	// index, so that Scan works. It costs DRAM and put throughput.
	OrderedIndex bool
	// MergeLogs sends index updates through per-worker merge logs (with
	// bloom filters) that a background merger applies, as the paper does,
	// instead of updating the sharded index in the worker after each
	// batch. Direct updates are the default: the README has the figures.
	MergeLogs bool
	// DirectIndex updates the sharded index directly in the workers (the
	// default); it wins over MergeLogs.
	DirectIndex bool
	// DedicatedWorkers runs each worker as a goroutine of its own that
	// takes the requests from its queue and writes them (SKYE's design: a
	// put costs two goroutine hand-offs, client -> worker -> client).
	// Without it (the default) the clients combine: one whose worker's
	// writer slot is free writes what is queued itself, one fence per
	// batch, and the others wait (the README measures both). Either way a
	// worker is the sole writer of its logs, and the serials come from
	// the router. BatchWait applies to dedicated workers only.
	DedicatedWorkers bool
	// ExpectedKeys, when > 0, sizes the index's hash shards at Open for
	// this many keys (a load whose size is known: pmkv bench), so that
	// the puts of the load never grow a shard (a growth rehashes the
	// shard under its lock). The shards still grow past it.
	ExpectedKeys int
	// WorkerReads sends every read (Get, GetWithToken, Scan) to the
	// worker that owns the record's data segment, SKYE's read path,
	// instead of reading the record in the calling goroutine (the
	// default: no goroutine hand-off per read; the README measures both).
	WorkerReads bool
	// ReadersPerDevice bounds the direct reads running at once on one
	// device (SKYE's R2: a device's random-read bandwidth peaks at a few
	// readers). 0 takes the device profile's read knee
	// (Profile.ReadThreads) when Profile (or Emulate) gives one, else no
	// bound; negative: no bound. It does not apply to WorkerReads (the
	// workers are the bound there).
	ReadersPerDevice int
	// MaxKey and MaxValue are the largest key and value accepted
	// (ErrTooLarge beyond). 0 means DefaultMaxKey and DefaultMaxValue.
	MaxKey, MaxValue int
	// Profile is the device profile (from pmbench); nil loads the file
	// named by BRAID_PROFILE if set, else uses the defaults.
	Profile *pmdevice.Profile
	// Shards is the number of index shards; 0 means DefaultShards.
	Shards int
	// GCThreshold is the fraction of a device's DeviceSize that must stay
	// free (free segments and those it may still grow by): below it the
	// background cleaner runs. 0 means
	// DefaultGCThreshold; negative turns the background cleaner off (GC
	// then runs only when called, at start-up and when a device is full).
	GCThreshold float64
	// FullWait bounds how long a write that finds no free segment waits
	// for the cleaner to free one before it returns ErrFull (it returns
	// ErrFull sooner when a cleaning pass frees nothing or live data fills
	// the devices; room.go). 0 means DefaultFullWait; negative: ErrFull at
	// once, no waiting.
	FullWait time.Duration
	// NoStartupGC skips the cleaning pass of Open.
	NoStartupGC bool
	// ReadOnly opens an existing store to read it and writes nothing: no
	// file is created, changed or removed, no start-up GC, no background
	// work, no checkpoint at Close (readonly.go). Writes, GC and
	// Checkpoint return ErrReadOnly. Read-only opens share a store; a
	// read-write open excludes them (ErrBusy).
	ReadOnly bool
	// CheckpointInterval, when > 0, checkpoints in the background at this
	// interval. Close always checkpoints.
	CheckpointInterval time.Duration
	// CheckpointBytes: once the logs have grown by this many bytes since
	// the last checkpoint (or by twice that checkpoint's size, when more),
	// a checkpoint is written in the background, so that an Open after a
	// crash replays a tail of about that much instead of the whole log
	// (a long load included). 0: DefaultCheckpointBytes; < 0: off.
	CheckpointBytes int64
	// PMem maps the segment files on the PMem path even when they are not
	// on DAX (persist.Options.ForcePMem; BRAID_FORCE_PMEM=1 does the same).
	// Without it a file on tmpfs or a disk is made durable with msync.
	PMem bool
	// Progress, when set, is told how far Open's recovery, GC passes and
	// checkpoints have come (progress.go): for a progress bar. It runs
	// in the goroutine doing the work and must not call the Store.
	Progress func(Progress)
	// Clock is the time deadlines are compared with (expire.go); nil:
	// time.Now. Tests inject a fake one. The store never acts on a time
	// earlier than one it has acted on since Open.
	Clock func() time.Time
	// ExpireInterval is how often the expirer drops versions whose
	// deadline passed (a read that finds one wakes it too). 0 means
	// DefaultExpireInterval; negative: only reads wake it.
	ExpireInterval time.Duration
	// Emulate runs each of Devices as an emulated device of its own with
	// this profile's model (persist's "Emulated devices"; emulate.go):
	// the segments' writes and the store's reads (gets, recovery) sleep
	// for the device time they cost. Nil: BRAID_DEVICE (a shipped profile
	// or a profile file), again one emulated device per directory; unset
	// or "dram": none. Without Profile, the emulated profile sizes the
	// workers (its write knee).
	Emulate *pmdevice.Profile

	// NUMA is how the store places its workers, emulated devices and
	// index shards on the machine's NUMA nodes (numa.go; the README's
	// "NUMA"): NUMAAuto (the zero value) where the topology has two or
	// more nodes, NUMAOff, or NUMARemote (workers on the wrong node, for
	// benchmarks).
	NUMA NUMAMode
	// DeviceNodes states the node of each of Devices where sysfs cannot
	// tell (a directory on tmpfs has no device); nil, or -1 in an entry,
	// asks sysfs. Given, it has one entry per device.
	DeviceNodes []int
	// SysfsRoot is where the topology is read (default /sys): tests build
	// a fake two-node machine there.
	SysfsRoot string
	// Faults are failures injected into every segment the store maps
	// (persist.Options.Faults: failed syncs, a full device, pages
	// poisoned as they are mapped), for tests; nil injects none.
	Faults *persist.Faults

	// media replaces the files (tests: simulated regions and an in-memory
	// checkpoint directory).
	media   media
	broken  broken   // tests: the deliberately broken variants
	ackGate *ackGate // tests: orders ackBeforeFence's early acknowledgment (worker.go)
	threads *threads // tests: how the store starts its goroutines (variant.go)
	// parkOnly makes a combining follower park at once instead of
	// polling first (combine.go; benchmarks compare the two).
	parkOnly bool
	// growHook, tests: called at each step of making or extending a
	// segment file ("created", "sized", "extend"); an error it returns
	// is that step's.
	growHook func(dir string, seg int, stage string) error
}

// config is Options with the defaults resolved.
type config struct {
	Options
	workers  int  // per device
	readers  int  // direct readers per device, 0: no bound
	segments int  // per device
	segSet   bool // SegmentSize was given
	place    *placement
	lazy     bool // read-only, the checkpoint probed, not loaded (reader.go)
}

// Validate checks the options without touching the devices.
func (o *Options) Validate() error {
	_, err := o.resolve()
	return err
}

func (o *Options) resolve() (*config, error) {
	if o == nil {
		return nil, fmt.Errorf("%w: nil Options (Devices and CheckpointDir are required)", ErrInvalid)
	}
	c := &config{Options: *o, segSet: o.SegmentSize != 0}
	c.DirectIndex = o.DirectIndex || !o.MergeLogs
	if err := c.resolveSizes(); err != nil {
		return nil, err
	}
	if c.media == nil {
		if len(c.Devices) == 0 {
			return nil, fmt.Errorf("%w: Options.Devices is empty: give at least one device directory", ErrInvalid)
		}
		if c.CheckpointDir == "" {
			return nil, fmt.Errorf("%w: Options.CheckpointDir is empty: give a directory for checkpoints", ErrInvalid)
		}
		seen := map[string]bool{}
		for _, d := range c.Devices {
			a, err := filepath.Abs(d)
			if err != nil || d == "" {
				return nil, fmt.Errorf("%w: device directory %q", ErrInvalid, d)
			}
			if seen[a] {
				return nil, fmt.Errorf("%w: device directory %s listed twice", ErrInvalid, d)
			}
			seen[a] = true
		}
		if a, _ := filepath.Abs(c.CheckpointDir); seen[a] {
			return nil, fmt.Errorf("%w: CheckpointDir %s is also a device", ErrInvalid, c.CheckpointDir)
		}
	}
	if err := c.resolveNUMA(); err != nil {
		return nil, err
	}
	if err := c.resolveEmulation(); err != nil {
		return nil, err
	}
	if c.Profile == nil {
		if path := os.Getenv("BRAID_PROFILE"); path != "" {
			p, err := pmdevice.LoadProfile(path)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			c.Profile = p
		}
	}
	c.workers = c.WorkersPerDevice
	if c.workers == 0 {
		c.workers = c.Profile.WriteThreads()
	}
	if c.workers < 1 || c.workers > 256 {
		return nil, fmt.Errorf("%w: WorkersPerDevice %d, want 1..256 (0: from the profile)", ErrInvalid, c.WorkersPerDevice)
	}
	switch r := c.ReadersPerDevice; {
	case r > 1<<16:
		return nil, fmt.Errorf("%w: ReadersPerDevice %d, want at most 65536 (0: from the profile, negative: no bound)", ErrInvalid, r)
	case r > 0:
		c.readers = r
	case r == 0 && c.Profile != nil && (c.Profile.RandRead.Knee > 0 || c.Profile.SeqRead.Knee > 0):
		c.readers = c.Profile.ReadThreads()
	}
	if c.DeviceSize != 0 {
		c.segments = int(c.DeviceSize / c.SegmentSize)
		if err := c.checkSegments(c.segments, fmt.Sprintf("DeviceSize %d holds", c.DeviceSize)); err != nil {
			return nil, err
		}
	}
	if c.FullWait == 0 {
		c.FullWait = DefaultFullWait
	}
	if c.ExpireInterval == 0 {
		c.ExpireInterval = DefaultExpireInterval
	}
	return c, nil
}

// MinSegments is the fewest segments a device needs for workers workers:
// a data and a metadata log each, the free segments kept back for
// deletes and the cleaner's moves (which puts may not take), and one to
// fill past them.
func MinSegments(workers int) int { return 2*workers + reservePut + 1 }

// checkSegments refuses a device of n segments too few for the workers.
func (c *config) checkSegments(n int, what string) error {
	if min := MinSegments(c.workers); n < min {
		return fmt.Errorf("%w: %s %d segments of %d bytes; %d workers need at least %d (a data and a metadata log each, %d kept free for deletes and the cleaner, one to fill): DeviceSize at least %d, or a smaller SegmentSize",
			ErrInvalid, what, n, c.SegmentSize, c.workers, min, reservePut, int64(min)*c.SegmentSize)
	}
	return nil
}

func (c *config) resolveSizes() error {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.SegmentSize == 0 {
		c.SegmentSize = DefaultSegmentSize
	}
	if c.SegmentSize < MinSegmentSize || c.SegmentSize > MaxSegmentSize || c.SegmentSize%4096 != 0 {
		return fmt.Errorf("%w: SegmentSize %d, want a multiple of 4096 in [%d, %d]", ErrInvalid, c.SegmentSize, MinSegmentSize, int64(MaxSegmentSize))
	}
	if c.DeviceSize < 0 || c.DeviceSize%c.SegmentSize != 0 {
		return fmt.Errorf("%w: DeviceSize %d is not a non-negative multiple of SegmentSize %d", ErrInvalid, c.DeviceSize, c.SegmentSize)
	}
	def(&c.QueueDepth, DefaultQueueDepth)
	def(&c.BatchBytes, DefaultBatchBytes)
	def(&c.MaxKey, min(DefaultMaxKey, int(c.SegmentSize/8)))
	def(&c.MaxValue, min(DefaultMaxValue, int(c.SegmentSize/4)-c.MaxKey))
	def(&c.Shards, DefaultShards)
	switch {
	case c.QueueDepth < 1:
		return fmt.Errorf("%w: QueueDepth %d, want at least 1", ErrInvalid, c.QueueDepth)
	case c.BatchBytes < MinBatchBytes:
		return fmt.Errorf("%w: BatchBytes %d, want at least %d", ErrInvalid, c.BatchBytes, MinBatchBytes)
	case c.BatchWait < 0:
		return fmt.Errorf("%w: BatchWait %v is negative", ErrInvalid, c.BatchWait)
	case c.MaxKey < 1 || c.MaxKey > MaxKeyLimit:
		return fmt.Errorf("%w: MaxKey %d, want 1..%d", ErrInvalid, c.MaxKey, MaxKeyLimit)
	case c.MaxValue < 0:
		return fmt.Errorf("%w: MaxValue %d is negative", ErrInvalid, c.MaxValue)
	case int64(c.MaxKey+c.MaxValue) > c.SegmentSize/4:
		return fmt.Errorf("%w: MaxKey+MaxValue %d must be at most a quarter of SegmentSize %d", ErrInvalid, c.MaxKey+c.MaxValue, c.SegmentSize)
	case c.Shards < 1 || c.Shards > 1<<16:
		return fmt.Errorf("%w: Shards %d, want 1..65536", ErrInvalid, c.Shards)
	case c.ExpectedKeys < 0 || int64(c.ExpectedKeys) > maxExpectedKeys:
		return fmt.Errorf("%w: ExpectedKeys %d, want 0..%d", ErrInvalid, c.ExpectedKeys, int64(maxExpectedKeys))
	case c.CheckpointInterval < 0:
		return fmt.Errorf("%w: CheckpointInterval %v is negative", ErrInvalid, c.CheckpointInterval)
	}
	if c.CheckpointBytes == 0 {
		c.CheckpointBytes = DefaultCheckpointBytes
	}
	if c.GCThreshold == 0 {
		c.GCThreshold = DefaultGCThreshold
	}
	if c.GCThreshold >= 1 {
		return fmt.Errorf("%w: GCThreshold %v, want below 1", ErrInvalid, c.GCThreshold)
	}
	return nil
}
