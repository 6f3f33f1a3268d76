package kv

import (
	"bytes"
	"fmt"
)

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	var st Stats
	if s == nil || s.idx == nil {
		return st
	}
	if !s.closed.Load() {
		s.drainMerge() // the live bytes count what the index knows
	}
	st.Workers = len(s.workers)
	st.NUMA = s.NUMA()
	for _, w := range s.workers {
		st.Puts += w.puts.Load()
		st.Gets += w.gets.Load()
		st.Deletes += w.dels.Load()
		st.Batches += w.batches.Load()
		st.Fences += w.fences.Load()
		st.AppendedBytes += w.appended.Load()
		st.MediaBytes += w.media.Load()
	}
	for i := range s.reads {
		st.Gets += s.reads[i].n.Load()
	}
	st.MediaBytes += s.stats.mediaBytes.Load()
	st.TokenHits, st.TokenMisses = s.stats.tokenHits.Load(), s.stats.tokenMisses.Load()
	st.GCPasses, st.GCMoved = s.stats.gcPasses.Load(), s.stats.gcMoved.Load()
	st.SegmentsFreed, st.Checkpoints = s.stats.segmentsFreed.Load(), s.stats.checkpoints.Load()
	st.RoomWaits = s.stats.roomWaits.Load()
	st.Expires, st.ExpiredKeys = int64(s.idx.ttlCount()), s.stats.expired.Load()
	st.MergePending = s.idx.pending()
	entries, tombs, keyB, dram := s.idx.counts()
	st.Keys, st.Tombstones = int64(entries-tombs), int64(tombs)
	st.ExtendWaits, st.GrowWaits, st.SegmentsAdded = s.grow.extendWaits.Load(), s.grow.growWaits.Load(), s.grow.grown.Load()
	for _, d := range s.devs {
		d.mu.Lock()
		ds := DeviceStats{Dir: d.dm.name(), Segments: len(d.segs), Limit: d.limit}
		for _, g := range d.segs {
			switch g.kind {
			case kindData:
				ds.Data++
				ds.LiveBytes += g.live.Load()
			case kindMeta:
				ds.Metadata++
			default:
				ds.Free++
				continue
			}
			ds.AllocBytes += int64(g.size)
		}
		segs := d.segs
		d.mu.Unlock()
		if u, ok := d.dm.(blockCounter); ok {
			ds.AllocBytes = u.blocks(segs)
		}
		st.LiveBytes += ds.LiveBytes
		st.AllocatedBytes += ds.AllocBytes
		st.Devices = append(st.Devices, ds)
	}
	if st.LiveBytes > 0 {
		st.SpaceAmplification = float64(st.AllocatedBytes) / float64(st.LiveBytes)
	}
	if n := st.Keys + st.Tombstones; n > 0 {
		// The shards' slots and key arenas (measured), and with
		// OrderedIndex a B-tree item per key: a string header, the
		// key's bytes and about 8 bytes of node (estimated).
		per := float64(dram) / float64(n)
		if s.idx.order != nil {
			per += 24 + float64(keyB)/float64(n)
		}
		st.DRAMPerKey = per
	}
	return st
}

// Recovery returns what Open found and did.
func (s *Store) Recovery() RecoveryReport {
	r := s.rep
	r.Devices = append([]DeviceRecovery(nil), r.Devices...)
	return r
}

// Check verifies every checksum of the logs and that the index agrees
// with them: every metadata entry of every metadata segment (its CRC and
// the bounds of its record), and every index entry against the record it
// points to (the key and the record's CRC). Superseded versions are not
// read: a torn batch's dropped entries may point to torn bytes. The first bad entry is named in
// an ErrCorrupt error. Operations wait while it runs.
func (s *Store) Check() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	s.drainMerge()
	for _, d := range s.devs {
		for _, g := range d.segs {
			if g.headerLost.Load() {
				return fmt.Errorf("%w: device %s segment %d: its header is zeros, but it was in use (RecoveryReport.ZeroedHeaders)", ErrCorrupt, d.dm.name(), g.idx)
			}
			if g.kind != kindMeta {
				continue
			}
			if err := g.r.Guard(func() error { return s.checkMeta(g) }); err != nil {
				return fmt.Errorf("kv: device %s metadata segment %d: %w", d.dm.name(), g.idx, err)
			}
		}
	}
	var err error
	s.idx.each(func(k []byte, l loc) {
		if err != nil {
			return
		}
		key, _, e := s.record(l)
		switch {
		case e != nil:
			err = fmt.Errorf("index entry of key %q: %w", k, e)
		case !bytes.Equal(key, k):
			err = fmt.Errorf("%w: index entry of key %q points to a record of key %q", ErrCorrupt, k, key)
		}
	})
	return err
}

// checkMeta checks every entry of metadata segment g up to its end.
func (s *Store) checkMeta(g *segment) error {
	var data *segment
	end := g.size
	if !g.sealed {
		end = int(g.tail.Load())
	}
	for off := bodyOff; off+entrySize <= end; off += entrySize {
		e, st := decodeEntry(g.mem[off:off+entrySize], g.epoch.Load())
		switch {
		case st == entryEnd && (g.sealed || g.poisoned.Load()): // (a poisoned one is taken as full)
			return nil
		case st == entryEnd:
			// The log this worker appends to goes on to its tail.
			return fmt.Errorf("%w: device %s metadata segment %d: zeros at offset %d, before the log's end at %d", ErrCorrupt, g.dev.dm.name(), g.idx, off, end)
		case st == entryBad:
			return fmt.Errorf("%w: device %s metadata segment %d: entry at offset %d fails its checksum", ErrCorrupt, g.dev.dm.name(), g.idx, off)
		case e.marker():
			data = s.dataSeg(g.dev.idx, int(e.off), e.serial)
			continue
		case data == nil:
			continue // its data segment was cleaned
		}
		n := e.klen + int(e.vlen)
		if int(e.off)+n > data.size || int(e.off) < bodyOff {
			return fmt.Errorf("%w: device %s metadata segment %d offset %d: record of %d bytes at %d lies outside its data segment", ErrCorrupt, g.dev.dm.name(), g.idx, off, n, e.off)
		}
	}
	return nil
}
