package pagelog

import (
	"encoding/binary"

	"github.com/braid-pm/braid/persist"
)

// writeMicro propagates the dirty lines of page pid through lane li's micro
// log (ALGORITHMS.md 4.2, [VR] 3.2.3). The caller holds the lane's lock.
//
//  1. Gather the dirty lines, in line order, into the log's data area (one
//     streaming copy from a DRAM staging buffer: the log is written
//     sequentially); store the count, the page's new CRC word (payload
//     CRCs), the log's CRC32C and the dirty mask in the log header; flush;
//     fence.
//  2. Store the commit word sealed(used | pid); flush; fence. From here
//     recovery replays the log.
//  3. Copy the dirty lines in place into the page's current slot (and the
//     new CRC word into its header); fence.
//  4. Store the commit word 0; flush; fence. The log is empty again.
//
// A crash before barrier 2 leaves the page untouched and the log ignored; a
// crash after it replays the logged lines, which rewrites lines that may
// already be new: all-new either way. Barrier 4 must complete before the
// lane is reused: a valid log whose lines are overwritten by the next use,
// or whose page later moves to another slot, would be replayed wrongly.
//
// With payload CRCs the page's new CRC covers the whole page, so a micro
// log write computes the CRC32C of all of it, not only of its dirty lines.
func (s *Store) writeMicro(ln *lane, li int, pid uint64, page []byte, mask []uint64, n int) error {
	var cw uint64
	if s.g.crc {
		cw = pageCRCWord(pid, page)
	}
	lh, ld := s.logHeader(li), s.logData(li)
	if ln.stage == nil {
		ln.stage = make([]byte, s.g.pageSize)
	}
	k := 0
	for lo, hi := nextRun(mask, 0); lo >= 0; lo, hi = nextRun(mask, hi) {
		k += copy(ln.stage[k:], page[lo*lineSize:hi*lineSize])
	}
	if err := s.r.Copy(ld[:k], ln.stage[:k], persist.NoDrain); err != nil {
		return err
	}
	le := binary.LittleEndian
	le.PutUint64(lh[logCountOff:], uint64(n))
	le.PutUint64(lh[logPageCRCOff:], cw)
	for i, w := range mask {
		le.PutUint64(lh[logFixed+8*i:], w)
	}
	le.PutUint64(lh[logCRCOff:], uint64(s.g.logCRC(lh, ln.stage, n)))
	if err := s.r.Flush(lh[8 : logFixed+8*len(mask)]); err != nil {
		return err
	}
	if s.broken != brokenNoLogFence {
		if err := s.r.Drain(); err != nil { // barrier 1
			return err
		}
	}
	persist.Store64(lh, seal(usedBit|pid))
	if err := s.r.Persist(lh[:8]); err != nil { // barrier 2
		return err
	}
	dst := s.payload(int(s.pt[pid].slot))
	if s.g.crc {
		if err := s.storeCRCWord(int(s.pt[pid].slot), cw); err != nil {
			return err
		}
	}
	if err := s.applyLines(dst, page, mask, false); err != nil { // barrier 3
		return err
	}
	if s.broken == brokenNoInvalidate {
		return nil
	}
	persist.Store64(lh, 0)
	return s.r.Persist(lh[:8]) // barrier 4
}

// pageCRCWord is the sealed payload CRC word of a version of page pid.
//
//go:noinline
func pageCRCWord(pid uint64, page []byte) uint64 { return seal(uint64(payloadCRC(pid, page))) }

// storeCRCWord stores the payload CRC word cw into the header of slot sl
// and flushes it (the caller fences).
//
//go:noinline
func (s *Store) storeCRCWord(sl int, cw uint64) error {
	h := s.hdr(sl)
	persist.Store64(h[s.g.crcOff:], cw)
	return s.r.Flush(h[s.g.crcOff : s.g.crcOff+8])
}

// applyLines copies the lines marked in mask to dst and fences. src is a
// whole page, or with packed the log's data area, which holds the marked
// lines one after the other.
func (s *Store) applyLines(dst, src []byte, mask []uint64, packed bool) error {
	k := 0
	for lo, hi := nextRun(mask, 0); lo >= 0; lo, hi = nextRun(mask, hi) {
		from := src[lo*lineSize : hi*lineSize]
		if packed {
			from = src[k : k+(hi-lo)*lineSize]
			k += len(from)
		}
		if err := s.r.Copy(dst[lo*lineSize:hi*lineSize], from, persist.NoDrain); err != nil {
			return err
		}
	}
	return s.r.Drain()
}
