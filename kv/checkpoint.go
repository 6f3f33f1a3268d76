package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// A checkpoint file (CheckpointDir/ckpt-<seq>.kcp) is, little-endian:
//
//	 0  the 64-byte pmheader line: magic "braidKCP", Flags =
//	    ckptFlagBuckets, Size = chains, Stride = chainSize, Count =
//	    entries, Aux = store id
//	64  u64 seq, u64 max serial, u64 floor (every serial below it had
//	    completed), u64 last epoch
//	96  chains × 40 B: u16 dev, u16 owner, u32 metadata segment, u64 its
//	    epoch, u32 offset, u32 data segment, u64 its epoch, u32 its offset
//	    u64 bucket bits B (bucketBits of the entry count)
//	    the directory, 2^B + 1 u64: bucket b's entries are bytes dir[b] to
//	    dir[b+1] of the entries (dir[0] = 0, dir[2^B] = their length)
//	    entries, grouped by bucket (the top B bits of the CRC-32C of the
//	    key): u16 key length, u16 dev, u32 value length | tombstone, u32
//	    segment, u32 offset, u32 CRC, u64 epoch, u64 serial, key
//	end u32 CRC-32C of bytes 64..end
//
// The directory lets a lookup read one bucket of a checkpoint instead of
// loading it (Reader, reader.go), and a load split the entries among
// goroutines by bucket. A checkpoint without the flag (written before the
// directory) has neither B nor the directory: it reads as one bucket.
const (
	ckptFixed   = 32
	chainSize   = 40
	ckEntrySize = 36
	ckptPrefix  = "ckpt-"
	ckptSuffix  = ".kcp"
	// keepCheckpoints: the newest and the one before it, so that a
	// damaged newest one falls back to a complete older one.
	keepCheckpoints = 2

	ckptFlagBuckets = 1  // pmheader flag: the file has bucket bits and a directory
	ckBucketLoad    = 32 // entries per bucket a checkpoint aims at
	maxBucketBits   = 26
)

// checkpoint is what a checkpoint says besides its entries; recs are
// the entries to encode (tests give them; Checkpoint walks the index).
type checkpoint struct {
	seq       uint64
	maxSerial uint64
	floor     uint64
	lastEpoch uint64
	chains    []chainPos
	recs      []krec
}

// ckptInfo is what the store remembers of a retained checkpoint.
type ckptInfo struct {
	name   string
	seq    uint64
	floor  uint64
	chains []chainPos
}

// bucketBits is the directory size of a checkpoint of n entries: the
// fewest bits that leave at most ckBucketLoad entries a bucket on
// average.
func bucketBits(n int) int {
	b := 0
	for b < maxBucketBits && n>>b > ckBucketLoad {
		b++
	}
	return b
}

// ckBucket is key's bucket in a directory of bits bits.
func ckBucket(key []byte, bits int) int {
	return int(uint64(persist.CRC32C(key)) >> (32 - bits))
}

// encodeCheckpoint encodes c with its recs (tests, the fuzzer).
func encodeCheckpoint(c *checkpoint, storeID uint64) []byte {
	b, err := encodeCheckpointWalk(c, storeID, len(c.recs), func(fn func([]byte, loc)) {
		for _, r := range c.recs {
			fn(r.key, r.l)
		}
	})
	if err != nil {
		panic(err) // (recs do not change between the walks)
	}
	return b
}

