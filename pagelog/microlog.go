package pagelog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// The micro log (van Renen et al., "Building blocks for persistent
// memory", §3.2.3) on walog: each lane has a
// PopLog in its log area, and a WriteLines with few dirty lines is
//
//  1. Append a redo entry (page, its current slot and version, the page's
//     new CRC word with payload CRCs, the dirty mask and the dirty lines)
//     to the lane's log: streaming stores, one fence. From here the write
//     is durable: recovery replays the entry.
//  2. Store the dirty lines (and the CRC word) in place, into the page's
//     current slot, with streaming stores and no fence. They reach the
//     media at the thread's next fence, or at the latest when the log is
//     emptied (settle).
//
// One barrier per write, against four for the paper's micro log, whose
// single-entry log had to be invalidated after every in-place write. Here
// entries pile up, and the log is emptied (walog's Reset, a few barriers)
// only when it is full (walog's Checkpoint, before it wraps) and before a
// copy-on-write write that could bring a version number back (below); the
// lines in place are durable by then (settle says why).
//
// Recovery replays, in log order, every entry whose slot and version are
// still the page's current ones, into that slot. Replay is idempotent, and
// entries of one version applied in order rebuild exactly what the page
// held: every in-place change to a version since the log was emptied is
// one of them (a copy-on-write write goes to another slot and makes a new
// version, whose entries, if any, come later). An entry whose page has
// since moved on is stale and skipped: its lines are in the newer version
// already, or overwritten by it. It may not come back to life. TwoWord
// versions only grow, but Packed ones count modulo 2^(47-pidBits), and the
// page's slot alternates, so after verMask+1 copy-on-write writes of the
// page an old entry would match again; a lane therefore empties its log
// before its (verMask+1)-th copy-on-write write since the first entry in
// the log (cowSince), which with the default pid bits never happens in
// practice, and with 2 version bits (tests) every fourth write.

// logOptions are the walog options of lane l's micro log.
func (s *Store) logOptions(l int) *walog.Options {
	ln := &s.lanes[l]
	return &walog.Options{
		Offset:   s.off + s.g.logOff + l*s.g.logStride,
		Size:     s.g.logStride,
		MaxEntry: s.g.logMax,
		// One entry per append: an interrupted append wrote at most one
		// entry, and Open can hold the log to that.
		MaxBatch: microFootprint(s.g.logMax) &^ 7,
		Chunk:    16 << 10,
		Wrap:     true,
		// A full log wraps: its entries' lines go to the media first.
		Checkpoint: func(*walog.Log) error { return s.settle(ln) },
	}
}

// logError turns an error of lane l's walog into one of this package: a
// damaged, missing or foreign micro log is ErrCorrupt (the superblock says
// a log is there), a read-only or closed region this package's ErrReadOnly
// or closed-region error. The text is this package's, with walog's detail
// after it (walog's own prefix and sentinel are not repeated); errors.Is
// and errors.As find walog's error too.
func logError(l int, err error) error {
	var kind error
	switch {
	case errors.Is(err, persist.ErrReadOnly):
		kind = ErrReadOnly
	case errors.Is(err, persist.ErrClosed):
		kind = errRegionClosed
	case errors.Is(err, walog.ErrCorrupt), errors.Is(err, walog.ErrNoLog), errors.Is(err, walog.ErrBadFormat), errors.Is(err, walog.ErrInvalid), errors.Is(err, walog.ErrTooSmall):
		kind = ErrCorrupt
	}
	return &laneError{kind: kind, lane: l, err: err}
}

// laneError is an error of a lane's micro log (see logError).
type laneError struct {
	kind error // this package's sentinel, or nil
	lane int
	err  error // walog's error
}

func (e *laneError) Error() string {
	head := "pagelog"
	if e.kind != nil {
		head = e.kind.Error()
	}
	return fmt.Sprintf("%s: micro log of lane %d: %s", head, e.lane, walogDetail(e.err))
}

func (e *laneError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.kind, e.err}
}

// walogDetail is the text of a walog error without walog's package prefix
// and sentinel ("walog: corrupt log: entry ..." is "entry ...").
func walogDetail(err error) string {
	msg := strings.TrimPrefix(err.Error(), "walog: ")
	for _, s := range []error{walog.ErrCorrupt, walog.ErrNoLog, walog.ErrBadFormat, walog.ErrInvalid, walog.ErrReadOnly, walog.ErrTooSmall} {
		if rest, ok := strings.CutPrefix(msg, strings.TrimPrefix(s.Error(), "walog: ")); ok && (rest == "" || rest[0] == ':' || rest[0] == ' ') {
			if rest = strings.TrimLeft(rest, ": "); rest != "" {
				return rest
			}
			return msg
		}
	}
	return msg
}

