package kv

import "time"

// Stats is a snapshot of the store's counters (Store.Stats).
type Stats struct {
	// NUMA is the store's placement on NUMA nodes (Store.NUMA).
	NUMA NUMAReport

	Keys       int64 // live keys
	Tombstones int64 // deletes the index still remembers (dropped by GC)
	// LiveBytes is the bytes of the latest versions' records in the data
	// segments; AllocatedBytes the bytes the segment files take on their
	// file systems (allocated blocks: the logs, their metadata, the
	// windows ready ahead of them, free segments' leftovers);
	// SpaceAmplification their ratio (0 when nothing is live).
	LiveBytes, AllocatedBytes int64
	SpaceAmplification        float64
	Devices                   []DeviceStats
	Workers                   int // dedicated workers, all devices
	// DRAMPerKey estimates the index bytes per key (hash shards, merge
	// logs, ordered index).
	DRAMPerKey float64

	Puts, Gets, Deletes, Batches uint64 // operations completed
	TokenHits, TokenMisses       uint64 // GetWithToken: fast path taken / fell back
	Fences                       uint64 // fences the workers issued
	AppendedBytes                uint64 // log bytes appended (data + metadata)
	MediaBytes                   uint64 // bytes streamed to media (appends, re-emitted partial units, headers, the zeroing of reused metadata segments)
	MergePending                 int    // index updates waiting in merge logs
	GCPasses, GCMoved            uint64 // cleaning passes, entries moved
	SegmentsFreed                uint64
	// RoomWaits counts the writes that found no free segment and waited
	// for the cleaner (each once, however long it waited).
	RoomWaits uint64
	// ExtendWaits counts the log extensions a writer made itself because
	// the background had not made them ahead; GrowWaits the writes that
	// found no free segment while their device could still grow and
	// waited for a new segment file; SegmentsAdded the segment files
	// created since Open after the first ones (grow.go).
	ExtendWaits, GrowWaits, SegmentsAdded uint64
	Checkpoints                           uint64
	// Expires is the keys with a deadline (expired ones not yet dropped
	// included: Redis's keyspace "expires="); ExpiredKeys the versions
	// dropped because their deadline passed since Open (Redis's
	// "expired_keys").
	Expires     int64
	ExpiredKeys uint64
}

// DeviceStats describes one device.
type DeviceStats struct {
	Dir                  string
	Segments             int // segment files
	Limit                int // the most segment files it may have (DeviceSize)
	Data, Metadata, Free int // segments in each role
	// LiveBytes: the latest versions' records; AllocBytes: the blocks
	// of the segment files.
	LiveBytes, AllocBytes int64
}

// RecoveryReport says what Open found and did (Store.Recovery).
type RecoveryReport struct {
	Created         bool   // the devices were empty: a new store
	Checkpoint      string // the checkpoint loaded ("" none)
	CheckpointKeys  int64  // index entries it held
	SkippedCheckpts int    // newer checkpoints that failed their checks
	BytesScanned    int64  // metadata log bytes parsed
	ValueBytes      int64  // data bytes read to verify values
	Entries         int64  // metadata entries replayed
	Keys            int64  // live keys after recovery
	Torn            int    // logs whose tail was torn (and zeroed)
	TornEntries     int    // entries dropped at torn tails
	CorruptValues   int    // entries dropped: value failed its checksum
	Stale           int    // entries of freed segments skipped
	// Poisoned media (media.go): segments with unreadable ranges (never
	// reused), those whose header is unreadable (their role lost), and
	// the metadata entries skipped because they or their value lie in an
	// unreadable range (at most: the slots of a poisoned metadata range
	// past its log's end count too).
	PoisonedSegments, LostSegments int
	MediaLost                      int
	// ZeroedHeaders is the segments found with an all-zero header line
	// though they were in use (their body holds data, or a checkpoint or
	// marker names them): never a legitimate free (a freed segment keeps
	// its epoch). They are kept out of every role, like a lost one, and
	// the index keeps the entries naming them (DamagedKeys of them), so
	// that those keys read ErrCorrupt and Check reports them.
	// DataPastEnd is the logs whose data segment holds bytes after the
	// last record their metadata log commits (in the unit of its end,
	// which every fenced append leaves zeros after): a torn batch's
	// records after a crash, or records whose entries damage wiped out.
	DataPastEnd    int
	ZeroedHeaders  int
	DamagedKeys    int64
	MaxSerial      uint64 // highest serial seen; the counter restarts above it
	Devices        []DeviceRecovery
	CheckpointTime time.Duration // load the checkpoint
	ReadTime       time.Duration // map and scan the segments' headers
	ParseTime      time.Duration // parse and verify the metadata logs (parallel)
	IndexTime      time.Duration // build the index
	Total          time.Duration
	GBs            float64 // (BytesScanned+ValueBytes) / Total
	KeysPerSec     float64 // Keys / Total
	GC             GCReport
}

// DeviceRecovery is the part of a recovery on one device.
type DeviceRecovery struct {
	Dir          string
	BytesScanned int64
	Entries      int64
	Torn         int
}

// GCReport describes one cleaning pass (Store.GC).
type GCReport struct {
	Candidates        int   // sealed data segments considered
	Cleaned           int   // segments cleaned
	Moved             int64 // live entries moved
	MovedBytes        int64
	TombstonesDropped int64
	SegmentsFreed     int // data and metadata segments returned to the pools
	// Quarantined is the victims kept because a live record of theirs
	// failed its check (a damaged value or key, or poison): their other
	// entries were moved, the damaged keys read ErrCorrupt (or ErrMedia),
	// and no later pass picks them.
	Quarantined int
	Elapsed     time.Duration
}