// encodeCheckpointWalk encodes c with the entries walk gives, entries of
// them: it walks them twice, once to size the buckets, once to place
// each entry in its bucket. The walks must give the same entries (the
// index does not change under a checkpoint: s.ops is held).
func encodeCheckpointWalk(c *checkpoint, storeID uint64, entries int, walk func(fn func(key []byte, l loc))) ([]byte, error) {
	bits := bucketBits(entries)
	nb := 1 << bits
	dir := make([]uint64, nb+1) // bucket b's bytes, then where b starts
	n := 0
	walk(func(k []byte, _ loc) { dir[ckBucket(k, bits)+1] += uint64(ckEntrySize + len(k)); n++ })
	if n != entries {
		return nil, fmt.Errorf("kv: checkpoint of %d entries found %d in the index", entries, n)
	}
	for i := 1; i <= nb; i++ {
		dir[i] += dir[i-1]
	}
	head := pmheader.Size + ckptFixed + len(c.chains)*chainSize + 8 + 8*(nb+1)
	b := make([]byte, head+int(dir[nb])+4)
	putCheckpointLine(b, len(c.chains), entries, storeID)
	p := b[pmheader.Size:]
	le := binary.LittleEndian
	le.PutUint64(p, c.seq)
	le.PutUint64(p[8:], c.maxSerial)
	le.PutUint64(p[16:], c.floor)
	le.PutUint64(p[24:], c.lastEpoch)
	p = p[ckptFixed:]
	for _, ch := range c.chains {
		putChain(p, ch)
		p = p[chainSize:]
	}
	le.PutUint64(p, uint64(bits))
	for i, o := range dir {
		le.PutUint64(p[8+8*i:], o)
	}
	ents := b[head : len(b)-4]
	cur := slices.Clone(dir[:nb])
	bad := false
	walk(func(k []byte, l loc) {
		bk := ckBucket(k, bits)
		if bad || cur[bk]+uint64(ckEntrySize+len(k)) > dir[bk+1] {
			bad = true
			return
		}
		putCkEntry(ents[cur[bk]:], k, l)
		cur[bk] += uint64(ckEntrySize + len(k))
	})
	if bad || !slices.Equal(cur, dir[1:]) {
		return nil, fmt.Errorf("kv: the index changed under a checkpoint")
	}
	le.PutUint32(b[len(b)-4:], persist.CRC32C(b[pmheader.Size:len(b)-4]))
	return b, nil
}

func putChain(p []byte, ch chainPos) {
	le := binary.LittleEndian
	le.PutUint16(p, uint16(ch.dev))
	le.PutUint16(p[2:], uint16(ch.owner))
	le.PutUint32(p[4:], uint32(ch.metaSeg))
	le.PutUint64(p[8:], ch.metaEpoch)
	le.PutUint32(p[16:], uint32(ch.off))
	le.PutUint32(p[20:], uint32(ch.dataSeg))
	le.PutUint64(p[24:], ch.dataEpoch)
	le.PutUint32(p[32:], uint32(ch.dataOff))
}

// putCheckpointLine writes a checkpoint's header line.
func putCheckpointLine(b []byte, chains, entries int, storeID uint64) {
	f := pmheader.Fields{Flags: ckptFlagBuckets, Size: uint32(chains), Stride: chainSize, Count: uint64(entries), Aux: storeID}
	pmheader.Encode(b, &f)
	binary.LittleEndian.PutUint64(b, ckptKind.Magic)
}

// putCkEntry writes one index entry of a checkpoint at b.
func putCkEntry(b, key []byte, l loc) {
	le := binary.LittleEndian
	le.PutUint16(b, l.klen)
	le.PutUint16(b[2:], l.dev)
	le.PutUint32(b[4:], l.vlen)
	le.PutUint32(b[8:], l.seg)
	le.PutUint32(b[12:], l.off)
	le.PutUint32(b[16:], l.crc)
	le.PutUint64(b[20:], l.epoch)
	le.PutUint64(b[28:], l.serial)
	copy(b[ckEntrySize:], key)
}

// nextCkEntry decodes the entry p starts with: its key (p's bytes), its
// location and the bytes after it; !ok when it is cut short or malformed.
func nextCkEntry(p []byte) (key []byte, l loc, rest []byte, ok bool) {
	if len(p) < ckEntrySize {
		return nil, loc{}, nil, false
	}
	le := binary.LittleEndian
	l = loc{klen: le.Uint16(p), dev: le.Uint16(p[2:]), vlen: le.Uint32(p[4:]), seg: le.Uint32(p[8:]), off: le.Uint32(p[12:]),
		crc: le.Uint32(p[16:]), epoch: le.Uint64(p[20:]), serial: le.Uint64(p[28:])}
	n := ckEntrySize + int(l.klen)
	if l.klen == 0 || len(p) < n || l.serial == 0 {
		return nil, loc{}, nil, false
	}
	return p[ckEntrySize:n:n], l, p[n:], true
}

// ckView is a checkpoint file checked whole (decodeCheckpoint): what it
// says besides its entries, decoded; the entries left in place, to be
// walked (each, partition) or probed (find).
type ckView struct {
	checkpoint
	count int
	bits  int
	dir   []byte // 2^bits + 1 u64
	ents  []byte
}

// span is where buckets lo..hi-1 lie in v.ents.
func (v *ckView) span(lo, hi int) []byte {
	le := binary.LittleEndian
	return v.ents[le.Uint64(v.dir[8*lo:]):le.Uint64(v.dir[8*hi:])]
}