// writeMicro writes the dirty lines of page pid through lane ln's micro
// log. The caller holds the lane's lock.
func (s *Store) writeMicro(ln *lane, li int, pid uint64, page []byte, mask []uint64) error {
	var cw uint64
	if s.g.crc {
		cw = pageCRCWord(pid, page)
	}
	if ln.stage == nil {
		ln.stage = make([]byte, s.g.logMax)
	}
	e := s.pt[pid]
	ln.runs = appendRuns(ln.runs[:0], mask)
	n := s.g.encodeMicro(ln.stage, pid, uint64(e.slot), e.ver, cw, mask, ln.runs, page)
	if s.broken == brokenInPlaceFirst {
		if err := s.storeLines(ln, int(e.slot), page, cw); err != nil {
			return err
		}
	}
	if _, err := ln.log.Append(ln.stage[:n]); err != nil { // the barrier
		return logError(li, err)
	}
	if err := s.storeLines(ln, int(e.slot), page, cw); err != nil {
		return err
	}
	ln.logged++
	return nil
}

// storeLines stores the lines of page in ln.runs into slot sl, and
// with payload CRCs the CRC word cw into its header, with streaming
// stores and no fence. Streaming, because the lines of a page in place are
// most likely not in the cache: ordinary stores would first read every
// line from memory, and the lane's next lock operation would wait for
// those reads. The stores reach the media at the next fence of this
// thread, or at the latest when the log is emptied (settle).
func (s *Store) storeLines(ln *lane, sl int, page []byte, cw uint64) error {
	dst := s.payload(sl)
	for _, r := range ln.runs {
		if err := s.r.Copy(dst[r.lo*lineSize:r.hi*lineSize], page[r.lo*lineSize:r.hi*lineSize], persist.NonTemporal|persist.NoDrain); err != nil {
			return err
		}
	}
	if s.g.crc {
		binary.LittleEndian.PutUint64(ln.crcw[:], cw)
		h := s.hdr(sl)
		return s.r.Copy(h[s.g.crcOff:s.g.crcOff+8], ln.crcw[:], persist.NonTemporal|persist.NoDrain)
	}
	return nil
}

// settle makes the in-place lines of every entry in lane ln's log durable,
// so the entries may go: walog calls it before a full log wraps, emptyLog
// before a Reset. The lines were written with streaming stores, and each
// write that stored them released the lane's lock afterwards, a locked
// instruction, which on x86 drains the thread's write-combining buffers
// into the memory controller (the persistence domain), whichever thread
// it ran on; the fence here covers this thread's own, as the crash
// simulator requires. So no line has to be read back or flushed: settling
// costs one fence, not a flush per logged line (each a TLB miss on a page
// written at random).
func (s *Store) settle(ln *lane) error {
	if s.broken != brokenNoSettle {
		if err := s.r.Drain(); err != nil {
			return err
		}
	}
	ln.logged, ln.cowSince = 0, 0
	return nil
}

// emptyLog settles lane l's log and resets it.
func (s *Store) emptyLog(ln *lane, l int) error {
	if err := s.settle(ln); err != nil {
		return err
	}
	if err := ln.log.Reset(); err != nil {
		return logError(l, err)
	}
	return nil
}

// beforeCoW keeps stale micro-log entries of a Packed lane from matching
// again (see the comment at the top): it counts the lane's copy-on-write
// writes since its log holds entries and empties the log before the one
// that could wrap a version around.
func (s *Store) beforeCoW(ln *lane, l int) error {
	if s.g.layout != Packed || ln.logged == 0 {
		return nil
	}
	if ln.cowSince < s.g.verMask || s.broken == brokenNoWrapReset {
		ln.cowSince++
		return nil
	}
	return s.emptyLog(ln, l)
}

// pageCRCWord is the sealed payload CRC word of a version of page pid.
//
//go:noinline
func pageCRCWord(pid uint64, page []byte) uint64 { return seal(uint64(payloadCRC(pid, page))) }

// logged is the state of the pages that a lane's micro-log entries
// rebuild: for each page with entries for its current version, the page
// as the entries leave it, and its CRC word.
type logged struct {
	img  map[uint64][]byte
	crcw map[uint64]uint64
}

