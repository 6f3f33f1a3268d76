package pagelog

import (
	"encoding/binary"
	"unsafe"

	"github.com/braid-pm/braid/persist"
)

// Test hooks: the deliberately broken orderings the crash tests show the
// simulator catching, and the decoders for the fuzz targets.

// Broken variants by name.
var brokenByName = map[string]broken{
	"pvn-before-pid":           brokenPVNFirst,
	"no-payload-fence":         brokenNoPayloadFence,
	"microlog-no-log-fence":    brokenNoLogFence,
	"microlog-no-invalidate":   brokenNoInvalidate,
	"checksum-no-backup-fence": brokenNoBackupFence,
	"late-crc":                 brokenLateCRC,
	"no-lane-affinity":         brokenNoLaneAffinity,
}

func brokenNamed(name string) broken {
	b, ok := brokenByName[name]
	if !ok {
		panic("pagelog: no broken variant " + name)
	}
	return b
}

// SetBroken switches s to the named broken ordering.
func SetBroken(s *Store, name string) { s.broken = brokenNamed(name) }

// OpenBroken is Open with the named broken variant active during recovery
// (and after: the store keeps it).
func OpenBroken(r *persist.Region, o *Options, name string) (*Store, error) {
	b := brokenNamed(name)
	s, err := open(r, o, b)
	if s != nil {
		s.broken = b
	}
	return s, err
}

// DecodeHeader exposes the slot-header decoder to the fuzz target.
func DecodeHeader(layout Layout, crc bool, pages, slots, pidBits, i int, h []byte) (used bool, pid, ver uint64, err error) {
	g, err := newGeometry(layout, MinPageSize, pages, slots, pidBits, crc)
	if err != nil {
		return false, 0, 0, err
	}
	if len(h) < g.hdrSize {
		return false, 0, 0, ErrInvalid
	}
	hd, err := g.decodeHeader(i, h[:g.hdrSize])
	return hd.used, hd.pid, hd.ver, err
}

// DecodeLog exposes the micro-log header decoder (and its CRC check) to
// the fuzz target: h is the header, data the log's data area.
func DecodeLog(crc bool, pageSize, pages, slots, l int, h, data []byte) (pid uint64, n int, ok bool, err error) {
	g, err := newGeometry(Packed, pageSize, pages, slots, pidBitsFor(pages), crc)
	if err != nil || l < 0 || l >= g.lanes {
		return 0, 0, false, ErrInvalid
	}
	if len(h) < g.logHdr || len(data) < g.pageSize {
		return 0, 0, false, ErrInvalid
	}
	m := make([]uint64, g.maskWords)
	pid, n, ok, err = g.decodeLog(l, h, m)
	if err == nil && ok && uint64(g.logCRC(h, data, n)) != binary.LittleEndian.Uint64(h[logCRCOff:]) {
		return pid, n, false, ErrCorrupt
	}
	return pid, n, ok, err
}

// DecodeSuper exposes the superblock decoder to the fuzz target.
func DecodeSuper(b []byte) error {
	if len(b) < superUsed {
		return ErrBadFormat
	}
	_, err := decodeSuper(b)
	return err
}

// Seal, Unseal and CRC16 expose the sealed-word code.
func Seal(d uint64) uint64           { return seal(d) }
func Unseal(w uint64) (uint64, bool) { return unseal(w) }
func CRC16(d uint64) uint16          { return crc16(d) }

// NextRun exposes the mask run iterator.
func NextRun(m []uint64, from int) (int, int) { return nextRun(m, from) }

// Geometry offsets for tests that corrupt a store on purpose.
func HeaderOffset(s *Store, slot int) int  { return s.g.hdrOff + slot*s.g.hdrSize }
func HeaderSize(s *Store) int              { return s.g.hdrSize }
func LogOffset(s *Store, lane int) int     { return s.g.logOff + lane*s.g.logStride }
func LogHeaderSize(s *Store) int           { return s.g.logHdr }
func PayloadOffset(s *Store, slot int) int { return s.g.slotOff + slot*s.g.pageSize }
func CurrentSlot(s *Store, pid int) int    { return s.slotOf(uint64(pid)) }
func Spare(s *Store, lane int) int         { return int(s.lanes[lane].spare) }

// CRCTail exposes the CRC continuation over pid and seq.
func CRCTail(c uint32, pid, seq uint64) uint32 { return crcTail(c, pid, seq) }

// SetNTHeader chooses how a Packed store writes its header word: a
// streaming store (the default) or Store64 + Persist.
func SetNTHeader(s *Store, nt bool) { s.ntHeader = nt }

// SetMaxVersion lowers the largest version a TwoWord page may reach, to
// reach ErrVersionExhausted in a test.
func SetMaxVersion(s *Store, v uint64) { s.maxVer = v }

// LaneSize is the size of a lane (one cache line).
const LaneSize = unsafe.Sizeof(lane{})