// each calls fn with every entry, in file order.
func (v *ckView) each(fn func(key []byte, l loc)) {
	for p := v.ents; len(p) > 0; {
		k, l, rest, _ := nextCkEntry(p)
		fn(k, l)
		p = rest
	}
}

// decodeCheckpoint checks a checkpoint file whole — its checksum, its
// fields, its directory and every entry, each in its key's bucket — and
// decodes all but its entries: another kind of file or another store's
// is ErrBadFormat, a damaged one ErrCorrupt.
func decodeCheckpoint(b []byte, storeID uint64) (*ckView, error) {
	if len(b) < pmheader.Size+ckptFixed+4 {
		return nil, fmt.Errorf("%w: checkpoint of %d bytes, shorter than its fixed part (%d)", ErrCorrupt, len(b), pmheader.Size+ckptFixed+4)
	}
	f, err := ckptKind.Decode(b[:pmheader.Size])
	if errors.Is(err, errFreeSegment) {
		return nil, fmt.Errorf("%w: checkpoint header is zeroes", ErrCorrupt)
	}
	if err != nil {
		return nil, err
	}
	if f.Aux != storeID && storeID != 0 {
		return nil, fmt.Errorf("%w: checkpoint of store %016x, not %016x", ErrBadFormat, f.Aux, storeID)
	}
	body := b[pmheader.Size : len(b)-4]
	le := binary.LittleEndian
	if crc := le.Uint32(b[len(b)-4:]); crc != persist.CRC32C(body) {
		return nil, fmt.Errorf("%w: checkpoint checksum %#08x, its bytes give %#08x", ErrCorrupt, crc, persist.CRC32C(body))
	}
	if f.Stride != chainSize || uint64(f.Size) > uint64(len(body)-ckptFixed)/chainSize || f.Count > uint64(len(body))/ckEntrySize {
		return nil, fmt.Errorf("%w: checkpoint header says %d chains of %d bytes and %d entries in %d bytes", ErrCorrupt, f.Size, f.Stride, f.Count, len(body))
	}
	v := &ckView{checkpoint: checkpoint{seq: le.Uint64(body), maxSerial: le.Uint64(body[8:]), floor: le.Uint64(body[16:]), lastEpoch: le.Uint64(body[24:])}, count: int(f.Count)}
	p := body[ckptFixed:]
	for range f.Size {
		v.chains = append(v.chains, chainPos{
			dev: int(le.Uint16(p)), owner: int(le.Uint16(p[2:])), metaSeg: int(le.Uint32(p[4:])), metaEpoch: le.Uint64(p[8:]),
			off: int(le.Uint32(p[16:])), dataSeg: int(le.Uint32(p[20:])), dataEpoch: le.Uint64(p[24:]), dataOff: int(le.Uint32(p[32:])),
		})
		p = p[chainSize:]
	}
	if err := v.directory(p, f.Flags&ckptFlagBuckets != 0); err != nil {
		return nil, err
	}
	return v, v.check()
}

// directory reads the bucket bits and the directory that start p, when
// the file has them (buckets), else makes the one bucket of an older
// checkpoint; the entries are what follows.
func (v *ckView) directory(p []byte, buckets bool) error {
	le := binary.LittleEndian
	if !buckets {
		v.ents = p
		v.dir = le.AppendUint64(le.AppendUint64(nil, 0), uint64(len(p)))
		return nil
	}
	if len(p) < 8 {
		return fmt.Errorf("%w: checkpoint ends before its bucket bits", ErrCorrupt)
	}
	bits := le.Uint64(p)
	if bits != uint64(bucketBits(v.count)) {
		return fmt.Errorf("%w: checkpoint of %d entries says %d bucket bits, want %d", ErrCorrupt, v.count, bits, bucketBits(v.count))
	}
	v.bits = int(bits)
	n := 8 * ((1 << v.bits) + 1)
	if len(p)-8 < n {
		return fmt.Errorf("%w: checkpoint ends inside its directory of %d buckets", ErrCorrupt, 1<<v.bits)
	}
	v.dir, v.ents = p[8:8+n], p[8+n:]
	return nil
}