// readLog decodes every entry of lane l's log and applies those that match
// their page's current version to the images in lg. It returns the number
// of entries.
func (s *Store) readLog(l int, lg *logged, mask []uint64) (int, error) {
	n := 0
	it := s.lanes[l].log.Iter()
	for it.Next() {
		n++
		d, err := s.g.decodeMicro(l, it.Entry(), mask)
		if err != nil {
			return n, err
		}
		e := s.pt[d.pid]
		if (uint64(e.slot) != d.slot || e.ver != d.ver) && s.broken != brokenReplayStale {
			continue // stale: the page has a newer version
		}
		if s.slotPoisoned(int(e.slot)) {
			// The page is on poisoned media (media.go): its Read is
			// ErrMedia, its lines cannot be replayed, and a Write
			// relocates it, after which this entry is stale.
			continue
		}
		img := lg.img[d.pid]
		if img == nil {
			img = bytes.Clone(s.payload(int(e.slot)))
			lg.img[d.pid] = img
		}
		k := 0
		for lo, hi := nextRun(d.mask, 0); lo >= 0; lo, hi = nextRun(d.mask, hi) {
			k += copy(img[lo*lineSize:hi*lineSize], d.lines[k:])
		}
		lg.crcw[d.pid] = d.crcw
	}
	if err := it.Err(); err != nil {
		return n, logError(l, err)
	}
	return n, nil
}

// replayLogs opens every lane's micro log and replays it: every page whose
// bytes (or CRC word) differ from what the entries for its current version
// say gets them in place, durably; the others hold them already, on the
// media. The entries stay in the log, as after the writes that made them.
// Since recovery cannot know how many
// copy-on-write writes a Packed lane made since its entries, the lane
// empties its log before its next one. On a read-only region nothing is
// written: that is fine when every page already holds what its entries
// say, else ErrReadOnly.
func (s *Store) replayLogs() error {
	g := &s.g
	lg := logged{img: map[uint64][]byte{}, crcw: map[uint64]uint64{}}
	mask := make([]uint64, g.maskWords)
	for l := range s.lanes {
		ln := &s.lanes[l]
		wl, err := walog.Open(s.r, s.logOptions(l))
		if err != nil {
			return logError(l, err)
		}
		ln.log = wl
		if h := wl.Recovery().Header; h != "" {
			s.rec.Logs = append(s.rec.Logs, fmt.Sprintf("the micro log of lane %d (%s)", l, h))
		}
		n, err := s.readLog(l, &lg, mask)
		if err != nil {
			return err
		}
		ln.logged = n
		if n > 0 && g.layout == Packed {
			ln.cowSince = g.verMask
		}
	}
	wrote := false
	for pid, img := range lg.img {
		sl := int(s.pt[pid].slot)
		dst, h := s.payload(sl), s.hdr(sl)
		crcSame := !g.crc || persist.Load64(h[g.crcOff:]) == lg.crcw[pid]
		if bytes.Equal(dst, img) && crcSame {
			continue
		}
		if err := s.mustWrite("replay the micro log of page %d", pid); err != nil {
			return err
		}
		if err := s.r.Copy(dst, img, persist.NoDrain); err != nil {
			return err
		}
		if !crcSame {
			persist.Store64(h[g.crcOff:], lg.crcw[pid])
			if err := s.r.Flush(h[g.crcOff : g.crcOff+8]); err != nil {
				return err
			}
		}
		s.rec.Replayed++
		wrote = true
	}
	if wrote {
		return s.r.Drain()
	}
	return nil
}

// checkLogs verifies, for Check, that every lane's micro-log entries decode
// and that every page holds what the entries for its current version say.
func (s *Store) checkLogs() error {
	lg := logged{img: map[uint64][]byte{}, crcw: map[uint64]uint64{}}
	mask := make([]uint64, s.g.maskWords)
	for l := range s.lanes {
		if _, err := s.readLog(l, &lg, mask); err != nil {
			return err
		}
	}
	for pid, img := range lg.img {
		sl := int(s.pt[pid].slot)
		if !bytes.Equal(s.payload(sl), img) {
			return corrupt("page %d (slot %d) differs from its micro-log entries", pid, sl)
		}
		if s.g.crc && persist.Load64(s.hdr(sl)[s.g.crcOff:]) != lg.crcw[pid] {
			return corrupt("page %d (slot %d): payload CRC word differs from its micro-log entries", pid, sl)
		}
	}
	return nil
}
