package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
)

// A checkpoint file (CheckpointDir/ckpt-<seq>.kcp) is, little-endian:
//
//	 0  the 64-byte pmheader line: magic "braidKCP", Size = chains,
//	    Stride = chainSize, Count = entries, Aux = store id
//	64  u64 seq, u64 max serial, u64 floor (every serial below it had
//	    completed), u64 last epoch
//	96  chains × 32 B: u16 dev, u16 owner, u32 metadata segment, u64 its
//	    epoch, u32 offset, u32 data segment, u64 its epoch
//	    entries: u16 key length, u16 dev, u32 value length | tombstone,
//	    u32 segment, u32 offset, u32 CRC, u64 epoch, u64 serial, key
//	end u32 CRC-32C of bytes 64..end
const (
	ckptFixed   = 32
	chainSize   = 40
	ckEntrySize = 36
	ckptPrefix  = "ckpt-"
	ckptSuffix  = ".kcp"
	// keepCheckpoints: the newest and the one before it, so that a
	// damaged newest one falls back to a complete older one.
	keepCheckpoints = 2
)

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

func encodeCheckpoint(c *checkpoint, storeID uint64) []byte {
	n := 0
	for _, r := range c.recs {
		n += ckEntrySize + len(r.key)
	}
	b := encodeCheckpointHead(c, len(c.recs), storeID, n)
	for _, r := range c.recs {
		b = appendCkEntry(b, r.key, r.l)
	}
	return encodeCheckpointEnd(b)
}

// encodeCheckpointHead starts a checkpoint of entries index entries (of
// entryBytes bytes): the header line, the fixed part and the chains.
func encodeCheckpointHead(c *checkpoint, entries int, storeID uint64, entryBytes int) []byte {
	n := pmheader.Size + ckptFixed + len(c.chains)*chainSize
	b := make([]byte, n, n+entryBytes+4)
	putCheckpointLine(b, len(c.chains), entries, storeID)
	p := b[pmheader.Size:]
	le := binary.LittleEndian
	le.PutUint64(p, c.seq)
	le.PutUint64(p[8:], c.maxSerial)
	le.PutUint64(p[16:], c.floor)
	le.PutUint64(p[24:], c.lastEpoch)
	p = p[ckptFixed:]
	for _, ch := range c.chains {
		le.PutUint16(p, uint16(ch.dev))
		le.PutUint16(p[2:], uint16(ch.owner))
		le.PutUint32(p[4:], uint32(ch.metaSeg))
		le.PutUint64(p[8:], ch.metaEpoch)
		le.PutUint32(p[16:], uint32(ch.off))
		le.PutUint32(p[20:], uint32(ch.dataSeg))
		le.PutUint64(p[24:], ch.dataEpoch)
		le.PutUint32(p[32:], uint32(ch.dataOff))
		p = p[chainSize:]
	}
	return b
}

// putCheckpointLine writes a checkpoint's header line.
func putCheckpointLine(b []byte, chains, entries int, storeID uint64) {
	f := pmheader.Fields{Size: uint32(chains), Stride: chainSize, Count: uint64(entries), Aux: storeID}
	pmheader.Encode(b, &f)
	binary.LittleEndian.PutUint64(b, ckptKind.Magic)
}

// appendCkEntry appends one index entry to a checkpoint.
func appendCkEntry(b, key []byte, l loc) []byte {
	le := binary.LittleEndian
	b = le.AppendUint16(b, l.klen)
	b = le.AppendUint16(b, l.dev)
	b = le.AppendUint32(b, l.vlen)
	b = le.AppendUint32(b, l.seg)
	b = le.AppendUint32(b, l.off)
	b = le.AppendUint32(b, l.crc)
	b = le.AppendUint64(b, l.epoch)
	b = le.AppendUint64(b, l.serial)
	return append(b, key...)
}

// encodeCheckpointEnd appends the CRC of everything after the header.
func encodeCheckpointEnd(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, persist.CRC32C(b[pmheader.Size:]))
}