// check walks the directory and every entry: each bucket starts where
// the one before ends, the last ends with the entries, every entry is
// whole, well formed and in its key's bucket, and they are as many as the
// header says.
func (v *ckView) check() error {
	le := binary.LittleEndian
	nb := 1 << v.bits
	if le.Uint64(v.dir) != 0 || le.Uint64(v.dir[8*nb:]) != uint64(len(v.ents)) {
		return fmt.Errorf("%w: checkpoint directory spans %d..%d of %d entry bytes", ErrCorrupt, le.Uint64(v.dir), le.Uint64(v.dir[8*nb:]), len(v.ents))
	}
	n := 0
	for bk := range nb {
		lo, hi := le.Uint64(v.dir[8*bk:]), le.Uint64(v.dir[8*bk+8:])
		if hi < lo || hi > uint64(len(v.ents)) {
			return fmt.Errorf("%w: checkpoint bucket %d spans %d..%d of %d entry bytes", ErrCorrupt, bk, lo, hi, len(v.ents))
		}
		for p := v.ents[lo:hi]; len(p) > 0; n++ {
			k, l, rest, ok := nextCkEntry(p)
			if !ok || l.serial > v.maxSerial {
				return fmt.Errorf("%w: checkpoint entry %d of %d is malformed", ErrCorrupt, n, v.count)
			}
			if v.bits > 0 && ckBucket(k, v.bits) != bk {
				return fmt.Errorf("%w: checkpoint entry %d lies in bucket %d, its key's is %d", ErrCorrupt, n, bk, ckBucket(k, v.bits))
			}
			p = rest
		}
	}
	if n != v.count {
		return fmt.Errorf("%w: checkpoint holds %d entries, its header says %d", ErrCorrupt, n, v.count)
	}
	return nil
}

func ckptName(seq uint64) string { return fmt.Sprintf("%s%016x%s", ckptPrefix, seq, ckptSuffix) }

// loadCheckpoint returns the newest checkpoint whose checks hold (nil:
// none), counting the damaged newer ones it skipped. A file of another
// kind or store under a checkpoint's name is ErrBadFormat.
func (s *Store) loadCheckpoint() (*ckView, error) {
	names, err := s.ckdir.list()
	if err != nil {
		return nil, fmt.Errorf("kv: checkpoint directory: %w", err)
	}
	var cks []string
	for _, n := range names {
		if strings.HasPrefix(n, ckptPrefix) && strings.HasSuffix(n, ckptSuffix) {
			cks = append(cks, n)
		}
	}
	slices.Sort(cks)
	var found *ckView
	for i := len(cks) - 1; i >= 0; i-- {
		if found != nil && s.c.lazy {
			break // the older ones matter to GC only, which a lazy open never runs
		}
		b, err := s.ckdir.read(cks[i])
		if err != nil {
			return nil, fmt.Errorf("kv: read checkpoint %s: %w", cks[i], err)
		}
		c, err := decodeCheckpoint(b, s.storeID)
		if errors.Is(err, ErrBadFormat) {
			return nil, fmt.Errorf("kv: checkpoint %s: %w", cks[i], err)
		}
		if err == nil && s.rep.Created {
			return nil, fmt.Errorf("%w: checkpoint %s in CheckpointDir, but the devices hold no store", ErrBadFormat, cks[i])
		}
		if err == nil && found == nil && s.validPositions(&c.checkpoint) {
			found = c
			s.rep.Checkpoint = cks[i]
			s.rep.CheckpointKeys = int64(c.count)
		} else if found == nil {
			s.rep.SkippedCheckpts++
			continue
		}
		if c != nil && err == nil {
			s.ckpts = append([]ckptInfo{{name: cks[i], seq: c.seq, floor: c.floor, chains: c.chains}}, s.ckpts...)
		}
	}
	if found != nil {
		s.epoch.Store(max(s.epoch.Load(), found.lastEpoch))
		s.ckSeq = found.seq
	} else if s.needsCkpt {
		return nil, fmt.Errorf("%w: the store's logs were cleaned up to a checkpoint (kv.id says so), but CheckpointDir %s holds no usable one (%d found, %d unusable): it is missing or was replaced; restore it — without it the keys only the checkpoint holds would be lost", ErrCorrupt, s.c.CheckpointDir, len(cks), s.rep.SkippedCheckpts)
	}
	if len(s.ckpts) > keepCheckpoints {
		s.ckpts = s.ckpts[len(s.ckpts)-keepCheckpoints:]
	}
	return found, nil
}

// validPositions: every chain position of c names a metadata segment
// that is there with that epoch (else c is older than what was freed).
func (s *Store) validPositions(c *checkpoint) bool {
	for _, p := range c.chains {
		if p.dev >= len(s.devs) || p.metaSeg >= len(s.devs[p.dev].segs) {
			return false
		}
		g := s.devs[p.dev].segs[p.metaSeg]
		if g.blank && s.zeroedRef(p.dev, p.metaSeg) != nil {
			continue // its header was zeroed: the replay goes on after it (recover.go)
		}
		if g.kind != kindMeta || g.epoch.Load() != p.metaEpoch || p.off < bodyOff || p.off > g.size {
			return false
		}
	}
	return true
}

// Checkpoint writes the index and the log positions to CheckpointDir
// (temp file, fsync, rename); recovery then replays only what follows.
// Operations wait while the index is copied.
func (s *Store) Checkpoint() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if err := s.writable(); err != nil {
		return err
	}
	return s.checkpointLocked()
}

// checkpointLocked runs with s.ops held exclusively: every operation has
// completed, the workers are idle, their queues empty.
func (s *Store) checkpointLocked() error {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	s.drainMerge()
	c := &checkpoint{seq: s.ckSeq + 1, maxSerial: s.serial.Load(), lastEpoch: s.epoch.Load()}
	c.floor = c.maxSerial + 1
	for _, w := range s.workers {
		if w.m.g != nil {
			c.chains = append(c.chains, w.position())
		}
	}
	c.chains = append(c.chains, s.orphans...)
	entries, _, _, _ := s.idx.counts()
	b, err := encodeCheckpointWalk(c, s.storeID, entries, s.progressEach(entries))
	if err != nil {
		return err
	}
	name := ckptName(c.seq)
	if err := s.ckdir.write(name, b); err != nil {
		return fullErr("write checkpoint "+name, err)
	}
	s.ckSeq = c.seq
	s.ckLogAt.Store(s.appendedBytes())
	s.ckBytes.Store(int64(len(b)))
	s.ckpts = append(s.ckpts, ckptInfo{name: name, seq: c.seq, floor: c.floor, chains: c.chains})
	for len(s.ckpts) > keepCheckpoints {
		_ = s.ckdir.remove(s.ckpts[0].name)
		s.ckpts = s.ckpts[1:]
	}
	s.stats.checkpoints.Add(1)
	return nil
}

// DefaultCheckpointBytes is Options.CheckpointBytes's default: the log
// bytes after which a checkpoint is due.
const DefaultCheckpointBytes = 64 << 20

// testNoCheckpointPoll (tests) stops the checkpointer from acting on the
// logs' growth, so that a test decides when to checkpoint.
var testNoCheckpointPoll atomic.Bool

// checkpointPoll is how often the checkpointer looks at the logs' growth
// (Options.CheckpointBytes).
const checkpointPoll = 50 * time.Millisecond

// checkpointer checkpoints at Options.CheckpointInterval, and whenever
// the logs have grown enough since the last checkpoint (checkpointDue).
func (s *Store) checkpointer() {
	defer s.bg.Done()
	var every <-chan time.Time
	if s.c.CheckpointInterval > 0 {
		t := time.NewTicker(s.c.CheckpointInterval)
		defer t.Stop()
		every = t.C
	}
	var poll <-chan time.Time
	if s.c.CheckpointBytes > 0 {
		t := time.NewTicker(checkpointPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-s.stop:
			return
		case <-every:
			_ = s.Checkpoint()
		case <-poll:
			if !testNoCheckpointPoll.Load() && s.checkpointDue() {
				_ = s.Checkpoint()
			}
		}
	}
}

// appendedBytes is what the workers have appended to the logs since Open.
func (s *Store) appendedBytes() int64 {
	n := int64(0)
	for _, w := range s.workers {
		n += int64(w.appended.Load())
	}
	return n
}

// checkpointDue: the logs have grown by Options.CheckpointBytes since the
// last checkpoint (counting the tail Open replayed), and by twice that
// checkpoint's size — so that the checkpoints written during a long load
// grow geometrically: they cost a bounded share of the load, and an Open
// after a crash replays at most about twice the last one's worth.
func (s *Store) checkpointDue() bool {
	if s.c.CheckpointBytes <= 0 {
		return false
	}
	since := s.appendedBytes() - s.ckLogAt.Load()
	return since >= max(s.c.CheckpointBytes, 2*s.ckBytes.Load())
}