// decodeCheckpoint checks and decodes a checkpoint file: another kind of
// file or another store's is ErrBadFormat, a damaged one ErrCorrupt.
func decodeCheckpoint(b []byte, storeID uint64) (*checkpoint, error) {
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
	c := &checkpoint{seq: le.Uint64(body), maxSerial: le.Uint64(body[8:]), floor: le.Uint64(body[16:]), lastEpoch: le.Uint64(body[24:])}
	p := body[ckptFixed:]
	for range f.Size {
		c.chains = append(c.chains, chainPos{
			dev: int(le.Uint16(p)), owner: int(le.Uint16(p[2:])), metaSeg: int(le.Uint32(p[4:])), metaEpoch: le.Uint64(p[8:]),
			off: int(le.Uint32(p[16:])), dataSeg: int(le.Uint32(p[20:])), dataEpoch: le.Uint64(p[24:]), dataOff: int(le.Uint32(p[32:])),
		})
		p = p[chainSize:]
	}
	c.recs = make([]krec, 0, f.Count)
	for i := range f.Count {
		if len(p) < ckEntrySize {
			return nil, fmt.Errorf("%w: checkpoint entry %d of %d is cut short", ErrCorrupt, i, f.Count)
		}
		l := loc{klen: le.Uint16(p), dev: le.Uint16(p[2:]), vlen: le.Uint32(p[4:]), seg: le.Uint32(p[8:]), off: le.Uint32(p[12:]),
			crc: le.Uint32(p[16:]), epoch: le.Uint64(p[20:]), serial: le.Uint64(p[28:])}
		if l.klen == 0 || len(p) < ckEntrySize+int(l.klen) || l.serial == 0 || l.serial > c.maxSerial {
			return nil, fmt.Errorf("%w: checkpoint entry %d of %d is malformed", ErrCorrupt, i, f.Count)
		}
		c.recs = append(c.recs, krec{key: p[ckEntrySize : ckEntrySize+int(l.klen) : ckEntrySize+int(l.klen)], l: l})
		p = p[ckEntrySize+int(l.klen):]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the checkpoint's last entry", ErrCorrupt, len(p))
	}
	return c, nil
}

func ckptName(seq uint64) string { return fmt.Sprintf("%s%016x%s", ckptPrefix, seq, ckptSuffix) }

// loadCheckpoint returns the newest checkpoint whose checks hold (nil:
// none), counting the damaged newer ones it skipped. A file of another
// kind or store under a checkpoint's name is ErrBadFormat.
func (s *Store) loadCheckpoint() (*checkpoint, error) {
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
	var found *checkpoint
	for i := len(cks) - 1; i >= 0; i-- {
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
		if err == nil && found == nil && s.validPositions(c) {
			found = c
			s.rep.Checkpoint = cks[i]
			s.rep.CheckpointKeys = int64(len(c.recs))
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
	entries, _, keyB, _ := s.idx.counts()
	b := encodeCheckpointHead(c, entries, s.storeID, entries*ckEntrySize+int(keyB))
	n := 0
	s.idx.each(func(k []byte, l loc) { b = appendCkEntry(b, k, l); n++ })
	if n != entries { // (nothing changes the index here; the line says what was written)
		putCheckpointLine(b, len(c.chains), n, s.storeID)
	}
	b = encodeCheckpointEnd(b)
	name := ckptName(c.seq)
	if err := s.ckdir.write(name, b); err != nil {
		return fullErr("write checkpoint "+name, err)
	}
	s.ckSeq = c.seq
	s.ckpts = append(s.ckpts, ckptInfo{name: name, seq: c.seq, floor: c.floor, chains: c.chains})
	for len(s.ckpts) > keepCheckpoints {
		_ = s.ckdir.remove(s.ckpts[0].name)
		s.ckpts = s.ckpts[1:]
	}
	s.stats.checkpoints.Add(1)
	return nil
}

// checkpointer checkpoints at Options.CheckpointInterval.
func (s *Store) checkpointer() {
	defer s.bg.Done()
	t := time.NewTicker(s.c.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_ = s.Checkpoint()
		}
	}
}
